import { openDatabase } from '@calgate/store';
import { pino } from 'pino';
import { ConfigError, loadWorkerConfig } from './config.ts';
import { startWorker } from './worker.ts';

/** Process entry: read configuration, wire the dependencies, stop cleanly on SIGTERM/SIGINT. */
let config: ReturnType<typeof loadWorkerConfig>;
try {
  config = loadWorkerConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

const log = pino({ name: 'calgate-worker', level: config.logLevel });
const db = openDatabase({ url: config.databaseUrl, max: 2 });
const worker = await startWorker({
  db,
  log,
  auditRetentionDays: config.auditRetentionDays,
  health: config.health,
}).catch(async (error: unknown) => {
  log.fatal({ err: error }, 'worker failed to start');
  await db.close();
  process.exit(1);
});

let shuttingDown = false;
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (shuttingDown) {
    return;
  }
  shuttingDown = true;
  log.info({ signal }, 'shutting down');
  // A stuck query must not keep the container from stopping.
  setTimeout(() => {
    log.error('shutdown took too long; exiting');
    process.exit(1);
  }, 10_000).unref();
  await worker.stop();
  await db.close();
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => void shutdown(signal));
}
