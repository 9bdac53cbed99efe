import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { FOREIGN_KEY_VIOLATION, ms, pgCode } from '../sql.ts';
import {
  DELIVERY_ERROR_MAX,
  type DeliveryAttempt,
  type DeliveryRecord,
  type DeliveryStatus,
  occurrenceId,
} from './model.ts';
import { scheduleNotFound } from './schedules.ts';

const STATUSES: readonly DeliveryStatus[] = [
  'pending',
  'delivered',
  'failed',
  'missed',
  'retrying',
  'blocked',
];

interface DeliveryRow {
  id: string;
  tenant_id: string;
  schedule_id: string;
  occurrence_at: number;
  occurrence_id: string;
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  error: string | null;
  delivered_at: number | null;
  created_at: number;
  repetition: number | null;
  event_id: string | null;
  event_calendar_id: string | null;
  event_start: number | null;
}

const DELIVERY_COLUMNS = `id::text AS id, tenant_id, schedule_id, ${ms('occurrence_at')}, occurrence_id, attempt,
  status, status_code, error, ${ms('delivered_at')}, ${ms('created_at')}, repetition, event_id, event_calendar_id,
  ${ms('event_start')}`;

function delivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    scheduleId: row.schedule_id,
    occurrenceAt: new Date(row.occurrence_at),
    occurrenceId: row.occurrence_id,
    attempt: row.attempt,
    status: row.status,
    statusCode: row.status_code,
    error: row.error,
    deliveredAt: row.delivered_at === null ? null : new Date(row.delivered_at),
    createdAt: new Date(row.created_at),
    repetition: row.repetition,
    event:
      row.event_id === null || row.event_calendar_id === null || row.event_start === null
        ? null
        : { calendarId: row.event_calendar_id, eventId: row.event_id, start: row.event_start },
  };
}

/** One row per occurrence of a schedule, keyed by its occurrence id and updated by each attempt. */
export class DeliveryRepository {
  readonly #pool: pg.Pool;

  constructor(db: Database) {
    this.#pool = db.pool;
  }

  /**
   * Records an attempt at an occurrence. Idempotent: the same attempt recorded twice (a replay
   * after a crash) leaves one row; an older attempt never overwrites a newer one, and nothing
   * overwrites `delivered`. Returns the occurrence's row as it stands.
   */
  async record(tenantId: string, input: DeliveryAttempt): Promise<DeliveryRecord> {
    const at = input.occurrenceAt;
    if (!(at instanceof Date) || Number.isNaN(at.getTime())) {
      throw new CalgateError('invalid_argument', 'The occurrence must be a valid instant.');
    }
    if (!Number.isInteger(input.attempt) || input.attempt < 1) {
      throw new CalgateError(
        'invalid_argument',
        `Attempt must be a whole number ≥ 1, got ${String(input.attempt)}.`,
      );
    }
    if (!STATUSES.includes(input.status)) {
      throw new CalgateError('invalid_argument', `Delivery status must be one of ${STATUSES.join(', ')}.`);
    }
    const code = input.statusCode ?? null;
    if (code !== null && (!Number.isInteger(code) || code < 100 || code > 599)) {
      throw new CalgateError(
        'invalid_argument',
        `Status code must be an HTTP status 100–599, got ${String(code)}.`,
      );
    }
    const error = input.error == null ? null : input.error.slice(0, DELIVERY_ERROR_MAX);
    const id = occurrenceId(input.scheduleId, at);
    try {
      const { rows } = await this.#pool.query<DeliveryRow>(
        `INSERT INTO deliveries AS d (tenant_id, schedule_id, occurrence_at, occurrence_id, attempt, status, status_code, error, delivered_at)
         VALUES ($1, $2, to_timestamp($3::float8 / 1000), $4, $5, $6, $7, $8, CASE WHEN $6 = 'delivered' THEN now() END)
         ON CONFLICT (occurrence_id) DO UPDATE SET
             attempt = excluded.attempt,
             status = excluded.status,
             status_code = excluded.status_code,
             error = excluded.error,
             delivered_at = excluded.delivered_at
           WHERE d.tenant_id = excluded.tenant_id AND d.status <> 'delivered' AND excluded.attempt >= d.attempt
         RETURNING ${DELIVERY_COLUMNS}`,
        [tenantId, input.scheduleId, at.getTime(), id, input.attempt, input.status, code, error],
      );
      const [row] = rows;
      if (row !== undefined) {
        return delivery(row);
      }
    } catch (failure) {
      const { code: pg, constraint } = pgCode(failure);
      if (pg === FOREIGN_KEY_VIOLATION && constraint === 'deliveries_schedule_id_tenant_id_fkey') {
        throw scheduleNotFound(input.scheduleId);
      }
      throw failure;
    }
    const kept = await this.get(tenantId, id);
    if (kept === null) {
      throw scheduleNotFound(input.scheduleId);
    }
    return kept;
  }

  async get(tenantId: string, occurrence: string): Promise<DeliveryRecord | null> {
    const { rows } = await this.#pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE tenant_id = $1 AND occurrence_id = $2`,
      [tenantId, occurrence],
    );
    const [row] = rows;
    return row === undefined ? null : delivery(row);
  }

  /**
   * The latest occurrences (at most `perSchedule` each, latest first) of several schedules in one
   * query, by schedule id; a schedule without any has no entry.
   */
  async recentBySchedules(
    tenantId: string,
    scheduleIds: readonly string[],
    perSchedule = 1,
  ): Promise<Map<string, DeliveryRecord[]>> {
    const found = new Map<string, DeliveryRecord[]>();
    if (scheduleIds.length === 0) {
      return found;
    }
    const limit = Math.max(1, Math.min(Math.trunc(perSchedule), 100));
    const { rows } = await this.#pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM (
         SELECT d.*, row_number() OVER (PARTITION BY schedule_id ORDER BY occurrence_at DESC, id DESC) AS n
           FROM deliveries d WHERE tenant_id = $1 AND schedule_id = ANY($2::text[])) ranked
        WHERE n <= $3
        ORDER BY schedule_id, occurrence_at DESC, id DESC`,
      [tenantId, scheduleIds, limit],
    );
    for (const row of rows) {
      const list = found.get(row.schedule_id) ?? [];
      list.push(delivery(row));
      found.set(row.schedule_id, list);
    }
    return found;
  }

  /** The schedule's occurrences, latest first (at most `limit`, default 100). */
  async listBySchedule(
    tenantId: string,
    scheduleId: string,
    options: { limit?: number } = {},
  ): Promise<DeliveryRecord[]> {
    const limit = Math.max(1, Math.min(Math.trunc(options.limit ?? 100), 1000));
    const { rows } = await this.#pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries
        WHERE tenant_id = $1 AND schedule_id = $2
        ORDER BY occurrence_at DESC, id DESC LIMIT $3`,
      [tenantId, scheduleId, limit],
    );
    return rows.map(delivery);
  }

  /**
   * The tenant's delivery log across schedules, newest row first (by when the occurrence was first
   * recorded), optionally of one status. `before` is the last row of the previous page.
   */
  async listByTenant(
    tenantId: string,
    options: {
      status?: DeliveryStatus;
      before?: { createdAt: Date; id: string };
      limit?: number;
    } = {},
  ): Promise<DeliveryRecord[]> {
    const limit = Math.max(1, Math.min(Math.trunc(options.limit ?? 50), 1000));
    if (options.status !== undefined && !STATUSES.includes(options.status)) {
      throw new CalgateError('invalid_argument', `Delivery status must be one of ${STATUSES.join(', ')}.`);
    }
    const before = options.before;
    if (before !== undefined && (Number.isNaN(before.createdAt.getTime()) || !/^\d{1,19}$/.test(before.id))) {
      throw new CalgateError('invalid_argument', 'The page cursor must be a delivery of an earlier page.');
    }
    const { rows } = await this.#pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries
        WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
          AND ($3::float8 IS NULL OR (created_at, id) < (to_timestamp($3::float8 / 1000), $4::bigint))
        ORDER BY created_at DESC, id DESC LIMIT $5`,
      [tenantId, options.status ?? null, before?.createdAt.getTime() ?? null, before?.id ?? null, limit],
    );
    return rows.map(delivery);
  }
}
