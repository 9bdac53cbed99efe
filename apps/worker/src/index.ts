/**
 * @calgate/worker — background schedules (audit retention today). `startWorker` runs them in the
 * worker process (`src/main.ts`) or inside the gateway when Calgate runs embedded.
 */
export { ConfigError, loadWorkerConfig, type WorkerConfig } from './config.ts';
export type { JobStatus } from './periodic.ts';
export { startWorker, type Worker, type WorkerDeps } from './worker.ts';
