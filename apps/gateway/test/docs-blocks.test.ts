import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { catalogue, catalogueDocs } from '@calgate/tools';
import { describe, expect, it } from 'vitest';
import { githubSlug } from '../../../scripts/docs-site.config.ts';
import { OPTIONS } from '../src/cli/common.ts';
import { main } from '../src/cli.ts';
import { block, docBlocks, docFiles, ROOT } from './docs-blocks.ts';

const run = promisify(execFile);
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Blocks that cannot run here, and why; nothing else may go untested. */
const NEEDS = [
  'needs a real Google account',
  'needs a real Microsoft account',
  "needs pg_dump 18 (PostgreSQL's own packages; Debian bookworm ships 15)",
];

/** `block('<check>')` calls in the test files: the checks some test runs. */
function checksRunByTests(): Set<string> {
  const dir = join(ROOT, 'apps/gateway/test');
  const ids = new Set<string>();
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.test.ts'))) {
    for (const match of readFileSync(join(dir, name), 'utf8').matchAll(/\bblock\('([^']+)'\)/g)) {
      ids.add(match[1] as string);
    }
  }
  return ids;
}

/** The Debian packages .ci/run installs when they are missing. */
function ciPackages(): string[] {
  const script = read('.ci/run');
  const single = [...script.matchAll(/missing\+=\(([a-z0-9.+-]+)\)/g)].map((match) => match[1] as string);
  const looped = [...script.matchAll(/for pkg in ([a-z0-9.+ -]+); do/g)].flatMap((match) =>
    (match[1] as string).trim().split(/\s+/),
  );
  return [...single, ...looped].sort();
}

/** GitHub's anchors of a Markdown file: one per heading. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) {
      fenced = !fenced;
    }
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading !== null && !fenced) {
      anchors.add(
        githubSlug((heading[1] as string).replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')),
      );
    }
  }
  return anchors;
}

describe('code blocks in docs/ and the README', () => {
  it('each names the test that runs it, or the real account it needs', () => {
    const tools = new Map(catalogueDocs(catalogue()).map((tool) => [tool.name, tool]));
    const runByTests = checksRunByTests();
    const unchecked = docBlocks().flatMap((found) => {
      const where = `${found.file}:${found.line}`;
      const check = found.check;
      if (check === undefined) {
        return [`${where}: no <!-- docs-check: … --> above it`];
      }
      const example = /^tool example (\w+)$/.exec(check);
      if (example !== null) {
        // The tool reference's examples: the catalogue's own, which docs-examples.test.ts runs.
        const tool = tools.get(example[1] as string);
        const shown = JSON.parse(found.text) as unknown;
        const ok =
          tool !== undefined &&
          (JSON.stringify(shown) === JSON.stringify({ tool: tool.name, arguments: tool.example.arguments }) ||
            JSON.stringify(shown) === JSON.stringify(tool.example.result));
        return ok ? [] : [`${where}: not the catalogue's example of ${example[1]}`];
      }
      // The rules syntax page's grammar describes the language; its examples are checked in @calgate/rules.
      if (
        NEEDS.includes(check) ||
        runByTests.has(check) ||
        (check === 'grammar' && found.file === 'docs/rules-syntax.md')
      ) {
        return [];
      }
      return [`${where}: no test runs block('${check}')`];
    });
    expect(unchecked).toEqual([]);
  });

  it('npm test prerequisites name exactly the Debian packages .ci/run installs, and they are installed', async () => {
    const [install, test] = block('test-prerequisites').split('\n');
    expect(test).toBe('npm test');
    const named = (install ?? '')
      .replace(/^apt-get install /, '')
      .split(/\s+/)
      .sort();
    expect(named).toEqual(ciPackages());
    expect(ciPackages().length).toBeGreaterThan(5);
    // The command is a no-op on a machine .ci/run has prepared: every package is there.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a template.
    const { stdout } = await run('dpkg-query', ['-W', '-f', '${Package} ${Status}\n', ...named]);
    expect(stdout.trim().split('\n').sort()).toEqual(named.map((name) => `${name} install ok installed`));
  });

  it('npm run docs:generate is the generator docs-generated.test.ts checks', () => {
    expect(block('docs-generate')).toBe('npm run docs:generate');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['docs:generate']).toBe('node scripts/docs-generate.ts');
  });
});

/** The `calgate …` command lines the pages show in running text, and the CLI page's table. */
function inlineCommands(): { where: string; command: string }[] {
  const found: { where: string; command: string }[] = [];
  for (const file of docFiles()) {
    const text = read(file);
    for (const match of text.matchAll(/`(?:npm run )?calgate (?:-- )?([^`]+)`/g)) {
      found.push({ where: file, command: match[1] as string });
    }
    if (file === 'docs/cli.md') {
      for (const row of text.matchAll(/^\| (`[^|]*(?:\\\|[^|]*)*) \|/gm)) {
        for (const cell of (row[1] as string).matchAll(/`([^`]+)`/g)) {
          found.push({ where: file, command: cell[1] as string });
        }
      }
    }
  }
  return found.filter(({ command }) => command !== '<command>');
}

describe('calgate commands named in running text', () => {
  it('are commands the CLI has, with options it takes', async () => {
    let usage = '';
    await main(['--help'], {}, { out: (text) => (usage += text), err: () => {} });
    const commands = [...usage.matchAll(/^ {2}([a-z-]+(?: [a-z][a-z-]*)?)(?= |$)/gm)].map(
      (match) => match[1] as string,
    );
    expect(commands).toContain('key set');
    expect(inlineCommands().length).toBeGreaterThan(50);
    const wrong = inlineCommands().flatMap(({ where, command }) => {
      // Placeholders become values: `[--x X]` optional parts are kept, `a|b` takes the first, `…` a word.
      const line = command
        .replace(/\\\|/g, '|')
        .replace(/[[\]]/g, '')
        .replace(/(\S+?)\|\S+/g, '$1')
        .replace(/…/g, 'x')
        .replace(/<[^>]+>/g, 'x')
        // A setting named alone (`calgate key set --time-zone`) stands for it with a value.
        .replace(/(--[a-z-]+)$/, (option) =>
          OPTIONS[option.slice(2) as keyof typeof OPTIONS]?.type === 'string' ? `${option} x` : option,
        );
      let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
      try {
        parsed = parseArgs({
          args: line.split(/\s+/),
          options: OPTIONS,
          allowPositionals: true,
          strict: true,
        });
      } catch (error) {
        return [`${where}: calgate ${command}: ${error instanceof Error ? error.message : String(error)}`];
      }
      const words = parsed.positionals.join(' ');
      const known = commands.some((name) => words === name || words.startsWith(`${name} `));
      return known ? [] : [`${where}: calgate ${command}: no such command`];
    });
    expect(wrong).toEqual([]);
  });
});

describe('the README', () => {
  it('stays a short entry point: at most 150 lines, with a link to every page of docs/', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    const pages = docFiles().filter((file) => file.startsWith('docs/') && file !== 'docs/index.md');
    expect(pages.filter((page) => !readme.includes(`](${page})`))).toEqual([]);
  });
});

describe('links in docs/ and the README', () => {
  it('point at files that exist, and at headings they have', () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      const text = read(file);
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1] as string;
        if (/^[a-z]+:/.test(target)) {
          continue;
        }
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : normalize(join(dirname(file), path));
        let body: string;
        try {
          body = read(resolved);
        } catch {
          broken.push(`${file}: ${target} (no file ${resolved})`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(body).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
