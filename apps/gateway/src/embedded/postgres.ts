import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { CalgateError } from '@calgate/core';
import { openDatabase } from '@calgate/store';
import { locatePostgresBinaries, type PostgresLog, SUPERUSER } from './postgres-binaries.ts';
import { assertUsable, ensureCluster, makeReachable, postgresUser } from './postgres-cluster.ts';
import { launch, PortInUse } from './postgres-process.ts';

export const EMBEDDED_DATABASE = 'calgate';

export interface EmbeddedPostgresOptions {
  /** Calgate's DATA_DIR: the cluster lives in `<dataDir>/postgres`, its password beside it. */
  dataDir: string;
  /** A fixed port; by default a free loopback port is picked at each start. */
  port?: number;
  log: PostgresLog;
  /**
   * Stop the server on SIGINT/SIGTERM when nothing else handles them (default true). When the
   * application has its own handlers it owns shutdown and should call `stop()` last; a process
   * that exits without doing so still asks the server to shut down (see `stop`).
   */
  handleSignals?: boolean;
  /** How long to wait for the server to accept connections (crash recovery can take a while). */
  startTimeoutMs?: number;
}

export interface EmbeddedPostgres {
  /** postgresql://postgres:<password>@127.0.0.1:<port>/calgate */
  readonly url: string;
  readonly port: number;
  /**
   * Fast, clean shutdown (SIGINT: checkpoint, then exit); waits for the server to be gone.
   * Idempotent. A process that exits without calling it still sends the SIGINT from an exit hook.
   */
  stop(): Promise<void>;
}

/**
 * Starts a PostgreSQL server for `npm start` without DATABASE_URL: a cluster initialised once in
 * `<dataDir>/postgres` (restarts keep the data), scram-sha-256 with a random password generated
 * once into `<dataDir>/postgres-password` (mode 0600), TCP on 127.0.0.1 only, no Unix socket,
 * and a `calgate` database created when missing.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { dataDir, log } = options;
  const clusterDir = join(dataDir, 'postgres');
  const runAs = await postgresUser(log);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) {
    await makeReachable(dataDir);
  }
  const binaries = await locatePostgresBinaries(join(dataDir, 'postgres-lib'));
  if (runAs) {
    await assertUsable(binaries, dataDir, runAs);
  }
  const password = await ensureCluster(clusterDir, join(dataDir, 'postgres-password'), binaries, runAs, log);

  let attempt = 0;
  for (;;) {
    attempt += 1;
    const port = options.port ?? (await freePort());
    try {
      const server = await launch({
        binaries,
        clusterDir,
        port,
        runAs,
        log,
        timeoutMs: options.startTimeoutMs,
      });
      const url = `postgresql://${SUPERUSER}:${password}@127.0.0.1:${port}`;
      try {
        await ensureDatabase(`${url}/postgres`);
      } catch (error) {
        await server.stop();
        throw error;
      }
      if (options.handleSignals !== false) {
        server.stopOnSignals();
      }
      log.info({ port, dir: clusterDir }, 'embedded PostgreSQL is ready');
      return { url: `${url}/${EMBEDDED_DATABASE}`, port, stop: server.stop };
    } catch (error) {
      // A random port can be taken between probing and binding; try another.
      if (options.port === undefined && error instanceof PortInUse && attempt < 3) {
        continue;
      }
      if (error instanceof PortInUse) {
        throw new CalgateError(
          'unavailable',
          `Embedded PostgreSQL cannot listen on 127.0.0.1:${port}: ${error.message}`,
        );
      }
      throw error;
    }
  }
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const admin = openDatabase({ url: adminUrl, max: 1 });
  try {
    const { rowCount } = await admin.pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      EMBEDDED_DATABASE,
    ]);
    if (rowCount === 0) {
      await admin.pool.query(`CREATE DATABASE "${EMBEDDED_DATABASE}"`);
    }
  } finally {
    await admin.close();
  }
}

function freePort(): Promise<number> {
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
