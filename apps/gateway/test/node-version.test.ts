import { execFile, execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = `${ROOT}scripts/check-node.cjs`;

async function check(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SCRIPT, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the Node.js version check run before npm installs', () => {
  it('stops an older Node.js with one plain line and exit code 1', async () => {
    for (const [version, shown] of [
      ['20.11.1', 'v20.11.1'],
      ['v22.17.9', 'v22.17.9'],
      ['22.9.0', 'v22.9.0'],
      ['18.20.4', 'v18.20.4'],
    ]) {
      const result = await check(version as string);
      expect(result.code, version).toBe(1);
      expect(result.stderr).toBe(`Calgate needs Node.js 22.18 or newer; this is ${shown}\n`);
      expect(result.stdout).toBe('');
    }
  });

  it('lets 22.18 and newer through silently, this Node.js included', async () => {
    for (const args of [['22.18.0'], ['22.19.1'], ['24.0.0'], ['v25.1.0'], []]) {
      expect(await check(...args), args.join() || process.version).toEqual({
        code: 0,
        stdout: '',
        stderr: '',
      });
    }
  });

  it('runs as the preinstall hook beside the existing hooks, with engines enforced', async () => {
    const manifest = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as {
      engines: { node: string };
      scripts: Record<string, string>;
    };
    expect(manifest.engines.node).toBe('>=22.18.0');
    expect(manifest.scripts.preinstall).toBe('node scripts/check-node.cjs');
    expect(manifest.scripts.postinstall).toBe('node scripts/prisma-generate.ts');
    // npm start and npm test say the same before anything runs on an older Node.js.
    expect(manifest.scripts.prestart).toMatch(/^node scripts\/check-node\.cjs && /);
    expect(manifest.scripts.pretest).toMatch(/^node scripts\/check-node\.cjs && /);
    expect(await readFile(`${ROOT}.npmrc`, 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});

/** npm's own entry point (npm runs on whichever Node.js starts it). */
function npmCli(): string {
  const npm = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
  return join(dirname(npm), 'npm-cli.js');
}

/** Node.js binaries on this machine older than 22.18 (the system's, when it is one). */
function olderNodes(): string[] {
  const found: string[] = [];
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate) || realpathSync(candidate) === realpathSync(process.execPath)) {
      continue;
    }
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 18)) {
      found.push(candidate);
    }
  }
  return found;
}

describe('npm ci on an unsupported Node.js', () => {
  /**
   * A copy of the project's manifest, lockfile, .npmrc and preinstall check in a temporary
   * directory: `npm ci` there is the real install a user would start, minus the workspaces.
   */
  async function project(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'calgate-npm-ci-'));
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
      await copyFile(`${ROOT}${file}`, join(dir, file));
    }
    await mkdir(join(dir, 'scripts'));
    await copyFile(SCRIPT, join(dir, 'scripts/check-node.cjs'));
    return dir;
  }

  async function npmCi(node: string, preload: string[], dir: string) {
    const started = performance.now();
    try {
      await promisify(execFile)(node, [...preload, npmCli(), 'ci', '--offline', '--no-audit', '--no-fund'], {
        cwd: dir,
        timeout: 60_000,
        env: { ...process.env, npm_config_loglevel: 'warn' },
      });
      return { code: 0, output: '', seconds: (performance.now() - started) / 1000 };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return {
        code: failed.code,
        output: `${failed.stdout}${failed.stderr}`,
        seconds: (performance.now() - started) / 1000,
      };
    }
  }

  function expectStoppedAtOnce(
    result: { code: number; output: string; seconds: number },
    version: string,
    dir: string,
  ): void {
    expect(result.code, result.output).not.toBe(0);
    // npm refuses before it resolves, downloads or runs anything: no packages, no scripts.
    expect(result.output).toContain('EBADENGINE');
    expect(result.output).toContain('Required: {"node":">=22.18.0"}');
    expect(result.output).toContain(`"node":"${version}"`);
    expect(result.output).not.toMatch(/^\s+at /m);
    expect(result.output).not.toContain('check-node.cjs');
    expect(existsSync(join(dir, 'node_modules'))).toBe(false);
    expect(result.seconds).toBeLessThan(30);
  }

  it('stops at once, before any package or script, on Node.js 20 (and on any older Node.js here)', async () => {
    const dir = await project();
    try {
      // npm takes the Node.js version to check from process.version: the preload makes this
      // Node.js report 20.11.1 to npm, so the check is the one an old Node.js meets.
      const preload = join(dir, 'old-node.cjs');
      await writeFile(preload, "Object.defineProperty(process, 'version', { value: 'v20.11.1' });\n");
      expectStoppedAtOnce(await npmCi(process.execPath, ['--require', preload], dir), 'v20.11.1', dir);
      // A real older Node.js, where the machine has one (its system Node.js often is).
      for (const node of olderNodes()) {
        const version = execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
        expectStoppedAtOnce(await npmCi(node, [], dir), version, dir);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
