import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on loopback, as the kernel hands it out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin folder (or PG_BIN). */
export function postgresBinDir(): string {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) {
    return fromEnv;
  }
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((name) => existsSync(join(base, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const [newest] = versions;
  if (newest === undefined) {
    throw new Error('No PostgreSQL server found: install Debian postgresql or set PG_BIN.');
  }
  return join(base, newest, 'bin');
}

/** Postgres refuses to run as root; as root we run it as the `postgres` system user. */
export function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) {
    return undefined;
  }
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
  });
}

/** Resolves once the child prints `needle`; rejects when it exits first or takes too long. */
export function waitForLine(
  child: ChildProcess,
  needle: string,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in time:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(needle)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${output}`));
    });
  });
}

/**
 * Starts a throwaway PostgreSQL cluster tuned for tests (no fsync) on a free port. `env` adds to
 * the server's environment (e.g. libfaketime's, to run it on a shifted clock).
 */
export async function startPostgres(options: { env?: Record<string, string> } = {}): Promise<RunningServer> {
  const bin = postgresBinDir();
  const dir = await mkdtemp(join(tmpdir(), 'calgate-pg-'));
  const user = runAs();
  if (user) {
    await chown(dir, user.uid, user.gid);
  }
  execFileSync(
    join(bin, 'initdb'),
    ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    {
      stdio: 'pipe',
      ...user,
    },
  );
  const port = await freePort();
  const child = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      dir,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-k',
      dir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=400',
      '-c',
      'shared_buffers=128MB',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...user,
      ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
    },
  );
  await waitForLine(child, 'ready to accept connections', 'PostgreSQL');
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      child.kill('SIGINT');
      await waitForExit(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a throwaway redis-server without persistence on a free port. */
export async function startRedis(): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(
    process.env.REDIS_SERVER ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitForLine(child, 'Ready to accept connections', 'redis-server');
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await waitForExit(child);
    },
  };
}
