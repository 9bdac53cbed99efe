import { spawnSync } from 'node:child_process';
import { chown, lstat, mkdir, mkdtemp, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@calgate/store';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/embedded/postgres.ts';
import { hydrateSymlinks } from '../src/embedded/postgres-binaries.ts';

const log = pino({ level: 'silent' });

async function query<T>(url: string, sql: string): Promise<T[]> {
  const db = openDatabase({ url, max: 1 });
  try {
    return (await db.pool.query(sql)).rows as T[];
  } finally {
    await db.close();
  }
}

describe('embedded PostgreSQL', () => {
  let dataDir: string;
  const start = (port?: number) => startEmbeddedPostgres({ dataDir, log, handleSignals: false, port });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'calgate-embedded-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('initialises a cluster once and keeps its data across restarts', async () => {
    const first = await start();
    expect(first.url).toMatch(/^postgresql:\/\/postgres:[\w-]{32}@127\.0\.0\.1:\d+\/calgate$/);
    await query(first.url, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$still here$$)');
    await first.stop();
    await first.stop();

    const second = await start();
    try {
      expect(second.url.replace(/:\d+\//, '/')).toBe(first.url.replace(/:\d+\//, '/'));
      expect(await query(second.url, 'SELECT v FROM kept')).toEqual([{ v: 'still here' }]);
    } finally {
      await second.stop();
    }
  });

  it('keeps the generated password in a 0600 file', async () => {
    const file = await stat(join(dataDir, 'postgres-password'));
    expect(file.mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'postgres', 'PG_VERSION'))).isFile()).toBe(true);
  });

  it('listens on 127.0.0.1 only, on the port it is given', async () => {
    const probe = await startEmbeddedPostgres({ dataDir, log, handleSignals: false });
    const { port } = probe;
    await probe.stop();
    const server = await start(port);
    try {
      expect(server.port).toBe(port);
      const [settings] = await query<{ listen: string; sockets: string }>(
        server.url,
        `SELECT current_setting('listen_addresses') AS listen,
                current_setting('unix_socket_directories') AS sockets`,
      );
      expect(settings).toEqual({ listen: '127.0.0.1', sockets: '' });
    } finally {
      await server.stop();
    }
  });

  it('refuses to start a cluster another process is running, and says so', async () => {
    const running: EmbeddedPostgres = await start();
    try {
      await expect(start()).rejects.toThrow(/already in use by process \d+/);
      expect(await query(running.url, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    } finally {
      await running.stop();
    }
  });

  it('starts over a stale postmaster.pid left by a crashed run', async () => {
    const dead = spawnSync('true').pid;
    const lockFile = join(dataDir, 'postgres', 'postmaster.pid');
    await writeFile(lockFile, `${dead}\n${join(dataDir, 'postgres')}\n`);
    const owner = await stat(join(dataDir, 'postgres'));
    await chown(lockFile, owner.uid, owner.gid);
    const server = await start();
    try {
      expect(await query(server.url, 'SELECT v FROM kept')).toEqual([{ v: 'still here' }]);
    } finally {
      await server.stop();
    }
  });
});

describe('hydrateSymlinks', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'calgate-pg-links-'));
    await mkdir(join(root, 'native', 'lib'), { recursive: true });
    await writeFile(join(root, 'native', 'lib', 'libx.so.1.2'), 'x');
    await writeFile(
      join(root, 'native', 'pg-symlinks.json'),
      JSON.stringify([
        { source: 'native/lib/libx.so.1.2', target: 'native/lib/libx.so.1' },
        { source: 'native/lib/libx.so.1.2', target: 'native/lib/libx.so' },
      ]),
    );
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('creates missing links in place, relative, and is a no-op afterwards', async () => {
    expect(await hydrateSymlinks(root, join(root, 'fallback'))).toBeUndefined();
    expect(await readlink(join(root, 'native', 'lib', 'libx.so.1'))).toBe('libx.so.1.2');
    expect(await readlink(join(root, 'native', 'lib', 'libx.so'))).toBe('libx.so.1.2');
    const refuse = () => Promise.reject(new Error('nothing should be linked'));
    expect(await hydrateSymlinks(root, join(root, 'fallback'), refuse)).toBeUndefined();
  });

  it('links into a fallback directory when the package tree is read-only', async () => {
    await rm(join(root, 'native', 'lib', 'libx.so.1'));
    const fallback = join(root, 'fallback');
    const { symlink } = await import('node:fs/promises');
    const readOnlyTree = (target: string, path: string) =>
      path.startsWith(fallback)
        ? symlink(target, path)
        : Promise.reject(Object.assign(new Error('read-only file system'), { code: 'EROFS' }));
    expect(await hydrateSymlinks(root, fallback, readOnlyTree)).toBe(fallback);
    expect(await readlink(join(fallback, 'libx.so.1'))).toBe(join(root, 'native', 'lib', 'libx.so.1.2'));
    expect((await lstat(join(fallback, 'libx.so.1'))).isSymbolicLink()).toBe(true);
  });
});
