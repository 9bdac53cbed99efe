import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, postgresBinDir, runAs, waitForLine } from '@calgate/testkit';

/**
 * Servers of a test's own that it can stop and start again on the same port and data: the run's
 * shared Postgres and Redis (from @calgate/testkit) must stay up for every other test file.
 */
export interface RestartableServer {
  url: string;
  /** Stops the server (Postgres: fast shutdown, as `pg_ctl stop -m fast`). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
}

function exited(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  return done;
}

/** A PostgreSQL cluster of the test's own (no fsync), on a fixed free port. */
export async function restartablePostgres(): Promise<RestartableServer> {
  const bin = postgresBinDir();
  const dir = await mkdtemp(join(tmpdir(), 'calgate-pg-own-'));
  const user = runAs();
  if (user) {
    await chown(dir, user.uid, user.gid);
  }
  execFileSync(join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '--auth=trust', '--no-sync'], {
    stdio: 'pipe',
    ...user,
  });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      join(bin, 'postgres'),
      ['-D', dir, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...user },
    );
    await waitForLine(child, 'ready to accept connections', 'PostgreSQL');
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start,
    // SIGINT is PostgreSQL's fast shutdown: open transactions are rolled back, clients cut off.
    stop: () => exited(child, 'SIGINT'),
    async destroy() {
      await exited(child, 'SIGINT');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server of the test's own, without persistence, on a fixed free port. */
export async function restartableRedis(): Promise<RestartableServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      process.env.REDIS_SERVER ?? 'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await waitForLine(child, 'Ready to accept connections', 'redis-server');
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: () => exited(child, 'SIGTERM'),
    destroy: () => exited(child, 'SIGTERM'),
  };
}
