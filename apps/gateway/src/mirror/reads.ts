/**
 * The "recently read" signal the mirror's planner polls by: when a mirrored calendar was last
 * read through Calgate. Readers call touchRead; a calendar read within the last day is kept
 * within the poll interval of Google even when push notifications do not arrive.
 */
import type { Database } from '@calgate/store';

/** Writes at most once a minute per calendar, so a busy calendar's reads cost no extra writes. */
const TOUCH_GRANULARITY = '1 minute';

/** Records that the calendar was read now. A calendar that does not exist is ignored. */
export async function touchRead(db: Pick<Database, 'pool'>, calendarId: string): Promise<void> {
  await db.pool.query(
    `INSERT INTO mirror_reads (calendar_id, tenant_id)
     SELECT id, tenant_id FROM calendars WHERE id = $1
     ON CONFLICT (calendar_id) DO UPDATE SET last_read_at = now()
       WHERE mirror_reads.last_read_at < now() - interval '${TOUCH_GRANULARITY}'`,
    [calendarId],
  );
}
