import { CalgateError } from '@calgate/core';
import type { Database } from './db.ts';
import { Prisma as PrismaNamespace } from './generated/prisma/client.ts';
import { matchSql, searchTerms } from './mirror/search.ts';
import { localDocument, SEARCHED_FIELDS } from './search-documents.ts';
import { EPOCH_MS_TYPES, msInt } from './sql.ts';

/** One stored event of a local calendar (a single event, a series master, or an exception). */
export interface LocalEventRow {
  calendarId: string;
  id: string;
  iCalUid: string;
  status: string;
  summary: string | null;
  description: string | null;
  location: string | null;
  allDay: boolean;
  startAt: Date;
  endAt: Date;
  startDate: string | null;
  endDate: string | null;
  startTimeZone: string | null;
  endTimeZone: string | null;
  recurrence: string[];
  seriesEndAt: Date | null;
  recurringEventId: string | null;
  originalStartTime: Date | null;
  attendees: unknown;
  reminders: unknown;
  transparency: string;
  visibility: string;
  colorId: string | null;
  sequence: number;
  etag: string;
  createdAt: Date;
  updatedAt: Date;
}

export type NewLocalEvent = Omit<LocalEventRow, 'createdAt' | 'updatedAt'>;
export type LocalEventChanges = Partial<
  Omit<LocalEventRow, 'calendarId' | 'id' | 'createdAt' | 'updatedAt' | 'etag'>
> & {
  etag: string;
};

export interface LocalRangeQuery {
  timeMin?: Date;
  timeMax?: Date;
  query?: string;
  showDeleted: boolean;
  /** Upper bound on rows read, so one request cannot read a whole huge calendar. */
  limit: number;
}

// Instants travel as epoch milliseconds (see msInt): parsing timestamptz text dominated list reads.
// Every read names its calendar, so the calendar id is not read back; the usual status,
// transparency and visibility come as NULL (the driver makes no string of a NULL): listings read
// 50–20,000 rows a call.
const COLUMNS = `id, ical_uid, NULLIF(status, 'confirmed'), summary, description, location, all_day, ${msInt('start_at')}, ${msInt('end_at')},
  start_date, end_date, start_time_zone, end_time_zone, NULLIF(recurrence, '{}') AS recurrence, ${msInt('series_end_at')}, recurring_event_id,
  ${msInt('original_start_time')}, attendees, reminders, NULLIF(transparency, 'opaque'), NULLIF(visibility, 'default'), color_id, sequence, etag,
  ${msInt('created_at')}, ${msInt('updated_at')}`;

/** How rows of COLUMNS are read: arrays (see RawRow), instants as numbers. */
const AS_ROWS = { rowMode: 'array', types: EPOCH_MS_TYPES } as const;

/** How far before a window an exception's original start is still looked at. */
const EXCEPTION_REACH = '31 days';

/**
 * A row of COLUMNS as the driver hands it over in array mode (no object per row with 26 named
 * properties: list reads map 50–20,000 of these per call). Same order as COLUMNS.
 */
type RawRow = [
  id: string,
  icalUid: string,
  /** NULL: confirmed. */
  status: string | null,
  summary: string | null,
  description: string | null,
  location: string | null,
  allDay: boolean,
  startAt: number,
  endAt: number,
  startDate: string | null,
  endDate: string | null,
  startTimeZone: string | null,
  endTimeZone: string | null,
  recurrence: string[] | null,
  seriesEndAt: number | null,
  recurringEventId: string | null,
  originalStartTime: number | null,
  attendees: unknown,
  reminders: unknown,
  /** NULL: opaque. */
  transparency: string | null,
  /** NULL: default. */
  visibility: string | null,
  colorId: string | null,
  sequence: number,
  etag: string,
  createdAt: number,
  updatedAt: number,
];

/** The row of `calendarId` that `row` of COLUMNS read. */
function fromRaw(calendarId: string, row: RawRow): LocalEventRow {
  return {
    calendarId,
    id: row[0],
    iCalUid: row[1],
    status: row[2] ?? 'confirmed',
    summary: row[3],
    description: row[4],
    location: row[5],
    allDay: row[6],
    startAt: new Date(row[7]),
    endAt: new Date(row[8]),
    startDate: row[9],
    endDate: row[10],
    startTimeZone: row[11],
    endTimeZone: row[12],
    recurrence: row[13] ?? [],
    seriesEndAt: row[14] === null ? null : new Date(row[14]),
    recurringEventId: row[15],
    originalStartTime: row[16] === null ? null : new Date(row[16]),
    attendees: row[17],
    reminders: row[18],
    transparency: row[19] ?? 'opaque',
    visibility: row[20] ?? 'default',
    colorId: row[21],
    sequence: row[22],
    etag: row[23],
    createdAt: new Date(row[24]),
    updatedAt: new Date(row[25]),
  };
}

function json(value: unknown) {
  return value === null || value === undefined
    ? PrismaNamespace.DbNull
    : (value as PrismaNamespace.InputJsonValue);
}

/** Storage of local calendars' events. Reads are raw SQL (they sit on the hot path); writes go through Prisma. */
export class LocalEventStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Inserts an event; an id already used in this calendar (even by a deleted event) is a conflict. */
  async insert(event: NewLocalEvent): Promise<LocalEventRow> {
    try {
      const { searchDoc: _doc, ...row } = await this.#db.prisma.localEvent.create({
        data: {
          ...event,
          attendees: json(event.attendees),
          reminders: json(event.reminders),
          searchDoc: localDocument(event),
        },
      });
      return row;
    } catch (error) {
      if (error instanceof PrismaNamespace.PrismaClientKnownRequestError && error.code === 'P2002') {
        throw new CalgateError(
          'already_exists',
          `An event with id '${event.id}' already exists in this calendar.`,
          {
            context: { eventId: event.id },
          },
        );
      }
      throw error;
    }
  }

  /**
   * Inserts many new events in one statement (an import): all or none; an id already used in
   * the calendar is `already_exists`.
   */
  async insertMany(events: readonly NewLocalEvent[]): Promise<void> {
    if (events.length === 0) {
      return;
    }
    // One statement over a JSON array: Prisma's createMany compiles each row and costs about
    // 4 ms a row, which a 10,000-event import cannot afford.
    const rows = events.map((event) => ({
      calendar_id: event.calendarId,
      id: event.id,
      ical_uid: event.iCalUid,
      status: event.status,
      summary: event.summary,
      description: event.description,
      location: event.location,
      all_day: event.allDay,
      start_at: event.startAt.toISOString(),
      end_at: event.endAt.toISOString(),
      start_date: event.startDate,
      end_date: event.endDate,
      start_time_zone: event.startTimeZone,
      end_time_zone: event.endTimeZone,
      recurrence: event.recurrence,
      series_end_at: event.seriesEndAt === null ? null : event.seriesEndAt.toISOString(),
      recurring_event_id: event.recurringEventId,
      original_start_time: event.originalStartTime === null ? null : event.originalStartTime.toISOString(),
      attendees: event.attendees ?? null,
      reminders: event.reminders ?? null,
      transparency: event.transparency,
      visibility: event.visibility,
      color_id: event.colorId,
      search_doc: localDocument(event),
      sequence: event.sequence,
      etag: event.etag,
    }));
    const columns = Object.keys(rows[0] ?? {}).join(', ');
    try {
      await this.#db.pool.query(
        `INSERT INTO local_events (${columns}, created_at, updated_at)
         SELECT ${columns}, now(), now() FROM json_populate_recordset(NULL::local_events, $1::json)`,
        [JSON.stringify(rows)],
      );
    } catch (error) {
      if ((error as { code?: unknown }).code === '23505') {
        throw new CalgateError(
          'already_exists',
          'An event id of this import is already used in this calendar.',
        );
      }
      throw error;
    }
  }

  async get(calendarId: string, id: string): Promise<LocalEventRow | null> {
    const { rows } = await this.#db.pool.query<RawRow>({
      text: `SELECT ${COLUMNS} FROM local_events WHERE calendar_id = $1 AND id = $2`,
      values: [calendarId, id],
      ...AS_ROWS,
    });
    const [row] = rows;
    return row === undefined ? null : fromRaw(calendarId, row);
  }

  /** Stored rows (singles, masters, exceptions) by id, in one query; ids not stored are left out. */
  async getMany(calendarId: string, ids: readonly string[]): Promise<LocalEventRow[]> {
    const { rows } = await this.#db.pool.query<RawRow>({
      text: `SELECT ${COLUMNS} FROM local_events WHERE calendar_id = $1 AND id = ANY($2::text[])`,
      values: [calendarId, [...ids]],
      ...AS_ROWS,
    });
    return rows.map((row) => fromRaw(calendarId, row));
  }

  /**
   * The ids of the live events (singles and series masters, not exceptions) carrying these
   * iCalendar UIDs, by UID: an import finds what an earlier import of the same data wrote.
   */
  async idsByICalUid(calendarId: string, uids: readonly string[]): Promise<Map<string, string>> {
    const { rows } = await this.#db.pool.query<{ ical_uid: string; id: string }>(
      `SELECT ical_uid, id FROM local_events
        WHERE calendar_id = $1 AND ical_uid = ANY($2::text[]) AND recurring_event_id IS NULL
          AND status <> 'cancelled'`,
      [calendarId, [...uids]],
    );
    return new Map(rows.map((row) => [row.ical_uid, row.id]));
  }

  /** Exceptions (modified or cancelled instances) of one series. */
  async exceptionsOf(calendarId: string, masterId: string): Promise<LocalEventRow[]> {
    const { rows } = await this.#db.pool.query<RawRow>({
      text: `SELECT ${COLUMNS} FROM local_events WHERE calendar_id = $1 AND recurring_event_id = $2`,
      values: [calendarId, masterId],
      ...AS_ROWS,
    });
    return rows.map((row) => fromRaw(calendarId, row));
  }

  /** Removes exceptions of a series: all of them, or those with the given ids. */
  async deleteExceptions(calendarId: string, masterId: string, ids?: readonly string[]): Promise<number> {
    const { rowCount } = await this.#db.pool.query(
      `DELETE FROM local_events WHERE calendar_id = $1 AND recurring_event_id = $2
         AND ($3::text[] IS NULL OR id = ANY($3::text[]))`,
      [calendarId, masterId, ids === undefined ? null : [...ids]],
    );
    return rowCount ?? 0;
  }

  /**
   * Compare-and-set on the ETag: the update applies only if the row still has `expectedEtag`.
   * Returns the new row, or null when someone else changed it first.
   */
  async update(
    calendarId: string,
    id: string,
    expectedEtag: string,
    changes: LocalEventChanges,
  ): Promise<LocalEventRow | null> {
    const data: Record<string, unknown> = { ...changes, updatedAt: new Date() };
    if (SEARCHED_FIELDS.some((field) => field in changes)) {
      // The document is made of the whole event: read it at the ETag the update expects.
      const current = await this.get(calendarId, id);
      if (current === null || current.etag !== expectedEtag) {
        return null;
      }
      data.searchDoc = localDocument({ ...current, ...changes });
    }
    if ('attendees' in changes) {
      data.attendees = json(changes.attendees);
    }
    if ('reminders' in changes) {
      data.reminders = json(changes.reminders);
    }
    const { count } = await this.#db.prisma.localEvent.updateMany({
      where: { calendarId, id, etag: expectedEtag },
      data,
    });
    return count === 0 ? null : this.get(calendarId, id);
  }

  /**
   * Soft delete: status `cancelled`, sequence + 1 and a new ETag, in one compare-and-set
   * statement that also cancels the exceptions of a deleted series (their ETags change too). A
   * missing event is `not_found`; an already cancelled one is `not_found` with
   * `context.alreadyDeleted` (Google answers 410 Gone there); a stale `ifMatch` is
   * `precondition_failed`.
   */
  async softDelete(
    calendarId: string,
    id: string,
    options: { etag: string; ifMatch?: string },
  ): Promise<LocalEventRow> {
    const { rows } = await this.#db.pool.query<RawRow>({
      text: `WITH target AS (
         UPDATE local_events
            SET status = 'cancelled', sequence = sequence + 1, etag = $3, updated_at = now()
          WHERE calendar_id = $1 AND id = $2 AND status <> 'cancelled' AND ($4::text IS NULL OR etag = $4)
          RETURNING *
       ), exceptions AS (
         UPDATE local_events e
            SET status = 'cancelled', sequence = e.sequence + 1, etag = left($3, -1) || '-' || md5(e.id) || '"',
                updated_at = now()
           FROM target t
          WHERE e.calendar_id = $1 AND e.recurring_event_id = $2 AND e.status <> 'cancelled'
            AND cardinality(t.recurrence) > 0
       )
       SELECT ${COLUMNS} FROM target`,
      values: [calendarId, id, options.etag, options.ifMatch ?? null],
      ...AS_ROWS,
    });
    const [row] = rows;
    if (row !== undefined) {
      return fromRaw(calendarId, row);
    }
    const current = await this.get(calendarId, id);
    if (current === null) {
      throw new CalgateError('not_found', `Event '${id}' was not found in this calendar.`, {
        context: { eventId: id },
      });
    }
    if (current.status === 'cancelled') {
      throw new CalgateError('not_found', `Event '${id}' was already deleted.`, {
        context: { eventId: id, alreadyDeleted: true },
      });
    }
    throw new CalgateError(
      'precondition_failed',
      `Event '${id}' changed since it was read (ETag ${current.etag}).`,
      {
        context: { eventId: id },
      },
    );
  }

  /**
   * Rows that may show in [timeMin, timeMax): single events and exceptions overlapping it,
   * exceptions whose original start lies in it (the caller filters by their own times), and
   * series masters whose range [start, series end) overlaps it. Ordered by start.
   */
  async listRange(calendarId: string, range: LocalRangeQuery): Promise<LocalEventRow[]> {
    const params: unknown[] = [calendarId];
    const where = ['calendar_id = $1'];
    if (!range.showDeleted) {
      // Cancelled exceptions still matter: they hide an instance of their series.
      where.push(`(status <> 'cancelled' OR recurring_event_id IS NOT NULL)`);
    }
    // An exception also counts by its original start, which it hides even when moved away;
    // instances are at most EXCEPTION_REACH long for this purpose.
    let max: string | undefined;
    if (range.timeMax !== undefined) {
      params.push(range.timeMax);
      max = `$${params.length}`;
      where.push(`(start_at < ${max} OR (original_start_time IS NOT NULL AND original_start_time < ${max}))`);
    }
    if (range.timeMin !== undefined) {
      params.push(range.timeMin);
      const p = `$${params.length}`;
      where.push(
        `(CASE WHEN cardinality(recurrence) > 0 THEN series_end_at IS NULL OR series_end_at > ${p}
               ELSE end_at > ${p} OR (end_at = start_at AND start_at >= ${p}) END
          OR (original_start_time IS NOT NULL AND original_start_time >= ${p}::timestamptz - interval '${EXCEPTION_REACH}'))`,
      );
      // The rows above can only be: single events and exceptions whose [start, end] meets the
      // window (one probe of the overlap index), exceptions, or series masters (partial
      // indexes). Said so, the read skips the calendar's history before the window.
      // (least() keeps the range valid should timeMin come after timeMax.)
      const window =
        max === undefined
          ? `tstzrange(${p}::timestamptz, NULL, '[]')`
          : `tstzrange(least(${p}::timestamptz, ${max}::timestamptz), ${max}::timestamptz, '[]')`;
      where.push(
        `(tstzrange(start_at, greatest(start_at, end_at), '[]') && ${window}
          OR recurring_event_id IS NOT NULL OR cardinality(recurrence) > 0)`,
      );
    }
    let terms = 0;
    if (range.query !== undefined) {
      const search = searchTerms(range.query);
      if (search === null) {
        return [];
      }
      // The exact test on the document (see mirror/search.ts). A row without one (written
      // before documents were kept, until migrate fills it in) is read, and the caller decides
      // on the event. Exceptions are always read: they hide the instances they replace.
      const match = matchSql(
        search,
        (value) => {
          params.push(value);
          return `$${params.length}`;
        },
        'local_events',
      );
      terms = search.patterns.length;
      where.push(`(${match} OR search_doc IS NULL OR recurring_event_id IS NOT NULL)`);
    }
    params.push(range.limit);
    const text = `SELECT ${COLUMNS} FROM local_events WHERE ${where.join(' AND ')} ORDER BY start_at, id LIMIT $${params.length}`;
    const { rows } = await this.#db.pool.query<RawRow>({
      // Named by its shape, which fixes the text: each connection parses and plans it once.
      name: `local_range_${range.showDeleted ? 'd' : ''}${range.timeMin ? 'a' : ''}${range.timeMax ? 'b' : ''}${range.query === undefined ? '' : `q${terms}`}`,
      text,
      values: params,
      ...AS_ROWS,
    });
    return rows.map((row) => fromRaw(calendarId, row));
  }
}
