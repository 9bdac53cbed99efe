import { CalgateError, newId } from '@calgate/core';
import type { Database } from './db.ts';
import { UNIQUE_VIOLATION } from './sql.ts';

export interface BookingRecord {
  id: string;
  tenantId: string;
  keyId: string | null;
  calendarId: string;
  eventId: string;
  start: Date;
  end: Date;
  status: 'confirmed' | 'cancelled';
  idempotencyKey: string | null;
  requestHash: string | null;
  result: unknown;
}

interface Row {
  id: string;
  tenant_id: string;
  key_id: string | null;
  calendar_id: string;
  event_id: string;
  start_ms: number;
  end_ms: number;
  status: 'confirmed' | 'cancelled';
  idempotency_key: string | null;
  request_hash: string | null;
  result: unknown;
}

const COLUMNS = `id, tenant_id, key_id, calendar_id, event_id,
  (extract(epoch FROM lower(during)) * 1000)::float8 AS start_ms,
  (extract(epoch FROM upper(during)) * 1000)::float8 AS end_ms,
  status, idempotency_key, request_hash, result`;

function fromRow(row: Row): BookingRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    keyId: row.key_id,
    calendarId: row.calendar_id,
    eventId: row.event_id,
    start: new Date(row.start_ms),
    end: new Date(row.end_ms),
    status: row.status,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    result: row.result,
  };
}

const EXCLUSION_VIOLATION = '23P01';

/** The ledger of confirmed bookings; Postgres itself refuses two that overlap on one calendar. */
export class BookingRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Records a confirmed booking of [start, end). An overlapping confirmed booking on the same
   * calendar is a `conflict` (with its id and range in the context); a reused idempotency key is
   * `already_exists`.
   */
  async confirm(input: {
    tenantId: string;
    keyId: string | null;
    calendarId: string;
    eventId: string;
    start: Date;
    end: Date;
    idempotencyKey?: string;
    requestHash?: string;
    result?: unknown;
  }): Promise<BookingRecord> {
    try {
      const { rows } = await this.#db.pool.query<Row>(
        `INSERT INTO bookings (id, tenant_id, key_id, calendar_id, event_id, during, idempotency_key, request_hash, result)
         VALUES ($1, $2, $3, $4, $5, tstzrange($6, $7, '[)'), $8, $9, $10)
         RETURNING ${COLUMNS}`,
        [
          newId('bkg'),
          input.tenantId,
          input.keyId,
          input.calendarId,
          input.eventId,
          input.start,
          input.end,
          input.idempotencyKey ?? null,
          input.requestHash ?? null,
          input.result === undefined ? null : JSON.stringify(input.result),
        ],
      );
      return fromRow(rows[0] as Row);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === EXCLUSION_VIOLATION) {
        throw await this.#overlapError(input.tenantId, input.calendarId, input.start, input.end);
      }
      if (code === UNIQUE_VIOLATION) {
        throw new CalgateError('already_exists', 'This idempotency key was already used for a booking.', {
          context: { idempotencyKey: input.idempotencyKey },
        });
      }
      throw error;
    }
  }

  async #overlapError(tenantId: string, calendarId: string, start: Date, end: Date): Promise<CalgateError> {
    const [existing] = await this.overlapping(tenantId, calendarId, start, end);
    return new CalgateError('conflict', 'Another confirmed booking overlaps this time on this calendar.', {
      context: existing
        ? { bookingId: existing.id, start: existing.start.toISOString(), end: existing.end.toISOString() }
        : {},
    });
  }

  /** Confirmed bookings of the tenant's calendar overlapping [start, end). */
  async overlapping(tenantId: string, calendarId: string, start: Date, end: Date): Promise<BookingRecord[]> {
    return this.confirmedIn(tenantId, [calendarId], start, end);
  }

  /** Confirmed bookings of any of the tenant's `calendarIds` overlapping [start, end), in one query. */
  async confirmedIn(
    tenantId: string,
    calendarIds: readonly string[],
    start: Date,
    end: Date,
  ): Promise<BookingRecord[]> {
    if (calendarIds.length === 0) {
      return [];
    }
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM bookings
       WHERE tenant_id = $1 AND calendar_id = ANY($2::text[]) AND status = 'confirmed'
         AND during && tstzrange($3, $4, '[)')
       ORDER BY lower(during), id`,
      [tenantId, [...calendarIds], start, end],
    );
    return rows.map(fromRow);
  }

  /** The confirmed bookings whose event is `eventId` on the calendar (normally at most one). */
  async byEvent(tenantId: string, calendarId: string, eventId: string): Promise<BookingRecord[]> {
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM bookings
       WHERE tenant_id = $1 AND calendar_id = $2 AND event_id = $3 AND status = 'confirmed'`,
      [tenantId, calendarId, eventId],
    );
    return rows.map(fromRow);
  }

  async byId(tenantId: string, bookingId: string): Promise<BookingRecord | null> {
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM bookings WHERE tenant_id = $1 AND id = $2`,
      [tenantId, bookingId],
    );
    const [row] = rows;
    return row === undefined ? null : fromRow(row);
  }

  /**
   * The tenant's bookings on `calendarIds`, by start: those overlapping [timeMin, timeMax) when
   * given, of one status when given, at most `limit`.
   */
  async list(
    tenantId: string,
    filter: {
      calendarIds: readonly string[];
      timeMin?: Date | undefined;
      timeMax?: Date | undefined;
      status?: 'confirmed' | 'cancelled' | undefined;
      limit: number;
    },
  ): Promise<BookingRecord[]> {
    if (filter.calendarIds.length === 0) {
      return [];
    }
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM bookings
       WHERE tenant_id = $1 AND calendar_id = ANY($2::text[])
         AND during && tstzrange($3, $4, '[)')
         AND ($5::text IS NULL OR status = $5)
       ORDER BY lower(during), id
       LIMIT $6`,
      [
        tenantId,
        [...filter.calendarIds],
        filter.timeMin ?? null,
        filter.timeMax ?? null,
        filter.status ?? null,
        filter.limit,
      ],
    );
    return rows.map(fromRow);
  }

  /**
   * Moves a confirmed booking to [start, end) (its event was moved). False when it is not
   * confirmed any more; `conflict` when the new range overlaps another confirmed booking.
   */
  async move(tenantId: string, bookingId: string, start: Date, end: Date): Promise<boolean> {
    try {
      const { rowCount } = await this.#db.pool.query(
        `UPDATE bookings SET during = tstzrange($3, $4, '[)'), updated_at = now()
         WHERE id = $1 AND tenant_id = $2 AND status = 'confirmed'`,
        [bookingId, tenantId, start, end],
      );
      return (rowCount ?? 0) > 0;
    } catch (error) {
      if ((error as { code?: string }).code === EXCLUSION_VIOLATION) {
        const [row] = (
          await this.#db.pool.query<{ calendar_id: string }>(
            'SELECT calendar_id FROM bookings WHERE id = $1 AND tenant_id = $2',
            [bookingId, tenantId],
          )
        ).rows;
        const others = row === undefined ? [] : await this.overlapping(tenantId, row.calendar_id, start, end);
        const other = others.find((record) => record.id !== bookingId);
        throw new CalgateError(
          'conflict',
          'Another confirmed booking overlaps the new time on this calendar.',
          {
            context: other
              ? { bookingId: other.id, start: other.start.toISOString(), end: other.end.toISOString() }
              : {},
          },
        );
      }
      throw error;
    }
  }

  async byIdempotencyKey(
    tenantId: string,
    keyId: string | null,
    idempotencyKey: string,
  ): Promise<BookingRecord | null> {
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM bookings WHERE tenant_id = $1 AND key_id IS NOT DISTINCT FROM $2 AND idempotency_key = $3`,
      [tenantId, keyId, idempotencyKey],
    );
    const [row] = rows;
    return row === undefined ? null : fromRow(row);
  }

  /** Marks a booking cancelled, freeing its range. */
  async cancel(tenantId: string, bookingId: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      `UPDATE bookings SET status = 'cancelled', updated_at = now() WHERE id = $1 AND tenant_id = $2 AND status = 'confirmed'`,
      [bookingId, tenantId],
    );
    return (rowCount ?? 0) > 0;
  }
}
