import { CalgateError, newId } from '@calgate/core';
import type { Database } from './db.ts';

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
const UNIQUE_VIOLATION = '23505';

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
        const [existing] = await this.overlapping(input.calendarId, input.start, input.end);
        throw new CalgateError('conflict', 'Another confirmed booking overlaps this time on this calendar.', {
          context: existing
            ? { bookingId: existing.id, start: existing.start.toISOString(), end: existing.end.toISOString() }
            : {},
        });
      }
      if (code === UNIQUE_VIOLATION) {
        throw new CalgateError('already_exists', 'This idempotency key was already used for a booking.', {
          context: { idempotencyKey: input.idempotencyKey },
        });
      }
      throw error;
    }
  }

  /** Confirmed bookings of the calendar overlapping [start, end). */
  async overlapping(calendarId: string, start: Date, end: Date): Promise<BookingRecord[]> {
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM bookings
       WHERE calendar_id = $1 AND status = 'confirmed' AND during && tstzrange($2, $3, '[)')
       ORDER BY lower(during)`,
      [calendarId, start, end],
    );
    return rows.map(fromRow);
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
