/**
 * The gateway's database: the configured one, or the embedded Postgres under DATA_DIR, shared
 * with CLI commands through a runtime file while a gateway runs it.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Database, openDatabase } from '@calgate/store';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../embedded/postgres.ts';

/** Written by a running embedded gateway so CLI commands can reach its database meanwhile. */
interface RuntimeFile {
  pid: number;
  databaseUrl: string;
}

function runtimeFile(dataDir: string): string {
  return join(resolve(dataDir), 'runtime.json');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface DatabaseHandle {
  db: Database;
  /** Where the database is, for clients that open their own pool (pg-boss). */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The configured database, or the embedded one under DATA_DIR: reused when a running gateway
 * already serves it, started (and later stopped) here otherwise.
 */
export async function connectDatabase(
  config: Config,
  log: Logger,
  options: { publish?: boolean; poolSize?: number } = {},
): Promise<DatabaseHandle> {
  if (config.databaseUrl !== undefined) {
    const db = openDatabase({
      url: config.databaseUrl,
      ...(options.poolSize === undefined ? {} : { max: options.poolSize }),
    });
    return { db, url: config.databaseUrl, embedded: false, close: () => db.close() };
  }
  const file = runtimeFile(config.dataDir);
  const running = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as RuntimeFile)
    .catch(() => undefined);
  if (running !== undefined && running.pid !== process.pid && isAlive(running.pid)) {
    const db = openDatabase({ url: running.databaseUrl, max: 2 });
    return { db, url: running.databaseUrl, embedded: true, close: () => db.close() };
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const postgres: EmbeddedPostgres = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    log,
    handleSignals: false,
  });
  const db = openDatabase({ url: postgres.url });
  if (options.publish) {
    const content: RuntimeFile = { pid: process.pid, databaseUrl: postgres.url };
    await writeFile(file, JSON.stringify(content), { mode: 0o600 });
  }
  return {
    db,
    url: postgres.url,
    embedded: true,
    async close() {
      await db.close();
      if (options.publish) {
        await rm(file, { force: true });
      }
      await postgres.stop();
    },
  };
}
