/** A delivery worker: takes due occurrences from pg-boss and delivers them, any number per machine. */
import type { Job, PgBoss } from 'pg-boss';
import {
  type DeliveryDeps,
  handleOccurrences,
  type JobOutcome,
  requeueBlocked,
  TargetCache,
} from './deliver.ts';
import { type OccurrenceJob, PROMPT_QUEUE } from './jobs.ts';

export interface DeliveryWorkerOptions extends DeliveryDeps {
  /** Deliveries this process runs at once (pg-boss batches, spread over up to four fetch loops). */
  concurrency: number;
  /** How often an idle worker looks for due occurrences; 0.5 s (pg-boss's minimum) by default. */
  pollingSeconds?: number;
  /** Called after each job, for tests and metrics. */
  onOutcome?: (job: OccurrenceJob, outcome: JobOutcome | 'error') => void;
}

export interface DeliveryWorker {
  /** Jobs in hand right now. */
  active(): number;
  /** Stops fetching and waits for the jobs in hand (up to pg-boss's stop timeout). */
  stop(): Promise<void>;
}

export async function startDeliveryWorker(options: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { boss, log } = options;
  // Several fetch loops, so one slow receiver holds up only its own small batch.
  const loops = Math.min(4, options.concurrency);
  const batchSize = Math.max(1, Math.ceil(options.concurrency / loops));
  let inHand = 0;
  const deps: DeliveryDeps = { ...options, targets: options.targets ?? new TargetCache(options.repository) };
  const workId = await boss.work<OccurrenceJob>(
    PROMPT_QUEUE,
    {
      batchSize,
      localConcurrency: loops,
      pollingIntervalSeconds: options.pollingSeconds ?? 0.5,
      // While batches come back full there is a backlog (many occurrences due at once): fetch again at once.
      burstWhenBatchFull: true,
      perJobResults: true,
    },
    async (jobs: Job<OccurrenceJob>[]) => {
      inHand += jobs.length;
      try {
        const outcomes = await handleOccurrences(
          deps,
          jobs.map((job) => ({ data: job.data, signal: job.signal })),
        );
        return jobs.map((job, index) => {
          const outcome = outcomes[index];
          if (outcome instanceof Error) {
            // The database failed mid-way: pg-boss retries the job, which resumes where it stopped.
            log.error(
              { err: outcome, scheduleId: job.data.scheduleId },
              'occurrence job failed; it will be retried',
            );
            options.onOutcome?.(job.data, 'error');
            return { id: job.id, status: 'failed' as const, output: { message: outcome.message } };
          }
          options.onOutcome?.(job.data, outcome as JobOutcome);
          return { id: job.id, status: 'completed' as const };
        });
      } catch (error) {
        log.error({ err: error, jobs: jobs.length }, 'claiming a batch failed; its jobs will be retried');
        return jobs.map((job) => ({
          id: job.id,
          status: 'failed' as const,
          output: { message: error instanceof Error ? error.message : String(error) },
        }));
      } finally {
        inHand -= jobs.length;
      }
    },
  );
  // Occurrences an earlier worker's URL policy blocked get a try under this worker's policy.
  try {
    const requeued = await requeueBlocked(deps);
    if (requeued.queued + requeued.failed > 0) {
      log.info(requeued, 'occurrences blocked by a URL policy queued again');
    }
  } catch (error) {
    // They stay blocked, for the next worker that starts; delivering the rest matters more.
    log.error({ err: error }, 'queueing blocked occurrences again failed');
  }
  log.info({ concurrency: options.concurrency }, 'delivery worker started');
  return {
    active: () => inHand,
    async stop() {
      await boss.offWork(PROMPT_QUEUE, { id: workId, wait: true });
    },
  };
}

export type { PgBoss };
