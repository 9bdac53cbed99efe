/**
 * Window reads of the mirror (rows of each calendar in a window, one index probe per calendar)
 * and its ranked text search.
 */
import type pg from 'pg';
import { sqlParams } from '../sql.ts';
import { EVENT_COLUMNS, eventFromRow, type RawEventRow } from './rows.ts';
import { matchSql, searchTerms } from './search.ts';
import type { MirrorRangeQuery, MirrorSearchHit } from './types.ts';
import { windowSql } from './window-sql.ts';

export const READ_LIMIT = 2500;
export const SEARCH_LIMIT = 50;
/**
 * How many of the newest matches a search ranks (see searchEvents()): 200 keeps p95 under 20 ms on
 * 100,000 rows where common words match 4,000–18,000 (bench/results/mirror.md).
 */
const SEARCH_CANDIDATES = 200;

/** Rows of each calendar in the window (LIMIT per calendar), in start order per calendar. */
export async function readWindow<R>(
  pool: pg.Pool,
  columns: string,
  calendarIds: readonly string[],
  query: MirrorRangeQuery,
): Promise<(R & { matched?: boolean })[]> {
  const { params, param } = sqlParams([...calendarIds]);
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
  const { rows } = await pool.query<R & { matched?: boolean }>(
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
 * MirrorRepository.search: a common word matches thousands of rows, so ranking is bounded: the
 * newest matches by start (SEARCH_CANDIDATES of them, or `limit` if more) are ranked on their
 * keys and ranking columns only, and just the winners are fetched whole. A match older than
 * those is not returned even if it would rank higher. Finding the newest matches walks
 * mirror_events_recent_idx newest first and stops early when matches are common; for rare words
 * the planner uses the document's trigram index instead (see the mirror_speed and
 * search_documents migrations).
 */
export async function searchEvents(
  pool: pg.Pool,
  calendarIds: readonly string[],
  text: string,
  limit: number,
): Promise<MirrorSearchHit[]> {
  const terms = searchTerms(text);
  if (terms === null || calendarIds.length === 0) {
    return [];
  }
  const { params, param } = sqlParams([...calendarIds]);
  const match = matchSql(terms, param);
  const folded = param(terms.text);
  const winners = param(Math.min(limit, READ_LIMIT));
  const candidates = param(Math.max(SEARCH_CANDIDATES, Math.min(limit, READ_LIMIT)));
  const { rows } = await pool.query<RawEventRow & { rank: number }>(
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
