/**
 * What a change to a calendar's mirrored events leaves behind, inside the transaction that makes
 * it: the calendar's version moved on, an announcement to listening gateways, and rows of the
 * change feed that consumers read with a cursor (MirrorFeedCursors).
 */
import type pg from 'pg';
import type { MirrorChange } from './types.ts';
import { MIRROR_VERSIONS_CHANNEL } from './versions.ts';

/** Serialises change-feed appends, so feed ids become visible in id order (see the migration). */
const CHANGE_FEED_LOCK = 72707370;

/**
 * Moves a calendar's mirror version on when `condition` holds (SQL): the events it was computed
 * from changed (see the mirror_version migration).
 */
export const NEXT_VERSION_IF = (condition: string) =>
  `version = CASE WHEN ${condition} THEN nextval('mirror_version_seq') ELSE version END`;

/**
 * Tells listening gateways (MirrorVersionListener) that these calendars' mirror state changed,
 * when the transaction commits.
 */
export async function announce(client: pg.PoolClient, calendarIds: readonly string[]): Promise<void> {
  if (calendarIds.length > 0) {
    await client.query('SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id', [
      MIRROR_VERSIONS_CHANNEL,
      [...calendarIds],
    ]);
  }
}

/** One event's change, as a feed row records it. */
export interface Change {
  eventId: string;
  kind: 'upsert' | 'delete';
}

export async function appendChanges(
  client: pg.PoolClient,
  calendarId: string,
  tenantId: string,
  changes: readonly Change[],
): Promise<void> {
  if (changes.length === 0) {
    return;
  }
  // Last in the transaction, so the lock is held only until the commit that follows.
  await client.query('SELECT pg_advisory_xact_lock($1)', [CHANGE_FEED_LOCK]);
  await client.query(
    `INSERT INTO mirror_changes (tenant_id, calendar_id, event_id, kind)
     SELECT $1, $2, c.event_id, c.kind FROM unnest($3::text[], $4::text[]) AS c(event_id, kind)`,
    [tenantId, calendarId, changes.map((c) => c.eventId), changes.map((c) => c.kind)],
  );
}

/** Feed rows after `cursor` (0 for the beginning), oldest first, and the cursor to pass next. */
export async function readFeed(
  pool: pg.Pool,
  cursor: bigint,
  limit: number,
): Promise<{ changes: MirrorChange[]; cursor: bigint }> {
  const { rows } = await pool.query<{
    id: string;
    tenant_id: string;
    calendar_id: string;
    event_id: string;
    kind: 'upsert' | 'delete';
    at: Date;
  }>(
    `SELECT id, tenant_id, calendar_id, event_id, kind, at FROM mirror_changes WHERE id > $1 ORDER BY id LIMIT $2`,
    [cursor.toString(), limit],
  );
  const changes = rows.map((row) => ({
    id: BigInt(row.id),
    tenantId: row.tenant_id,
    calendarId: row.calendar_id,
    eventId: row.event_id,
    kind: row.kind,
    at: row.at,
  }));
  return { changes, cursor: changes.at(-1)?.id ?? cursor };
}
