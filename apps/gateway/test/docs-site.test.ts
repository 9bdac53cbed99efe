import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docFiles, ROOT } from './docs-blocks.ts';

/** A page's URL on the site: docs/a/b.md → /a/b/, docs/index.md → /. */
function pageUrl(file: string): string {
  const path = file.replace(/^docs\//, '').replace(/\.md$/, '');
  return path === 'index' ? '/' : `/${path}/`;
}

describe('npm run docs', () => {
  let child: ChildProcess;
  let base: string;
  let out = '';

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn('npm', ['run', 'docs'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DOCS_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout?.on('data', (chunk) => (out += String(chunk)));
    child.stderr?.on('data', (chunk) => (out += String(chunk)));
    const deadline = Date.now() + 60_000;
    while (!out.includes('Calgate documentation on')) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`npm run docs did not come up:\n${out}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 90_000);
  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  });

  it('serves the home page as HTML on the loopback port it was given', async () => {
    expect(out).toContain(`Calgate documentation on ${base}/`);
    const home = await fetch(`${base}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    const html = await home.text();
    expect(html).toContain('<h1 id="calgate-documentation">Calgate documentation</h1>');
    expect(html).toContain('<title>Calgate documentation · Calgate</title>');
    expect(html).toContain('<a href="/getting-started/">Getting started</a>');
    // Offline: nothing on the page comes from another host.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/);
  });

  it('serves every page of docs/, and every link between pages lands on a page and a heading it has', async () => {
    // DEVELOPERS.md is at the repository's root; the site serves it as /developers/.
    const pages = [...docFiles().filter((file) => file.startsWith('docs/')), 'docs/developers.md'];
    const html = new Map<string, string>();
    for (const file of pages) {
      const response = await fetch(`${base}${pageUrl(file)}`);
      expect(response.status, file).toBe(200);
      html.set(pageUrl(file), await response.text());
    }
    const broken: string[] = [];
    for (const [url, body] of html) {
      for (const match of body.matchAll(/href="(\/[^"]*)"/g)) {
        const [path = '', anchor] = (match[1] as string).split('#');
        if (path.startsWith('/.11ty/')) {
          continue;
        }
        const target = html.get(path);
        if (target === undefined) {
          broken.push(`${url}: ${match[1]}`);
        } else if (anchor !== undefined && !target.includes(`id="${anchor}"`)) {
          broken.push(`${url}: ${match[1]} (no id ${anchor})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
