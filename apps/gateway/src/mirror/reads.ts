/**
 * The gateway's side of mirror reads: what MirroredCalendarProvider needs to decide whether the
 * mirror may answer (sync now, queue a first sync, record a read), wired to Postgres, pg-boss and
 * the sync sources of the calendar's provider.
 */
import type { MirrorReadDeps, MirrorVersionWatch } from '@calgate/providers';
import type { Database, MirrorRepository } from '@calgate/store';
import type { Logger } from 'pino';
import { type MirrorJobs, syncConnectionCalendar } from './jobs.ts';
import type { SyncSources } from './sources.ts';

/** Writes at most once a minute per calendar, so a busy calendar's reads cost no extra writes. */
const TOUCH_GRANULARITY = '1 minute';
const TOUCH_EVERY_MS = 60_000;
/** A calendar waiting for its first sync asks for it at most this often from one process. */
const REQUEST_EVERY_MS = 30_000;

/**
 * Records that the calendar was read now: the planner keeps calendars read within the last day
 * within the poll interval of their upstream even when push notifications do not arrive. A calendar that
 * does not exist is ignored.
 */
export async function touchRead(db: Pick<Database, 'pool'>, calendarId: string): Promise<void> {
  await db.pool.query(
    `INSERT INTO mirror_reads (calendar_id, tenant_id)
     SELECT id, tenant_id FROM calendars WHERE id = $1
     ON CONFLICT (calendar_id) DO UPDATE SET last_read_at = now()
       WHERE mirror_reads.last_read_at < now() - interval '${TOUCH_GRANULARITY}'`,
    [calendarId],
  );
}

/** Runs a task for a key at most once per `everyMs` in this process; failures are logged. */
function throttled(everyMs: number, log: Logger, what: string) {
  const last = new Map<string, number>();
  return (key: string, task: () => Promise<unknown>): void => {
    const now = Date.now();
    if ((last.get(key) ?? Number.NEGATIVE_INFINITY) > now - everyMs) {
      return;
    }
    if (last.size > 100_000) {
      last.clear();
    }
    last.set(key, now);
    task().catch((error: unknown) => {
      last.delete(key);
      log.warn({ err: error, calendarId: key }, what);
    });
  };
}

export interface MirrorReadSettings {
  db: Database;
  mirror: MirrorRepository;
  sources: SyncSources;
  /** The provider of the calendars read (whose sync source a stale read syncs with). */
  provider: string;
  jobs: MirrorJobs;
  log: Logger;
  maxStalenessMs: number;
  /** Announcements of changed mirror state (a MirrorVersionListener), when this process hears them. */
  versions?: MirrorVersionWatch | undefined;
}

/** MirroredCalendarProvider's dependencies for a gateway process, for one provider's calendars. */
export function mirrorReadDeps(settings: MirrorReadSettings): MirrorReadDeps {
  const { db, mirror, sources, jobs, log } = settings;
  const touch = throttled(TOUCH_EVERY_MS, log, 'mirror read not recorded');
  const request = throttled(REQUEST_EVERY_MS, log, 'first mirror sync not queued');
  const label = sources.get(settings.provider)?.label;
  return {
    mirror,
    maxStalenessMs: settings.maxStalenessMs,
    ...(label === undefined ? {} : { upstreamName: label }),
    ...(settings.versions === undefined ? {} : { versions: settings.versions }),
    async sync(connection, calendar) {
      await syncConnectionCalendar(sources, {
        provider: settings.provider,
        connection,
        calendarId: calendar.id,
        externalId: calendar.externalId,
        store: mirror,
      });
    },
    async requestSync(tenantId, calendarId) {
      request(calendarId, () => jobs.enqueue(tenantId, calendarId, 'initial'));
    },
    touch(calendarId) {
      touch(calendarId, () => touchRead(db, calendarId));
    },
    onFallback(calendarId, reason, error) {
      if (error !== undefined) {
        log.warn({ err: error, calendarId, reason }, `mirror read answered by ${label ?? 'the upstream'}`);
      } else {
        log.debug({ calendarId, reason }, `mirror read answered by ${label ?? 'the upstream'}`);
      }
    },
  };
}
