import type { Logger } from 'pino';

export interface PeriodicJob<T> {
  name: string;
  intervalMs: number;
  /** Aborted when the worker stops; long jobs check it between steps. */
  run(signal: AbortSignal): Promise<T>;
}

export interface JobStatus {
  name: string;
  running: boolean;
  lastStartedAt: string | null;
  lastSucceededAt: string | null;
  lastError: string | null;
}

export interface ScheduledJob<T> {
  /** Runs the job now, or joins the run already in progress. */
  runNow(): Promise<T>;
  status(): JobStatus;
  /** Cancels the timer, aborts a run in progress and waits for it to settle. */
  stop(): Promise<void>;
}

/**
 * Runs a job at start and then every `intervalMs` after the previous run ends, so runs never
 * overlap. A failing run is logged and retried at the next tick; it never stops the schedule.
 * Timers are unref'd: a schedule alone does not keep a process alive.
 */
export function schedule<T>(job: PeriodicJob<T>, log: Logger): ScheduledJob<T> {
  const controller = new AbortController();
  const status: JobStatus = {
    name: job.name,
    running: false,
    lastStartedAt: null,
    lastSucceededAt: null,
    lastError: null,
  };
  let inFlight: Promise<T> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const arm = (delayMs: number) => {
    if (stopped) {
      return;
    }
    timer = setTimeout(() => {
      timer = undefined;
      runNow().then(
        () => arm(job.intervalMs),
        () => arm(job.intervalMs),
      );
    }, delayMs);
    timer.unref();
  };

  const runNow = (): Promise<T> => {
    if (inFlight !== undefined) {
      return inFlight;
    }
    const startedAt = Date.now();
    status.running = true;
    status.lastStartedAt = new Date(startedAt).toISOString();
    const run = (async () => {
      try {
        const result = await job.run(controller.signal);
        status.lastSucceededAt = new Date().toISOString();
        status.lastError = null;
        log.debug({ job: job.name, ms: Date.now() - startedAt }, 'job finished');
        return result;
      } catch (error) {
        status.lastError = error instanceof Error ? error.message : String(error);
        log.error({ job: job.name, err: error }, 'job failed; retrying at the next interval');
        throw error;
      } finally {
        status.running = false;
        inFlight = undefined;
      }
    })();
    inFlight = run;
    return run;
  };

  arm(0);

  return {
    runNow,
    status: () => ({ ...status }),
    async stop() {
      stopped = true;
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      controller.abort();
      await inFlight?.catch(() => undefined);
    },
  };
}
