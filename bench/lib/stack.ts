import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiKeyRepository, type Database, migrate, openDatabase, TenancyRepository } from '@calgate/store';
import { freePort, startPostgres, startRedis } from '@calgate/testkit';
import { buildProductionTree } from '../../scripts/build-production-tree.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The node flags the gateway runs with: those of `npm start` (the image's CMD and NODE_OPTIONS
 * give it the same; apps/gateway/test/production-tree.test.ts holds them equal).
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((arg) => arg.startsWith('--'));

/** The image's file tree (scripts/build-production-tree.ts), built once per benchmark process. */
let built: Promise<string> | undefined;
function productionTree(): Promise<string> {
  built ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calgate-bench-tree-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await buildProductionTree(root, dir);
    return dir;
  })();
  return built;
}

/**
 * What the HTTP benchmarks run against: real PostgreSQL and Redis, a tenant with one local
 * calendar and a key that may read and write it, and `calgate serve` in its own process with
 * rate limits out of the way. `seed` runs against the database before the gateway starts.
 */
export interface BenchStack {
  /** The gateway's base URL. */
  base: string;
  pid: number;
  calendar: { id: string; timeZone: string };
  secret: string;
  /** The gateway's PostgreSQL database and Redis, for counting their work. */
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

export async function startBenchStack(options: {
  seed?: (db: Database, calendar: { id: string; timeZone: string }) => Promise<void>;
  /** Node flags for the gateway after GATEWAY_NODE_FLAGS (later ones win), e.g. from BENCH_GATEWAY_NODE_ARGS. */
  nodeArgs?: string[];
  /** Settings of the gateway over the bench defaults (e.g. real rate limits). */
  env?: Record<string, string>;
  /** Also run `calgate worker` (mirror syncs, prompt delivery) in its own process. */
  worker?: boolean;
}): Promise<BenchStack> {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  try {
    return await startOn(postgres, redis, options);
  } catch (error) {
    await Promise.all([postgres.stop(), redis.stop()]);
    throw error;
  }
}

async function startOn(
  postgres: Awaited<ReturnType<typeof startPostgres>>,
  redis: Awaited<ReturnType<typeof startRedis>>,
  options: Parameters<typeof startBenchStack>[0],
): Promise<BenchStack> {
  const admin = openDatabase({ url: postgres.url, max: 1 });
  await admin.pool.query('CREATE DATABASE bench');
  await admin.close();
  const dbUrl = postgres.url.replace(/\/postgres$/, '/bench');
  const db = openDatabase({ url: dbUrl });
  await migrate(db.pool);
  const tenancy = new TenancyRepository(db.prisma);
  const tenant = await tenancy.createTenant('Bench');
  const calendar = await tenancy.createLocalCalendar(tenant.id, {
    summary: 'Bench',
    timeZone: 'Europe/Berlin',
  });
  const { key, secret } = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'bench' });
  await tenancy.setGrant(tenant.id, key.id, calendar.id, { read: true, write: true });
  await options.seed?.(db, calendar);
  await db.close();

  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: dbUrl,
    REDIS_URL: redis.url,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_BURST: '1000000',
    WORKER_PORT: String(await freePort()),
    ...options.env,
  };
  // As the image runs them: the production tree's compiled JavaScript (or the sources when
  // BENCH_TREE=source); the gateway with its flags, the worker with the image's NODE_OPTIONS.
  const tree = process.env.BENCH_TREE === 'source' ? undefined : await productionTree();
  const calgate = (command: string, nodeArgs: readonly string[]) =>
    spawn(
      process.execPath,
      [
        ...nodeArgs,
        tree === undefined ? 'apps/gateway/src/bin/calgate.ts' : 'apps/gateway/src/bin/calgate.js',
        command,
      ],
      {
        cwd: tree ?? root,
        env,
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
  const child = calgate('serve', [...GATEWAY_NODE_FLAGS, ...(options.nodeArgs ?? [])]);
  const worker = options.worker ? calgate('worker', ['--max-semi-space-size=8']) : undefined;
  const stopProcesses = async () => {
    for (const process of [worker, child]) {
      if (process !== undefined && process.exitCode === null) {
        const exited = new Promise((resolve) => process.once('exit', resolve));
        process.kill('SIGTERM');
        await exited;
      }
    }
  };
  const stop = async () => {
    await stopProcesses();
    await Promise.all([postgres.stop(), redis.stop()]);
  };
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i >= 200) {
      await stopProcesses();
      throw new Error('gateway did not become ready');
    }
    try {
      if ((await fetch(`${base}/readyz`)).ok) {
        break;
      }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base,
    pid: child.pid ?? 0,
    calendar: { id: calendar.id, timeZone: calendar.timeZone },
    secret,
    databaseUrl: dbUrl,
    redisUrl: redis.url,
    stop,
  };
}
