import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@calgate/testkit';

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

function postgresBinDir(): string {
  if (process.env.PG_BIN) {
    return process.env.PG_BIN;
  }
  const base = '/usr/lib/postgresql';
  const [newest] = existsSync(base)
    ? readdirSync(base)
        .filter((name) => existsSync(join(base, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (newest === undefined) {
    throw new Error('No PostgreSQL server found: install Debian postgresql or set PG_BIN.');
  }
  return join(base, newest, 'bin');
}

/** Postgres refuses to run as root; as root it runs as the `postgres` system user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) {
    return undefined;
  }
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

function started(child: ChildProcess, needle: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in time:\n${output}`)), 30_000);
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
    await started(child, 'ready to accept connections', 'PostgreSQL');
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
    await started(child, 'Ready to accept connections', 'redis-server');
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: () => exited(child, 'SIGTERM'),
    destroy: () => exited(child, 'SIGTERM'),
  };
}

export interface Relay {
  /** `target` with host and port replaced by the relay's. */
  url: string;
  /** Resets every relayed connection and stops listening: clients see a refused connection. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
}

/** A TCP relay in front of a server, to drop every connection to it at a chosen moment. */
export async function cuttableRelay(target: string): Promise<Relay> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let listenPort = 0;
  const restore = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = connect(Number(port), hostname);
        for (const [socket, peer] of [
          [client, upstream],
          [upstream, client],
        ] as const) {
          sockets.add(socket);
          // One side gone (e.g. the server refused) takes the other with it, as on a real path.
          socket.on('close', () => {
            sockets.delete(socket);
            peer.destroy();
          });
          socket.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      next.once('error', reject);
      next.listen(listenPort, '127.0.0.1', () => {
        const address = next.address();
        listenPort = typeof address === 'object' && address !== null ? address.port : 0;
        server = next;
        resolve();
      });
    });
  await restore();
  return {
    url: target.replace(`${hostname}:${port}`, `127.0.0.1:${listenPort}`),
    restore,
    async cut() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) {
        socket.resetAndDestroy();
      }
      await new Promise<void>((resolve) => (closing ? closing.close(() => resolve()) : resolve()));
    },
  };
}
