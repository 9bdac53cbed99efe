/**
 * Which calendars the mirror syncs without being asked: those never synced (a new connection, a
 * calendar enabled again, a sync that never completed), those read within the last day whose
 * last sync is older than the poll interval, and subscribed feeds whose cursor's `refreshAfter`
 * has passed (read or not: a subscription is refreshed in the background). Polling is the fallback for push notifications that
 * do not come; a calendar nobody reads waits for a push or its next read.
 *
 * The plan runs as a pg-boss cron job (once a minute across every worker), and once when a worker
 * starts, so a fresh worker does not wait a minute to sync what is new. With push on, the same
 * pass keeps the calendars' push channels (channel-upkeep.ts): one pass at a time, everywhere.
 */
import { type Database, MirrorFeedCursors } from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { MirrorJobs, MirrorSyncReason } from './jobs.ts';

/** The pg-boss queue of the planner's passes. */
export const MIRROR_PLAN_QUEUE = 'calgate-mirror-plan';

/** Calendars read within this window are polled. */
const RECENT_READ = '24 hours';
/** A failed calendar is tried again by the planner no more often than this (pg-boss retries first). */
const ERROR_BACKOFF = '15 minutes';

export const DEFAULT_POLL_INTERVAL_MS = 60_000;
const FEED_KEEP_MS = 7 * 86_400_000;

export interface MirrorPlanDeps {
  db: Database;
  jobs: MirrorJobs;
  /** Providers whose calendars the mirror syncs (those with sync sources). */
  providers: readonly string[];
  log: Logger;
  /** How old a recently read calendar's last sync may be before it is polled. */
  pollIntervalMs?: number;
  /** Runs after each pass's planning: the push channels' upkeep, when push is on. */
  upkeep?: () => Promise<unknown>;
}

interface Due {
  calendar_id: string;
  tenant_id: string;
  never: boolean;
}

/** The calendars due for a sync now; see the module comment. */
export async function dueCalendars(
  db: Database,
  pollIntervalMs: number,
  providers: readonly string[],
): Promise<Due[]> {
  const { rows } = await db.pool.query<Due>(
    `SELECT c.id AS calendar_id, c.tenant_id, s.synced_at IS NULL AS never
     FROM calendars c
     JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
     LEFT JOIN mirror_sync_state s ON s.calendar_id = c.id
     LEFT JOIN mirror_reads r ON r.calendar_id = c.id
     WHERE c.enabled AND n.provider::text = ANY($2) AND n.status = 'active'
       AND n.auth IN ('oauth', 'service_account', 'password')
       AND (s.status IS DISTINCT FROM 'error' OR s.updated_at < now() - interval '${ERROR_BACKOFF}')
       AND (
         s.synced_at IS NULL
         OR (r.last_read_at > now() - interval '${RECENT_READ}'
             AND s.synced_at < now() - make_interval(secs => $1::float8 / 1000))
         OR (CASE WHEN n.provider = 'ics' AND s.sync_token LIKE '{%'
               THEN (s.sync_token::jsonb ->> 'refreshAfter')::float8 <= extract(epoch FROM now()) * 1000
               ELSE false END)
       )
     ORDER BY s.synced_at NULLS FIRST`,
    [pollIntervalMs, [...providers]],
  );
  return rows;
}

/** One planner pass: enqueues every due calendar. Returns how many were asked for. */
export async function planMirrorSyncs(deps: MirrorPlanDeps): Promise<number> {
  const due = await dueCalendars(deps.db, deps.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, deps.providers);
  for (const row of due) {
    const reason: MirrorSyncReason = row.never ? 'initial' : 'poll';
    await deps.jobs.enqueue(row.tenant_id, row.calendar_id, reason);
  }
  if (due.length > 0) {
    deps.log.debug({ calendars: due.length }, 'mirror syncs planned');
  }
  return due.length;
}

/** Registers the planner's cron and its worker, and plans once now. Returns a stop function. */
export async function startMirrorPlanner(boss: PgBoss, deps: MirrorPlanDeps): Promise<() => Promise<void>> {
  await boss.createQueue(MIRROR_PLAN_QUEUE, { policy: 'stately', expireInSeconds: 300, retryLimit: 1 });
  await boss.schedule(MIRROR_PLAN_QUEUE, '* * * * *', {}, { tz: 'UTC' });
  const id = await boss.work(MIRROR_PLAN_QUEUE, { pollingIntervalSeconds: 5 }, async () => {
    await planMirrorSyncs(deps);
    await deps.upkeep?.();
    // The change feed keeps what consumers have handled for a week (for inspection), no longer.
    const pruned = await new MirrorFeedCursors(deps.db).prune(FEED_KEEP_MS);
    if (pruned > 0) {
      deps.log.debug({ pruned }, 'mirror change feed pruned');
    }
  });
  await boss.send(MIRROR_PLAN_QUEUE, {}, { singletonKey: 'start' });
  return () => boss.offWork(MIRROR_PLAN_QUEUE, { id, wait: true });
}
