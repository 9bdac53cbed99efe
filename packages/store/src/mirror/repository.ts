/**
 * The event mirror in Postgres: pages of a sync applied atomically, the change feed,
 * per-calendar sync state, range reads and search. Raw SQL through the pool: a page is one
 * upsert of a JSON record set, which Prisma cannot express.
 */
import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { FOREIGN_KEY_VIOLATION, ms, pgCode } from '../sql.ts';
import {
  EVENT_COLUMNS,
  eventFromRow,
  PAGE_RECORD,
  pageJson,
  type RawEventRow,
  type RawResourceRow,
  type RawStateRow,
  RESOURCE_COLUMNS,
  resourceFromRow,
  STATE_COLUMNS,
  stateFromRow,
} from './rows.ts';
import { matchSql, searchTerms } from './search.ts';
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
import { MIRROR_VERSIONS_CHANNEL } from './versions.ts';

/** Serialises change-feed appends, so feed ids become visible in id order (see the migration). */
const CHANGE_FEED_LOCK = 72707370;
const READ_LIMIT = 2500;
/**
 * Rows a first-rows read with text walks at most across a tenant's calendars (or 8 × the rows
 * asked for): a rare word ends the walk there, and the page is then complete up to where it
 * stopped (a merge reads on only if it needs to).
 */
const WALK_ROWS = 3000;
const SEARCH_LIMIT = 50;
/**
 * How many of the newest matches a search ranks (see search()): 200 keeps p95 under 20 ms on
 * 100,000 rows where common words match 4,000–18,000 (bench/results/mirror.md).
 */
const SEARCH_CANDIDATES = 200;
const ERROR_MAX = 500;
/**
 * How long a deleted event's tombstone keeps older copies out (see buriedIds): far longer than a
 * sync takes between reading a page and applying it.
 */
const TOMBSTONE_TTL = "interval '1 hour'";

/**
 * Moves a calendar's mirror version on when `condition` holds (SQL): the events it was computed
 * from changed (see the mirror_version migration).
 */
const NEXT_VERSION_IF = (condition: string) =>
  `version = CASE WHEN ${condition} THEN nextval('mirror_version_seq') ELSE version END`;

/**
 * Tells listening gateways (MirrorVersionListener) that these calendars' mirror state changed,
 * when the transaction commits.
 */
async function announce(client: pg.PoolClient, calendarIds: readonly string[]): Promise<void> {
  if (calendarIds.length > 0) {
    await client.query('SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id', [
      MIRROR_VERSIONS_CHANNEL,
      [...calendarIds],
    ]);
  }
}

interface Change {
  eventId: string;
  kind: 'upsert' | 'delete';
}

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
    const rows = await this.#readWindow<RawEventRow>(EVENT_COLUMNS, [calendarId], query);
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
    for (const row of await this.#readWindow<RawResourceRow>(RESOURCE_COLUMNS, calendarIds, query)) {
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
    if (calendarIds.length === 0) {
      return new Map();
    }
    const params: unknown[] = [[...calendarIds]];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    let match = 'TRUE';
    let matched = '';
    if (query.query !== undefined) {
      const terms = searchTerms(query.query);
      if (terms === null) {
        return new Map(calendarIds.map((id) => [id, { rows: [], throughMs: null }]));
      }
      match = matchSql(terms, param);
      matched = `, ${match} AS matched`;
    }
    const min = query.timeMin ?? null;
    const max = query.timeMax ?? null;
    // Masters and moved occurrences are matched coarsely (they are few); the rows read in start
    // order exactly, all-day ones with their slack (firstArms).
    const arms = windowArms(shifted(min, -ALL_DAY_SLACK_MS), shifted(max, ALL_DAY_SLACK_MS), param);
    const firstParts = firstArms(min, max, param);
    const limit = Math.min(Math.max(1, query.first), READ_LIMIT);
    const first = param(limit);
    // Series masters and moved occurrences of the window are few. Without text every one is
    // read. With text, matching is done row by row (`IS TRUE` keeps the planner off the text
    // indexes: a prefix probe per calendar costs far more than matching a few rows): matching
    // masters, and the moved occurrences that match or belong to a matching master (one that
    // does not match still hides the instance it replaces: matched says so, without its body).
    const xColumns = `${
      query.query === undefined
        ? RESOURCE_COLUMNS
        : RESOURCE_COLUMNS.replace('e.raw', `CASE WHEN ${match} THEN e.raw END AS raw`)
    }${matched}, 'x' AS arm, NULL::float8 AS start_ms`;
    const xArm =
      query.query === undefined
        ? `SELECT ${xColumns} FROM mirror_events e
           WHERE e.calendar_id = ANY($1) AND ((${arms.masters}) OR (${arms.moved}))`
        : `SELECT * FROM xm
           UNION ALL
           SELECT ${xColumns} FROM mirror_events e
           WHERE e.calendar_id = ANY($1) AND ${arms.moved}
             AND ((${match}) IS TRUE OR (e.calendar_id, e.recurring_event_id) IN (SELECT calendar_id, event_id FROM xm))`;
    const xMasters =
      query.query === undefined
        ? ''
        : `xm AS (SELECT ${xColumns} FROM mirror_events e
             WHERE e.calendar_id = ANY($1) AND ${arms.masters} AND (${match}) IS TRUE)`;
    // Ordered branches per calendar (its range index in (start_at, event_id) order): the
    // planner merges them (Merge Append) and stops after the first rows of all of them.
    const fColumns = `${RESOURCE_COLUMNS}${matched}, 'f' AS arm, ${ms('e.start_at', 'start_ms')}, e.start_at AS sort_at`;
    const branch = (calendars: string, part: string) => `(SELECT ${fColumns} FROM mirror_events e
          WHERE e.calendar_id ${calendars} AND e.recurrence = '{}'::text[] AND ${part} AND ${match}
          ORDER BY e.start_at, e.event_id LIMIT ${first})`;
    // Over several calendars of one tenant, one walk of the tenant's rows in start order
    // (mirror_events_tenant_first_idx) replaces the branch per calendar, whose planning costs
    // more than the read. It stops at the first rows of those calendars (that match), or after
    // walkLimit rows (a rare word, or few of the tenant's calendars asked for): then its last row
    // comes back as arm 'w', saying where the walk ended.
    const walk = query.tenantId !== undefined && calendarIds.length > 1;
    const walkLimit = Math.max(WALK_ROWS, limit * 8);
    const walkBranch = (): string => {
      const end = param(walkLimit);
      const columns = fColumns.replace("'f' AS arm", "CASE WHEN w.hit THEN 'f' ELSE 'w' END AS arm");
      return `(SELECT ${columns}
        FROM (SELECT e.calendar_id, e.event_id, e.start_at,
                (e.calendar_id = ANY($1) AND (${match}) IS TRUE) AS hit,
                row_number() OVER (ORDER BY e.start_at, e.event_id) AS n
              FROM mirror_events e
              WHERE e.tenant_id = ${param(query.tenantId)} AND e.recurrence = '{}'::text[] AND ${firstParts.startsInWindow}
              ORDER BY e.start_at, e.event_id
              LIMIT ${end}) w
        JOIN mirror_events e USING (calendar_id, event_id)
        WHERE w.hit OR w.n = ${end}
        ORDER BY w.start_at, w.event_id LIMIT ${first})`;
    };
    const branches = walk
      ? [walkBranch()]
      : calendarIds.map((id) => branch(`= ${param(id)}`, firstParts.startsInWindow));
    if (firstParts.spanning !== null) {
      // Rows that started before the window: one probe of all the calendars, sorted apart.
      branches.push(branch('= ANY($1)', firstParts.spanning));
    }
    const sqlText = `${xMasters === '' ? '' : `WITH ${xMasters} `}(${xArm})
       UNION ALL
       (SELECT calendar_id, event_id, recurring_event_id, original_start, status, etag, raw${query.query === undefined ? '' : ', matched'}, arm, start_ms
        FROM (${branches.join(' UNION ALL ')}) f
        ORDER BY sort_at, event_id
        LIMIT ${first})`;
    const { rows } = await this.#pool.query<
      RawResourceRow & { arm: 'f' | 'x' | 'w'; start_ms: number | null }
    >(sqlText, params);
    const out = new Map<string, { rows: MirrorResourceRow[]; seen: Set<string> }>(
      calendarIds.map((id) => [id, { rows: [], seen: new Set() }]),
    );
    let firsts = 0;
    let last: number | null = null;
    let walkedEnd: number | null = null;
    for (const row of rows) {
      if (row.arm === 'w') {
        // The walk stopped at its limit: rows from its last start on were not looked at.
        walkedEnd = row.start_ms;
        continue;
      }
      const entry = out.get(row.calendar_id);
      if (entry === undefined) {
        continue;
      }
      if (row.arm === 'f') {
        firsts += 1;
        last = last === null || (row.start_ms ?? 0) > last ? row.start_ms : last;
      }
      if (!entry.seen.has(row.event_id)) {
        entry.seen.add(row.event_id);
        entry.rows.push(resourceFromRow(row));
      }
    }
    const found = firsts < limit ? null : last;
    const throughMs = walkedEnd === null ? found : found === null ? walkedEnd : Math.min(found, walkedEnd);
    return new Map([...out].map(([id, entry]) => [id, { rows: entry.rows, throughMs }]));
  }

  /** The stored rows of the given event ids (as readResources returns them). */
  async resources(calendarId: string, eventIds: readonly string[]): Promise<MirrorResourceRow[]> {
    const { rows } = await this.#pool.query<RawResourceRow>(
      `SELECT ${RESOURCE_COLUMNS} FROM mirror_events e WHERE e.calendar_id = $1 AND e.event_id = ANY($2)`,
      [calendarId, [...eventIds]],
    );
    return rows.map(resourceFromRow);
  }

  /** Rows of each calendar in the window (LIMIT per calendar), in start order per calendar. */
  async #readWindow<R>(
    columns: string,
    calendarIds: readonly string[],
    query: MirrorRangeQuery,
  ): Promise<(R & { matched?: boolean })[]> {
    const params: unknown[] = [[...calendarIds]];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    let match = '';
    let matched = '';
    if (query.query !== undefined) {
      const terms = searchTerms(query.query);
      if (terms === null) {
        return [];
      }
      const sql = matchSql(terms, param);
      if (query.withExceptions === true) {
        match = `AND (${sql} OR e.recurring_event_id IS NOT NULL)`;
        matched = `, ${sql} AS matched`;
      } else {
        match = `AND ${sql}`;
      }
    }
    const window = windowSql(query.timeMin ?? null, query.timeMax ?? null, param);
    const limit = param(Math.min(query.limit ?? READ_LIMIT, READ_LIMIT));
    // One index probe per calendar (LATERAL), so each gets its own limit and plan.
    const { rows } = await this.#pool.query<R & { matched?: boolean }>(
      `SELECT r.* FROM unnest($1::text[]) WITH ORDINALITY AS k(id, n)
       CROSS JOIN LATERAL (
         SELECT ${columns}${matched} FROM mirror_events e
         WHERE e.calendar_id = k.id ${match} ${window}
         ORDER BY e.start_at NULLS LAST, e.event_id
         LIMIT ${limit}
       ) r
       ORDER BY k.n`,
      params,
    );
    return rows;
  }

  /**
   * Events of the given calendars matching text as every search does (@calgate/core: words in
   * any order, accents and case folded, word beginnings over text and people), best first by
   * how close the summary is to the text. Only the calendars passed in are read;
   * the caller passes the ones the key may read. Cancelled rows are never returned.
   *
   * A common word matches thousands of rows, so ranking is bounded: the newest matches by start
   * (SEARCH_CANDIDATES of them, or `limit` if more) are ranked on their keys and ranking columns
   * only, and just the winners are fetched whole. A match older than those is not returned even
   * if it would rank higher. Finding the newest matches walks mirror_events_recent_idx newest
   * first and stops early when matches are common; for rare words the planner uses the document's
   * trigram index instead (see the mirror_speed and search_documents migrations).
   */
  async search(
    calendarIds: readonly string[],
    text: string,
    limit = SEARCH_LIMIT,
  ): Promise<MirrorSearchHit[]> {
    const terms = searchTerms(text);
    if (terms === null || calendarIds.length === 0) {
      return [];
    }
    const params: unknown[] = [[...calendarIds]];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const match = matchSql(terms, param);
    const folded = param(terms.text);
    const winners = param(Math.min(limit, READ_LIMIT));
    const candidates = param(Math.max(SEARCH_CANDIDATES, Math.min(limit, READ_LIMIT)));
    const { rows } = await this.#pool.query<RawEventRow & { rank: number }>(
      `WITH candidates AS (
         SELECT e.calendar_id, e.event_id, e.start_at, e.summary_folded
         FROM mirror_events e
         WHERE e.calendar_id = ANY($1) AND e.status <> 'cancelled' AND ${match}
         ORDER BY e.start_at DESC NULLS LAST, e.calendar_id, e.event_id
         LIMIT ${candidates}
       ), hits AS (
         SELECT c.calendar_id, c.event_id, similarity(c.summary_folded, ${folded})::float8 AS rank
         FROM candidates c
         ORDER BY rank DESC, c.start_at DESC NULLS LAST, c.calendar_id, c.event_id
         LIMIT ${winners}
       )
       SELECT ${EVENT_COLUMNS}, h.rank
       FROM hits h JOIN mirror_events e USING (calendar_id, event_id)
       ORDER BY h.rank DESC, e.start_at DESC NULLS LAST, calendar_id, event_id`,
      params,
    );
    return rows.map((row) => ({ event: eventFromRow(row), rank: row.rank }));
  }

  /** Feed rows after `cursor` (0 for the beginning), oldest first, and the cursor to pass next. */
  async changesSince(cursor: bigint, limit = 500): Promise<{ changes: MirrorChange[]; cursor: bigint }> {
    const { rows } = await this.#pool.query<{
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

/**
 * Stores events as one page of a sync would: the last copy of an id wins, a cancelled single
 * event or master is removed with its exceptions, a cancelled instance stays as a tombstone, and
 * a copy older than the stored one is left out (a write through Calgate may have stored a newer
 * copy than a page fetched before it). A removed event leaves a tombstone (mirror_tombstones), so
 * a copy of it, or of one of its series' exceptions, last changed before the delete is left out
 * too: a page read before a write-through delete cannot store it again. Returns the changes for
 * the feed.
 */
async function applyEvents(
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

async function appendChanges(
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

/**
 * The time part of a window read, as an OR of three arms each with its own index (see the
 * mirror_speed migration): series masters starting before the end, events overlapping the
 * window, exceptions whose original start is in it. Bounds left out are not filtered on; the
 * SQL is built per call so no arm carries an `$n IS NULL OR …` the planner cannot index.
 */
function windowSql(min: Date | null, max: Date | null, param: (value: unknown) => string): string {
  if (min === null && max === null) {
    return '';
  }
  const { masters, overlapping, moved } = windowArms(min, max, param);
  return `AND (${[masters, overlapping, moved].map((arm) => `(${arm})`).join(' OR ')})`;
}

/** The three arms of windowSql, each a condition on `e` (TRUE-free when a bound is left out). */
/**
 * How far an all-day row's instants in a calendar's zone can be from its stored start and end
 * (its dates' UTC midnights): zones run from UTC−12 to UTC+14.
 */
const ALL_DAY_SLACK_MS = 14 * 3_600_000;

const shifted = (date: Date | null, byMs: number) => (date === null ? null : new Date(date.getTime() + byMs));

/**
 * The parts of a first-rows read that come in the range index's order: rows starting in the
 * window (the index walked from the window's start, not from the calendar's first event), and
 * rows that started before it and still run (a GiST probe of the window's first instant; few).
 * Timed rows are matched exactly; all-day rows with ALL_DAY_SLACK_MS. Plain comparisons also
 * keep the planner's estimates close (a GiST probe's made it prefer a text index probe per
 * calendar over walking by start).
 */
function firstArms(
  min: Date | null,
  max: Date | null,
  param: (value: unknown) => string,
): { startsInWindow: string; spanning: string | null } {
  const lo = min === null ? null : param(min);
  const loSlack = min === null ? null : param(shifted(min, -ALL_DAY_SLACK_MS));
  const hiSlack = max === null ? null : param(shifted(max, ALL_DAY_SLACK_MS));
  // Rows starting up to the slack after the window are few and come last; the caller drops the
  // timed ones (a plain bound keeps planning cheap: one per calendar).
  const beforeEnd = hiSlack === null ? [] : [`e.start_at < ${hiSlack}`];
  return {
    startsInWindow: [
      'e.start_at IS NOT NULL',
      ...(lo === null ? [] : [`e.start_at >= ${lo}`]),
      ...beforeEnd,
    ].join(' AND '),
    spanning:
      lo === null
        ? null
        : [
            `e.start_at < ${lo}`,
            `tstzrange(e.start_at, greatest(e.start_at, e.end_at), '[]') && tstzrange(${loSlack}::timestamptz, ${lo}::timestamptz, '[]')`,
            `(e.end_at > ${lo} OR (e.all_day AND e.end_at > ${loSlack}))`,
            ...beforeEnd,
          ].join(' AND '),
  };
}

function windowArms(
  min: Date | null,
  max: Date | null,
  param: (value: unknown) => string,
): { masters: string; overlapping: string; moved: string } {
  const lo = min === null ? null : param(min);
  const hi = max === null ? null : param(max);
  const before = (column: string) => (hi === null ? [] : [`${column} < ${hi}`]);
  const from = (column: string, op: string) => (lo === null ? [] : [`${column} ${op} ${lo}`]);
  // The GiST probe only narrows the rows; the exact filters beside it decide. Its window is
  // ordered so tstzrange accepts it even when min > max (the filters then still apply).
  const span =
    min !== null && max !== null && min > max
      ? `tstzrange(${hi}::timestamptz, ${lo}::timestamptz, '[]')`
      : `tstzrange(${lo ?? 'NULL'}::timestamptz, ${hi ?? 'NULL'}::timestamptz, '[]')`;
  const overlapping =
    min === null && max === null
      ? ['e.start_at IS NOT NULL']
      : [
          `tstzrange(e.start_at, greatest(e.start_at, e.end_at), '[]') && ${span}`,
          ...before('e.start_at'),
          ...from('e.end_at', '>'),
        ];
  return {
    masters: [
      'cardinality(e.recurrence) > 0',
      ...before('e.start_at'),
      ...(lo === null ? [] : [`(e.series_end IS NULL OR e.series_end > ${lo})`]),
    ].join(' AND '),
    overlapping: overlapping.join(' AND '),
    moved: [
      'e.original_start IS NOT NULL',
      ...before('e.original_start'),
      ...from('e.original_start', '>='),
    ].join(' AND '),
  };
}
