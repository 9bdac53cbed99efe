import { CalgateError, newId } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { cleanText, FOREIGN_KEY_VIOLATION, ms, pgCode } from '../sql.ts';
import {
  AGENT_ID_MAX,
  type CancelOutcome,
  type NewSchedule,
  SCHEDULE_PROMPT_MAX,
  type ScheduleRecord,
  type ScheduleScope,
  type ScheduleStatus,
  type StoredSpec,
} from './model.ts';
import { targetNotFound } from './targets.ts';

/** A schedules row as queried (instants as epoch milliseconds). */
export interface ScheduleRow {
  id: string;
  tenant_id: string;
  key_id: string;
  target_id: string | null;
  agent_id: string | null;
  prompt: string;
  spec: StoredSpec;
  next_run_at: number | null;
  repetitions_done: number;
  status: ScheduleStatus;
  created_at: number;
  cancelled_at: number | null;
}

const SCHEDULE_COLUMNS = `id, tenant_id, key_id, target_id, agent_id, prompt, spec, ${ms('next_run_at')},
  repetitions_done, status, ${ms('created_at')}, ${ms('cancelled_at')}`;

export function schedule(row: ScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    keyId: row.key_id,
    targetId: row.target_id,
    agentId: row.agent_id,
    prompt: row.prompt,
    spec: row.spec,
    nextRunAt: row.next_run_at === null ? null : new Date(row.next_run_at),
    repetitionsDone: row.repetitions_done,
    status: row.status,
    createdAt: new Date(row.created_at),
    cancelledAt: row.cancelled_at === null ? null : new Date(row.cancelled_at),
  };
}

export const scheduleNotFound = (id: string) =>
  new CalgateError('not_found', `No scheduled prompt ${id} for this key.`);

/**
 * The tenant's schedules. Methods that take a {@link ScheduleScope} with a `keyId` see only that
 * key's schedules: another key's schedule is `not_found`, exactly like a missing one.
 */
export class ScheduleRepository {
  readonly #pool: pg.Pool;

  constructor(db: Database) {
    this.#pool = db.pool;
  }

  /**
   * Stores a new schedule. With `within`, the insert and the caller's statements (queueing the
   * first run) commit together or not at all.
   */
  async create(
    tenantId: string,
    input: NewSchedule,
    within?: (client: pg.PoolClient, created: ScheduleRecord) => Promise<void>,
  ): Promise<ScheduleRecord> {
    const prompt = cleanPrompt(input.prompt);
    const spec = cleanSpec(input.spec);
    const nextRunAt = input.nextRunAt === null ? null : cleanInstant(input.nextRunAt, 'The first run');
    const agentId = input.agentId == null ? null : cleanText(input.agentId, 'Agent id', AGENT_ID_MAX);
    const targetId = input.targetId ?? null;
    if (targetId !== null) {
      const { rows } = await this.#pool.query<{ name: string; disabled: boolean }>(
        `SELECT name, disabled_at IS NOT NULL AS disabled FROM delivery_targets WHERE tenant_id = $1 AND id = $2`,
        [tenantId, targetId],
      );
      const [found] = rows;
      if (found === undefined) {
        throw targetNotFound(targetId);
      }
      if (found.disabled) {
        throw new CalgateError(
          'precondition_failed',
          `Delivery target ${targetId} is disabled; enable it or choose another target.`,
        );
      }
    }
    const client = within === undefined ? undefined : await this.#pool.connect();
    const db = client ?? this.#pool;
    try {
      await client?.query('BEGIN');
      const { rows } = await db.query<ScheduleRow>(
        `INSERT INTO schedules (id, tenant_id, key_id, target_id, agent_id, prompt, spec, next_run_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8::float8 / 1000))
         RETURNING ${SCHEDULE_COLUMNS}`,
        [
          newId('sch'),
          tenantId,
          input.keyId,
          targetId,
          agentId,
          prompt,
          JSON.stringify(spec),
          nextRunAt?.getTime() ?? null,
        ],
      );
      const created = schedule(rows[0] as ScheduleRow);
      if (client !== undefined && within !== undefined) {
        await within(client, created);
        await client.query('COMMIT');
      }
      return created;
    } catch (error) {
      await client?.query('ROLLBACK').catch(() => undefined);
      const { code, constraint } = pgCode(error);
      if (code === FOREIGN_KEY_VIOLATION && constraint === 'schedules_key_id_tenant_id_fkey') {
        throw new CalgateError('not_found', `No API key ${input.keyId} in this tenant.`);
      }
      if (code === FOREIGN_KEY_VIOLATION && constraint === 'schedules_target_id_tenant_id_fkey') {
        throw targetNotFound(targetId ?? '');
      }
      throw error;
    } finally {
      client?.release();
    }
  }

  /** Oldest first; cancelled ones only with `includeCancelled`. With `keyId`, that key's only. */
  async list(
    tenantId: string,
    options: ScheduleScope & { includeCancelled?: boolean } = {},
  ): Promise<ScheduleRecord[]> {
    const { rows } = await this.#pool.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules
        WHERE tenant_id = $1 AND ($2::text IS NULL OR key_id = $2) AND ($3 OR status <> 'cancelled')
        ORDER BY created_at, id`,
      [tenantId, options.keyId ?? null, options.includeCancelled === true],
    );
    return rows.map(schedule);
  }

  async get(tenantId: string, scheduleId: string, scope: ScheduleScope = {}): Promise<ScheduleRecord | null> {
    const { rows } = await this.#pool.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules
        WHERE tenant_id = $1 AND id = $2 AND ($3::text IS NULL OR key_id = $3)`,
      [tenantId, scheduleId, scope.keyId ?? null],
    );
    const [row] = rows;
    return row === undefined ? null : schedule(row);
  }

  /**
   * Cancels an active or paused schedule; a second cancel changes nothing and says so. A finished
   * schedule has nothing left to cancel (`precondition_failed`).
   */
  async cancel(tenantId: string, scheduleId: string, scope: ScheduleScope = {}): Promise<CancelOutcome> {
    const { rows } = await this.#pool.query<ScheduleRow & { was: ScheduleStatus }>(
      `UPDATE schedules s SET
          status = CASE WHEN s.status IN ('active', 'paused') THEN 'cancelled' ELSE s.status END,
          cancelled_at = CASE WHEN s.status IN ('active', 'paused') THEN now() ELSE s.cancelled_at END,
          next_run_at = CASE WHEN s.status IN ('active', 'paused') THEN NULL ELSE s.next_run_at END
         FROM schedules old
        WHERE s.id = old.id AND s.tenant_id = $1 AND s.id = $2 AND ($3::text IS NULL OR s.key_id = $3)
        RETURNING ${prefixed('s')}, old.status AS was`,
      [tenantId, scheduleId, scope.keyId ?? null],
    );
    const [row] = rows;
    if (row === undefined) {
      throw scheduleNotFound(scheduleId);
    }
    if (row.was === 'finished') {
      throw new CalgateError(
        'precondition_failed',
        `Scheduled prompt ${scheduleId} has already finished; there is nothing left to cancel.`,
      );
    }
    return { schedule: schedule(row), alreadyCancelled: row.was === 'cancelled' };
  }

  /** Stops an active schedule from firing until resumed; pausing a paused one changes nothing. */
  async pause(tenantId: string, scheduleId: string, scope: ScheduleScope = {}): Promise<ScheduleRecord> {
    return this.#transition(tenantId, scheduleId, scope, 'paused', null);
  }

  /**
   * Resumes a paused schedule. `nextRunAt`, when given, replaces the stored next run (the caller
   * recomputes it so that runs missed while paused are skipped); resuming an active one changes nothing.
   */
  async resume(
    tenantId: string,
    scheduleId: string,
    options: ScheduleScope & { nextRunAt?: Date } = {},
  ): Promise<ScheduleRecord> {
    const nextRunAt =
      options.nextRunAt === undefined ? null : cleanInstant(options.nextRunAt, 'The next run');
    return this.#transition(tenantId, scheduleId, options, 'active', nextRunAt);
  }

  /**
   * Records a run: the next run and the repetitions done so far; a null next run finishes the
   * schedule unless `finished: false` (an event-relative schedule with no event planned yet stays
   * active). A cancelled or finished schedule stays as it is (a cancellation racing a due
   * occurrence wins) and is returned unchanged.
   */
  async setNextRun(
    tenantId: string,
    scheduleId: string,
    next: { nextRunAt: Date | null; repetitionsDone?: number; finished?: boolean },
  ): Promise<ScheduleRecord> {
    const nextRunAt = next.nextRunAt === null ? null : cleanInstant(next.nextRunAt, 'The next run');
    const done = next.repetitionsDone;
    if (done !== undefined && (!Number.isInteger(done) || done < 0)) {
      throw new CalgateError(
        'invalid_argument',
        `Repetitions done must be a whole number ≥ 0, got ${String(done)}.`,
      );
    }
    await this.#pool.query(
      `UPDATE schedules SET
          next_run_at = to_timestamp($3::float8 / 1000),
          status = CASE WHEN $5 THEN 'finished' ELSE status END,
          repetitions_done = coalesce($4, repetitions_done)
        WHERE tenant_id = $1 AND id = $2 AND status IN ('active', 'paused')`,
      [tenantId, scheduleId, nextRunAt?.getTime() ?? null, done ?? null, next.finished ?? nextRunAt === null],
    );
    const found = await this.get(tenantId, scheduleId);
    if (found === null) {
      throw scheduleNotFound(scheduleId);
    }
    return found;
  }

  /** Active schedules of one kind across tenants, oldest first: for the worker's planning passes. */
  async listActiveOfKind(kind: string): Promise<ScheduleRecord[]> {
    const { rows } = await this.#pool.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules
        WHERE status = 'active' AND spec->>'kind' = $1 ORDER BY created_at, id`,
      [kind],
    );
    return rows.map(schedule);
  }

  /** Active schedules due at or before `until`, earliest first, across tenants: for the worker. */
  async listDue(until: Date, limit = 100): Promise<ScheduleRecord[]> {
    const { rows } = await this.#pool.query<ScheduleRow>(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules
        WHERE status = 'active' AND next_run_at <= to_timestamp($1::float8 / 1000)
        ORDER BY next_run_at, id LIMIT $2`,
      [cleanInstant(until, 'The due time').getTime(), Math.max(1, Math.min(limit, 1000))],
    );
    return rows.map(schedule);
  }

  async #transition(
    tenantId: string,
    scheduleId: string,
    scope: ScheduleScope,
    to: 'active' | 'paused',
    nextRunAt: Date | null,
  ): Promise<ScheduleRecord> {
    const from = to === 'active' ? 'paused' : 'active';
    const { rows } = await this.#pool.query<ScheduleRow>(
      `UPDATE schedules SET
          status = CASE WHEN status = $4 THEN $5 ELSE status END,
          next_run_at = CASE WHEN status = $4 THEN coalesce(to_timestamp($6::float8 / 1000), next_run_at)
                             ELSE next_run_at END
        WHERE tenant_id = $1 AND id = $2 AND ($3::text IS NULL OR key_id = $3)
        RETURNING ${SCHEDULE_COLUMNS}`,
      [tenantId, scheduleId, scope.keyId ?? null, from, to, nextRunAt?.getTime() ?? null],
    );
    const [row] = rows;
    if (row === undefined) {
      throw scheduleNotFound(scheduleId);
    }
    if (row.status === 'cancelled' || row.status === 'finished') {
      const verb = to === 'active' ? 'resumed' : 'paused';
      throw new CalgateError(
        'precondition_failed',
        `Scheduled prompt ${scheduleId} is ${row.status} and cannot be ${verb}.`,
      );
    }
    return schedule(row);
  }
}

function prefixed(alias: string): string {
  return `${alias}.id, ${alias}.tenant_id, ${alias}.key_id, ${alias}.target_id, ${alias}.agent_id, ${alias}.prompt,
    ${alias}.spec, ${ms(`${alias}.next_run_at`, 'next_run_at')}, ${alias}.repetitions_done, ${alias}.status,
    ${ms(`${alias}.created_at`, 'created_at')}, ${ms(`${alias}.cancelled_at`, 'cancelled_at')}`;
}

function cleanPrompt(value: unknown): string {
  if (typeof value !== 'string') {
    throw new CalgateError('invalid_argument', 'The prompt must be a string.');
  }
  if (!value.isWellFormed() || value.includes('\u0000')) {
    throw new CalgateError('invalid_argument', 'The prompt contains a NUL character or a lone surrogate.');
  }
  if (value.trim() === '') {
    throw new CalgateError('invalid_argument', 'The prompt must not be empty.');
  }
  if (value.length > SCHEDULE_PROMPT_MAX) {
    throw new CalgateError(
      'invalid_argument',
      `The prompt is ${value.length.toLocaleString('en')} characters long; at most ${SCHEDULE_PROMPT_MAX.toLocaleString('en')} are allowed.`,
    );
  }
  return value;
}

function cleanSpec(value: unknown): StoredSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CalgateError('invalid_argument', 'A schedule spec must be a JSON object.');
  }
  if (typeof (value as { kind?: unknown }).kind !== 'string') {
    throw new CalgateError('invalid_argument', 'A schedule spec must have a string kind.');
  }
  return value as StoredSpec;
}

function cleanInstant(value: unknown, label: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new CalgateError('invalid_argument', `${label} must be a valid instant.`);
  }
  return value;
}
