/**
 * Events stored as a sync page or a write-through brings them: the last copy of each id, older
 * copies and copies a tombstone outdates left out, deletes recorded as tombstones. Runs inside
 * the caller's transaction and returns the changes for the feed.
 */
import type pg from 'pg';
import { ms } from '../sql.ts';
import type { Change } from './feed.ts';
import { PAGE_RECORD, pageJson } from './rows.ts';
import type { MirrorEventInput } from './types.ts';

/**
 * Stores events as one page of a sync would: the last copy of an id wins, a cancelled single
 * event or master is removed with its exceptions, a cancelled instance stays as a tombstone, and
 * a copy older than the stored one is left out (a write through Calgate may have stored a newer
 * copy than a page fetched before it). A removed event leaves a tombstone (mirror_tombstones), so
 * a copy of it, or of one of its series' exceptions, last changed before the delete is left out
 * too: a page read before a write-through delete cannot store it again. Returns the changes for
 * the feed.
 */
export async function applyEvents(
  client: pg.PoolClient,
  calendarId: string,
  tenantId: string,
  generation: number,
  events: readonly MirrorEventInput[],
): Promise<Change[]> {
  const latest = new Map(events.map((event) => [event.eventId, event]));
  const removed: MirrorEventInput[] = [];
  const live: MirrorEventInput[] = [];
  for (const event of latest.values()) {
    (event.status === 'cancelled' && event.recurringEventId === null ? removed : live).push(event);
  }
  const changes: Change[] = [];
  const buried = await buriedIds(client, calendarId, live);
  const kept = live.filter((event) => !buried.has(event));
  if (kept.length > 0) {
    const { rows: prior } = await client.query<PriorRow>(
      `SELECT event_id, etag, status, ${UPDATED_MS} FROM mirror_events WHERE calendar_id = $1 AND event_id = ANY($2)`,
      [calendarId, kept.map((e) => e.eventId)],
    );
    const before = new Map(prior.map((row) => [row.event_id, row]));
    const newer = kept.filter((event) => !olderThan(event, before.get(event.eventId)));
    await upsertEvents(client, calendarId, tenantId, generation, newer);
    if (newer.length < kept.length) {
      // Seen by this sync even though kept as they are: a full sync must not sweep them.
      const seen = new Set(newer.map((event) => event.eventId));
      await client.query(
        `UPDATE mirror_events SET generation = $3 WHERE calendar_id = $1 AND event_id = ANY($2)`,
        [calendarId, kept.filter((e) => !seen.has(e.eventId)).map((e) => e.eventId), generation],
      );
    }
    for (const event of newer) {
      const old = before.get(event.eventId);
      if (old === undefined || old.etag !== event.etag || old.status !== event.status) {
        // A cancelled instance is an occurrence taken away: a delete for the feed's readers.
        changes.push({ eventId: event.eventId, kind: event.status === 'cancelled' ? 'delete' : 'upsert' });
      }
    }
  }
  if (removed.length > 0) {
    const ids = removed.map((e) => e.eventId);
    const { rows } = await client.query<{ event_id: string }>(
      `DELETE FROM mirror_events WHERE calendar_id = $1 AND (event_id = ANY($2) OR recurring_event_id = ANY($2))
       RETURNING event_id`,
      [calendarId, ids],
    );
    changes.push(...rows.map((row) => ({ eventId: row.event_id, kind: 'delete' as const })));
    await client.query(
      `INSERT INTO mirror_tombstones (calendar_id, tenant_id, event_id, deleted_at)
       SELECT $1, $2, t.event_id, coalesce(t.deleted_at, now())
       FROM unnest($3::text[], $4::timestamptz[]) AS t(event_id, deleted_at)
       ON CONFLICT (calendar_id, event_id) DO UPDATE SET
         deleted_at = greatest(mirror_tombstones.deleted_at, EXCLUDED.deleted_at)`,
      [calendarId, tenantId, ids, removed.map((e) => e.updated)],
    );
  }
  return changes;
}

/**
 * The incoming copies a tombstone outdates: the event, or the series it belongs to, was deleted
 * after the copy was last changed upstream (a copy without `updated` cannot show it is newer).
 * This is what keeps a sync page read before a write-through delete from storing the event again.
 */
async function buriedIds(
  client: pg.PoolClient,
  calendarId: string,
  events: readonly MirrorEventInput[],
): Promise<Set<MirrorEventInput>> {
  const buried = new Set<MirrorEventInput>();
  if (events.length === 0) {
    return buried;
  }
  const ids = [
    ...new Set(
      events.flatMap((e) => (e.recurringEventId === null ? [e.eventId] : [e.eventId, e.recurringEventId])),
    ),
  ];
  const { rows } = await client.query<{ event_id: string; deleted_at: number }>(
    `SELECT event_id, ${ms('deleted_at')} FROM mirror_tombstones WHERE calendar_id = $1 AND event_id = ANY($2)`,
    [calendarId, ids],
  );
  if (rows.length === 0) {
    return buried;
  }
  const deletedAt = new Map(rows.map((row) => [row.event_id, Number(row.deleted_at)]));
  const outdated = (id: string | null, event: MirrorEventInput) => {
    const at = id === null ? undefined : deletedAt.get(id);
    return at !== undefined && (event.updated === null || event.updated.getTime() <= at);
  };
  for (const event of events) {
    if (outdated(event.eventId, event) || outdated(event.recurringEventId, event)) {
      buried.add(event);
    }
  }
  return buried;
}

interface PriorRow {
  event_id: string;
  etag: string | null;
  status: string;
  updated: number | null;
}

const UPDATED_MS = ms('updated');

/** Whether the incoming copy is older than the stored one (Google's `updated` only moves forward). */
function olderThan(event: MirrorEventInput, stored: PriorRow | undefined): boolean {
  return (
    stored !== undefined &&
    stored.updated !== null &&
    event.updated !== null &&
    event.updated.getTime() < stored.updated &&
    stored.etag !== event.etag
  );
}

async function upsertEvents(
  client: pg.PoolClient,
  calendarId: string,
  tenantId: string,
  generation: number,
  events: readonly MirrorEventInput[],
): Promise<void> {
  if (events.length === 0) {
    return;
  }
  await client.query(
    `INSERT INTO mirror_events (calendar_id, tenant_id, generation, event_id, recurring_event_id,
       original_start, status, summary, description, location, all_day, start_at, end_at, start_date,
       end_date, start_time_zone, end_time_zone, recurrence, series_end, attendees, updated, etag, raw,
       search_doc)
     SELECT $1, $2, $3, r.event_id, r.recurring_event_id, r.original_start, r.status, r.summary,
       r.description, r.location, coalesce(r.all_day, false), r.start_at, r.end_at, r.start_date,
       r.end_date, r.start_time_zone, r.end_time_zone, coalesce(r.recurrence, ARRAY[]::text[]),
       r.series_end, r.attendees, r.updated, r.etag, r.raw, r.search_doc
     FROM jsonb_to_recordset($4::jsonb) AS ${PAGE_RECORD}
     ON CONFLICT (calendar_id, event_id) DO UPDATE SET
       generation = EXCLUDED.generation, recurring_event_id = EXCLUDED.recurring_event_id,
       original_start = EXCLUDED.original_start, status = EXCLUDED.status, summary = EXCLUDED.summary,
       description = EXCLUDED.description, location = EXCLUDED.location, all_day = EXCLUDED.all_day,
       start_at = EXCLUDED.start_at, end_at = EXCLUDED.end_at, start_date = EXCLUDED.start_date,
       end_date = EXCLUDED.end_date, start_time_zone = EXCLUDED.start_time_zone,
       end_time_zone = EXCLUDED.end_time_zone, recurrence = EXCLUDED.recurrence, series_end = EXCLUDED.series_end,
       attendees = EXCLUDED.attendees, updated = EXCLUDED.updated, etag = EXCLUDED.etag, raw = EXCLUDED.raw,
       search_doc = EXCLUDED.search_doc`,
    [calendarId, tenantId, generation, pageJson(events)],
  );
}
