import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
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
