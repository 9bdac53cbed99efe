import { type DeliveryWorker, type DeliveryWorkerOptions, startDeliveryWorker } from '@calgate/scheduler';
import type { Database } from '@calgate/store';
import type { Logger } from 'pino';
import { auditRetentionJob, oauthUpkeepJob } from './audit-retention.ts';
import { type HealthServer, startHealthServer } from './health.ts';
import { type JobStatus, type ScheduledJob, schedule } from './periodic.ts';

const HOUR_MS = 60 * 60 * 1000;

export interface WorkerDeps {
  db: Database;
  log: Logger;
  auditRetentionDays: number;
  /** Where `GET /healthz` listens; omit when the worker runs inside the gateway process. */
  health?: { host: string; port: number };
  /** Defaults to one hour. */
  auditPruneIntervalMs?: number;
  /** Rows per DELETE; defaults to 5,000. */
  auditPruneBatchSize?: number;
  now?: () => Date;
  /** Deliver scheduled prompts (pg-boss, the repositories, the target policy); omit to run only upkeep. */
  delivery?: Omit<DeliveryWorkerOptions, 'log'> | undefined;
}

export interface Worker {
  /** The health endpoint's base URL, when `health` was given. */
  readonly healthUrl: string | undefined;
  /** Prunes the audit log now (or joins the run in progress); resolves to the rows deleted. */
  pruneAuditLog(): Promise<number>;
  jobs(): JobStatus[];
  /** The prompt delivery loop, when `delivery` was given. */
  readonly delivery: DeliveryWorker | undefined;
  /** Stops the schedules and the health endpoint. The database stays open: the caller owns it. */
  stop(): Promise<void>;
}

/** Starts every background schedule. Used by the worker's own main and, in embedded mode, by the gateway. */
export async function startWorker(deps: WorkerDeps): Promise<Worker> {
  const log = deps.log.child({ component: 'worker' });
  const auditRetention: ScheduledJob<number> = schedule(
    auditRetentionJob({
      db: deps.db,
      log,
      retentionDays: deps.auditRetentionDays,
      intervalMs: deps.auditPruneIntervalMs ?? HOUR_MS,
      batchSize: deps.auditPruneBatchSize ?? 5_000,
      now: deps.now ?? (() => new Date()),
    }),
    log,
  );
  const oauthUpkeep = schedule(
    oauthUpkeepJob({
      db: deps.db,
      log,
      intervalMs: deps.auditPruneIntervalMs ?? HOUR_MS,
      now: deps.now ?? (() => new Date()),
    }),
    log,
  );
  const scheduled: ScheduledJob<number>[] = [auditRetention, oauthUpkeep];
  const jobs = () => scheduled.map((job) => job.status());

  let delivery: DeliveryWorker | undefined;
  let health: HealthServer | undefined;
  try {
    if (deps.delivery !== undefined) {
      delivery = await startDeliveryWorker({ ...deps.delivery, log });
    }
    if (deps.health !== undefined) {
      health = await startHealthServer(deps.health, jobs);
    }
  } catch (error) {
    await Promise.all([...scheduled.map((job) => job.stop()), delivery?.stop()]);
    throw error;
  }
  log.info({ health: health?.url, auditRetentionDays: deps.auditRetentionDays }, 'worker started');

  let stopping: Promise<void> | undefined;
  return {
    healthUrl: health?.url,
    delivery,
    pruneAuditLog: () => auditRetention.runNow(),
    jobs,
    stop() {
      stopping ??= (async () => {
        await Promise.all([...scheduled.map((job) => job.stop()), delivery?.stop(), health?.close()]);
        log.info('worker stopped');
      })();
      return stopping;
    },
  };
}
