/**
 * Feed refreshes driven by a test: a pg-boss producer on the gateway's database queues the
 * syncs the planner finds due (one pass, as the worker's cron runs it), for the gateway's
 * in-process worker to run; and a wait that names what it waited for.
 */
import { startBoss } from '@calgate/scheduler';
import { createLogger } from '../src/logger.ts';
import { MirrorJobs } from '../src/mirror/jobs.ts';
import { dueCalendars, planMirrorSyncs } from '../src/mirror/planner.ts';
import type { TestGateway } from './harness.ts';

export interface FeedRefresh {
  /** One planner pass over subscribed feeds, as the worker's cron runs it. */
  plan(): Promise<unknown>;
  /** Whether the planner would now refresh the calendar's feed. */
  due(calendarId: string): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startFeedRefresh(gw: TestGateway): Promise<FeedRefresh> {
  const boss = await startBoss({ databaseUrl: gw.db.url, role: 'producer' });
  const jobs = new MirrorJobs(boss);
  return {
    plan: () => planMirrorSyncs({ db: gw.runtime.db, jobs, providers: ['ics'], log: createLogger('silent') }),
    due: async (calendarId) =>
      (await dueCalendars(gw.runtime.db, 60_000, ['ics'])).some((row) => row.calendar_id === calendarId),
    stop: () => boss.stop({ graceful: false }),
  };
}

/** Polls `probe` every 100 ms until it gives a value (not undefined, null or false); fails naming `what`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
