/**
 * The event mirror in Postgres: pages of a sync applied atomically, the change feed,
 * per-calendar sync state, range reads and search. Raw SQL through the pool: a page is one
 * upsert of a JSON record set, which Prisma cannot express. The parts live beside it: applying
 * events (apply.ts), the feed and announcements (feed.ts), window SQL (window-sql.ts), reads
 * and search (reads.ts, read-first.ts).
 */
import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { FOREIGN_KEY_VIOLATION, ms, pgCode } from '../sql.ts';
import { applyEvents } from './apply.ts';
import { announce, appendChanges, NEXT_VERSION_IF, readFeed } from './feed.ts';
import { readFirstRows } from './read-first.ts';
import { readWindow, SEARCH_LIMIT, searchEvents } from './reads.ts';
import {
  EVENT_COLUMNS,
  eventFromRow,
  type RawEventRow,
  type RawResourceRow,
  type RawStateRow,
  RESOURCE_COLUMNS,
  resourceFromRow,
  STATE_COLUMNS,
  stateFromRow,
} from './rows.ts';
import type {
  MirrorChange,
  MirrorEventInput,
  MirrorEventRow,
  MirrorFreshness,
  MirrorRangeQuery,
  MirrorResourceRow,
  MirrorSearchHit,
  MirrorSink,
  MirrorSyncState,
  PageEnd,
  PageOutcome,
} from './types.ts';

const ERROR_MAX = 500;
/**
 * How long a deleted event's tombstone keeps older copies out (see buriedIds): far longer than a
 * sync takes between reading a page and applying it.
 */
const TOMBSTONE_TTL = "interval '1 hour'";

export class MirrorRepository implements MirrorSink {
  readonly #pool: pg.Pool;

  constructor(db: Pick<Database, 'pool'>) {
    this.#pool = db.pool;
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** Creates the calendar's state row if needed and locks it: one writer per calendar at a time. */
  async #lockState(client: pg.PoolClient, calendarId: string, tenantId: string): Promise<MirrorSyncState> {
    try {
      await client.query(
        `INSERT INTO mirror_sync_state (calendar_id, tenant_id) VALUES ($1, $2) ON CONFLICT (calendar_id) DO NOTHING`,
        [calendarId, tenantId],
      );
    } catch (error) {
      if (pgCode(error).code === FOREIGN_KEY_VIOLATION) {
        throw new CalgateError('not_found', `Calendar '${calendarId}' was not found.`);
      }
      throw error;
    }
    const { rows } = await client.query<RawStateRow>(
      `SELECT ${STATE_COLUMNS} FROM mirror_sync_state WHERE calendar_id = $1 FOR UPDATE`,
      [calendarId],
    );
    const row = rows[0];
    if (row === undefined || row.tenant_id !== tenantId) {
      throw new CalgateError('not_found', `Calendar '${calendarId}' was not found.`);
    }
    return stateFromRow(row);
  }

  async syncState(calendarId: string): Promise<MirrorSyncState | null> {
    const { rows } = await this.#pool.query<RawStateRow>(
      `SELECT ${STATE_COLUMNS} FROM mirror_sync_state WHERE calendar_id = $1`,
      [calendarId],
    );
    return rows[0] === undefined ? null : stateFromRow(rows[0]);
  }

  /**
   * Applies one page of a sync in one transaction: events upserted (a cancelled single event or
   * master deleted, with its exceptions; a cancelled instance kept as a tombstone), a feed row
   * for each event that really changed (same etag: no row, so a page applied twice adds
   * nothing), and the state moved on: the next page token, or on the last page the new sync
   * token (a full sync's last page also removes the rows it did not see).
   */
  async applyPage(
    calendarId: string,
    tenantId: string,
    events: readonly MirrorEventInput[],
    end: PageEnd,
  ): Promise<PageOutcome> {
    const nextPage = end.nextPageToken ?? null;
    const nextSync = end.nextSyncToken ?? null;
    if (nextPage === null && nextSync === null) {
      throw new CalgateError(
        'invalid_argument',
        `A page of calendar '${calendarId}' must end with a next page token or a next sync token.`,
      );
    }
    return this.#transaction(async (client) => {
      const state = await this.#lockState(client, calendarId, tenantId);
      const changes = await applyEvents(client, calendarId, tenantId, state.generation, events);
      let swept = 0;
      let changed = events.length > 0;
      if (nextPage !== null) {
        await client.query(
          `UPDATE mirror_sync_state SET page_token = $2, status = 'syncing', updated_at = now(),
             ${NEXT_VERSION_IF('$3')} WHERE calendar_id = $1`,
          [calendarId, nextPage, changed],
        );
      } else {
        const full = state.syncToken === null;
        if (full) {
          const { rows } = await client.query<{ event_id: string }>(
            `DELETE FROM mirror_events WHERE calendar_id = $1 AND generation < $2 RETURNING event_id`,
            [calendarId, state.generation],
          );
          swept = rows.length;
          changes.push(...rows.map((row) => ({ eventId: row.event_id, kind: 'delete' as const })));
        }
        changed ||= swept > 0;
        await client.query(
          `DELETE FROM mirror_tombstones WHERE calendar_id = $1 AND deleted_at < now() - ${TOMBSTONE_TTL}`,
          [calendarId],
        );
        await client.query(
          `UPDATE mirror_sync_state SET sync_token = $2, page_token = NULL, status = 'ok', error = NULL,
             synced_at = LEAST(now(), COALESCE(to_timestamp($4::double precision / 1000), now())),
             full_sync_at = CASE WHEN $3 THEN now() ELSE full_sync_at END, updated_at = now(),
             ${NEXT_VERSION_IF('$5')}
           WHERE calendar_id = $1`,
          [calendarId, nextSync, full, end.readAt ?? null, changed],
        );
      }
      if (changed) {
        await announce(client, [calendarId]);
      }
      await appendChanges(client, calendarId, tenantId, changes);
      const upserted = changes.filter((c) => c.kind === 'upsert').length;
      return { upserted, deleted: changes.length - upserted - swept, swept };
    });
  }

  /**
   * Write-through: what Google answered to a write made through Calgate, stored at once so the
   * next read shows it without waiting for a sync. Only a calendar whose first full sync is done
   * takes it (before that the mirror does not answer reads); the sync token stays, so the next
   * incremental sync brings the same event again and changes nothing. Returns whether it was stored.
   */
  async applyWrite(
    calendarId: string,
    tenantId: string,
    events: readonly MirrorEventInput[],
  ): Promise<boolean> {
    return this.#transaction(async (client) => {
      const { rows } = await client.query<{ generation: number }>(
        `SELECT generation FROM mirror_sync_state
         WHERE calendar_id = $1 AND tenant_id = $2 AND sync_token IS NOT NULL FOR UPDATE`,
        [calendarId, tenantId],
      );
      const state = rows[0];
      if (state === undefined) {
        return false;
      }
      const changes = await applyEvents(client, calendarId, tenantId, state.generation, events);
      if (events.length > 0) {
        await client.query(`UPDATE mirror_sync_state SET ${NEXT_VERSION_IF('TRUE')} WHERE calendar_id = $1`, [
          calendarId,
        ]);
        await announce(client, [calendarId]);
      }
      await appendChanges(client, calendarId, tenantId, changes);
      return true;
    });
  }

  /**
   * What a read needs to know to trust the mirror: whether the first full sync is done, when the
   * last sync finished, when Google last pushed a change, whether a push channel is open, and
   * the version of the calendar's events.
   * A calendar never synced has no entry.
   */
  async freshness(calendarIds: readonly string[]): Promise<Map<string, MirrorFreshness>> {
    const { rows } = await this.#pool.query<{
      calendar_id: string;
      ready: boolean;
      synced_at: number | null;
      pushed_at: number | null;
      watched: boolean;
      version: string;
    }>(
      `SELECT s.calendar_id, s.sync_token IS NOT NULL AS ready, s.version, ${ms('s.synced_at', 'synced_at')},
         ${ms('s.pushed_at', 'pushed_at')},
         EXISTS (SELECT 1 FROM mirror_channels c WHERE c.calendar_id = s.calendar_id AND c.expiration > now()) AS watched
       FROM mirror_sync_state s WHERE s.calendar_id = ANY($1)`,
      [[...calendarIds]],
    );
    return new Map(
      rows.map((row) => [
        row.calendar_id,
        {
          ready: row.ready,
          syncedAt: row.synced_at,
          pushedAt: row.pushed_at,
          watched: row.watched,
          version: row.version,
        },
      ]),
    );
  }

  /**
   * Starts a full sync over (first sync, or after Google answered 410 Gone): tokens dropped and
   * a new generation, so the rows the full sync does not see are removed when it completes.
   * Rows stay meanwhile: reads keep answering from the last known state.
   */
  resetForFullSync(calendarId: string, tenantId: string): Promise<MirrorSyncState> {
    return this.#transaction(async (client) => {
      await this.#lockState(client, calendarId, tenantId);
      const { rows } = await client.query<RawStateRow>(
        `UPDATE mirror_sync_state SET sync_token = NULL, page_token = NULL, status = 'syncing',
           generation = generation + $2, updated_at = now()
         WHERE calendar_id = $1 RETURNING ${STATE_COLUMNS}`,
        [calendarId, 1],
      );
      // Not ready while the full sync runs: readers that remembered it was must ask again.
      await announce(client, [calendarId]);
      return stateFromRow(rows[0] as RawStateRow);
    });
  }

  /** Keeps why the last sync failed; the tokens stay, so the next attempt resumes. */
  async recordFailure(calendarId: string, tenantId: string, message: string): Promise<void> {
    await this.#pool.query(
      `INSERT INTO mirror_sync_state (calendar_id, tenant_id, status, error) VALUES ($1, $2, 'error', $3)
       ON CONFLICT (calendar_id) DO UPDATE SET status = 'error', error = $3, updated_at = now()`,
      [calendarId, tenantId, message.slice(0, ERROR_MAX)],
    );
  }

  /**
   * A calendar's events for a window: single events and exceptions overlapping it, exceptions
   * whose original start falls in it (moved away or cancelled: the caller needs them to expand
   * series), and every series master starting before its end. Cancelled single events are never
   * stored; cancelled instances come back with status 'cancelled'.
   */
  async read(calendarId: string, query: MirrorRangeQuery = {}): Promise<MirrorEventRow[]> {
    const rows = await readWindow<RawEventRow>(this.#pool, EVENT_COLUMNS, [calendarId], query);
    return rows.map((row) => {
      const event: MirrorEventRow = eventFromRow(row);
      if (row.matched !== undefined) {
        event.matched = row.matched;
      }
      return event;
    });
  }

  /**
   * read() for several calendars at once, with only what answering a listing needs: ids, status
   * and the resource as Google sent it (every other column is derived from it). `limit` applies
   * to each calendar. Every calendar asked for has an entry.
   */
  async readResources(
    calendarIds: readonly string[],
    query: MirrorRangeQuery = {},
  ): Promise<Map<string, MirrorResourceRow[]>> {
    const out = new Map<string, MirrorResourceRow[]>(calendarIds.map((id) => [id, []]));
    for (const row of await readWindow<RawResourceRow>(this.#pool, RESOURCE_COLUMNS, calendarIds, query)) {
      out.get(row.calendar_id)?.push(resourceFromRow(row));
    }
    return out;
  }

  /**
   * readResources() for listings in start order that need only their first `first` events, of
   * one calendar or of several to be merged: every series master and moved occurrence of the
   * window (instances can fall anywhere), and the first `first` other rows by (start, id) of all
   * the calendars together. The calendars' index scans are merged and stop together, so a
   * listing over 30 calendars reads about `first` such rows rather than 30 × `first`.
   * `throughMs`, the same for every calendar, says how far those rows are complete: every row
   * not returned starts at or after it (null when nothing was left out). Every calendar asked
   * for has an entry. The window is taken as it is: all-day rows, stored at their dates' UTC
   * midnights, are matched with ALL_DAY_SLACK_MS on either side, and the caller filters exactly.
   */
  async readFirst(
    calendarIds: readonly string[],
    query: MirrorRangeQuery & { first: number },
  ): Promise<Map<string, { rows: MirrorResourceRow[]; throughMs: number | null }>> {
    return readFirstRows(this.#pool, calendarIds, query);
  }

  /** The stored rows of the given event ids (as readResources returns them). */
  async resources(calendarId: string, eventIds: readonly string[]): Promise<MirrorResourceRow[]> {
    const { rows } = await this.#pool.query<RawResourceRow>(
      `SELECT ${RESOURCE_COLUMNS} FROM mirror_events e WHERE e.calendar_id = $1 AND e.event_id = ANY($2)`,
      [calendarId, [...eventIds]],
    );
    return rows.map(resourceFromRow);
  }

  /**
   * Events of the given calendars matching text as every search does (@calgate/core: words in
   * any order, accents and case folded, word beginnings over text and people), best first by
   * how close the summary is to the text. Only the calendars passed in are read;
   * the caller passes the ones the key may read. Cancelled rows are never returned.
   */
  async search(
    calendarIds: readonly string[],
    text: string,
    limit = SEARCH_LIMIT,
  ): Promise<MirrorSearchHit[]> {
    return searchEvents(this.#pool, calendarIds, text, limit);
  }

  /** Feed rows after `cursor` (0 for the beginning), oldest first, and the cursor to pass next. */
  async changesSince(cursor: bigint, limit = 500): Promise<{ changes: MirrorChange[]; cursor: bigint }> {
    return readFeed(this.#pool, cursor, limit);
  }

  /** Forgets a calendar's mirror: events, sync state and feed rows. Returns the events removed. */
  deleteCalendar(calendarId: string): Promise<number> {
    return this.#purge('calendar_id = $1', [calendarId]);
  }

  /** Forgets the mirror of every calendar of a connection (the account was disconnected). */
  deleteConnection(tenantId: string, connectionId: string): Promise<number> {
    return this.#purge(
      'calendar_id IN (SELECT id FROM calendars WHERE tenant_id = $1 AND connection_id = $2)',
      [tenantId, connectionId],
    );
  }

  #purge(where: string, params: unknown[]): Promise<number> {
    return this.#transaction(async (client) => {
      const { rowCount } = await client.query(`DELETE FROM mirror_events WHERE ${where}`, params);
      const { rows } = await client.query<{ calendar_id: string }>(
        `DELETE FROM mirror_sync_state WHERE ${where} RETURNING calendar_id`,
        params,
      );
      await announce(
        client,
        rows.map((row) => row.calendar_id),
      );
      await client.query(`DELETE FROM mirror_changes WHERE ${where}`, params);
      await client.query(`DELETE FROM mirror_tombstones WHERE ${where}`, params);
      return rowCount ?? 0;
    });
  }
}
