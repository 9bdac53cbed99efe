/**
 * First-rows reads: listings in start order that need only their first events, of one calendar
 * or of several to be merged (see MirrorRepository.readFirst).
 */
import type pg from 'pg';
import { ms, sqlParams } from '../sql.ts';
import { READ_LIMIT } from './reads.ts';
import { type RawResourceRow, RESOURCE_COLUMNS, resourceFromRow } from './rows.ts';
import { matchSql, searchTerms } from './search.ts';
import type { MirrorRangeQuery, MirrorResourceRow } from './types.ts';
import { ALL_DAY_SLACK_MS, firstArms, shifted, windowArms } from './window-sql.ts';

/**
 * Rows a first-rows read with text walks at most across a tenant's calendars (or 8 × the rows
 * asked for): a rare word ends the walk there, and the page is then complete up to where it
 * stopped (a merge reads on only if it needs to).
 */
const WALK_ROWS = 3000;

/** MirrorRepository.readFirst's query: the window's masters and moved occurrences, and the first rows by start. */
export async function readFirstRows(
  pool: pg.Pool,
  calendarIds: readonly string[],
  query: MirrorRangeQuery & { first: number },
): Promise<Map<string, { rows: MirrorResourceRow[]; throughMs: number | null }>> {
  if (calendarIds.length === 0) {
    return new Map();
  }
  const { params, param } = sqlParams([...calendarIds]);
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
  const { rows } = await pool.query<RawResourceRow & { arm: 'f' | 'x' | 'w'; start_ms: number | null }>(
    sqlText,
    params,
  );
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
