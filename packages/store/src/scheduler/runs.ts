import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { ms } from '../sql.ts';
import {
  DELIVERY_ERROR_MAX,
  type DeliveryStatus,
  occurrenceId,
  type ScheduleRecord,
  type StoredSpec,
} from './model.ts';

/** One occurrence a worker holds: the schedule, the instant and the attempt at delivering it. */
export interface OccurrenceRef {
  tenantId: string;
  scheduleId: string;
  occurrenceAt: Date;
  /** 1 for the first attempt. */
  attempt: number;
  /** For a schedule relative to calendar events: the event, as it was planned. */
  event?: { calendarId: string; eventId: string; start: number } | undefined;
  /** Deliver again even if the occurrence has settled (a person asked for it). */
  replay?: boolean | undefined;
}

/** What the worker decided for a first attempt, given the schedule as it stands (locked). */
export interface ClaimPlan {
  /** Deliver this occurrence, or record it as missed (older than the misfire grace). */
  action: 'deliver' | 'missed';
  /** The run after this one (null: the schedule is finished), skipping runs recorded as missed. */
  nextRunAt: Date | null;
  /** Earlier runs skipped on the way to `nextRunAt`, recorded as missed. */
  missed: readonly Date[];
}

/** Where the worker stands with an occurrence after claiming it. */
export type Claim =
  | {
      kind: 'deliver';
      schedule: ScheduleRecord;
      occurrenceId: string;
      /** 1 for the schedule's first delivered occurrence. */
      repetition: number;
    }
  | {
      kind: 'done';
      /**
       * `stale`: the schedule moved on (paused, resumed elsewhere, or this run was never its next);
       * `ended`: cancelled or finished before this occurrence was claimed; `settled`: this
       * occurrence already has its final status; `missed`: recorded as missed now.
       */
      reason: 'gone' | 'stale' | 'ended' | 'settled' | 'missed';
      schedule?: ScheduleRecord;
    };

interface LockedSchedule {
  id: string;
  tenant_id: string;
  key_id: string;
  target_id: string | null;
  agent_id: string | null;
  prompt: string;
  spec: StoredSpec;
  next_run_at: number | null;
  repetitions_done: number;
  status: ScheduleRecord['status'];
  created_at: number;
  cancelled_at: number | null;
}

function record(row: LockedSchedule): ScheduleRecord {
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

const FINAL: readonly DeliveryStatus[] = ['delivered', 'failed', 'missed'];
/** Missed runs recorded one by one per catch-up; runs beyond are skipped without a row each. */
export const MAX_MISSED_ROWS = 1000;

/**
 * The worker's side of schedules: claiming an occurrence (one transaction that locks the schedule,
 * records the occurrence and moves the schedule to its next run, with the caller's own statements —
 * enqueueing the next run — in the same transaction) and settling attempts. Every step is
 * idempotent, so a job replayed after a crash finds the occurrence where the crash left it.
 */
export class ScheduleRuns {
  readonly #pool: pg.Pool;

  constructor(db: Database) {
    this.#pool = db.pool;
  }

  /** Runs `work` in one transaction on one connection. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Claims an occurrence for delivery. A first attempt is taken only while the occurrence is the
   * schedule's next run and the schedule is active; `plan` then decides (from the locked schedule)
   * whether it is delivered or missed and what runs next, and `within` runs in the same
   * transaction with that decision (to enqueue the next run). A later attempt, or a first attempt
   * replayed after a crash, continues the occurrence already recorded unless it has settled or its
   * schedule was cancelled meanwhile.
   */
  async claim(
    ref: OccurrenceRef,
    plan: (schedule: ScheduleRecord) => ClaimPlan,
    within: (client: pg.PoolClient, plan: ClaimPlan, schedule: ScheduleRecord) => Promise<void>,
  ): Promise<Claim> {
    const id = occurrenceId(ref.scheduleId, ref.occurrenceAt, ref.event?.eventId);
    return this.transaction(async (client) => {
      // The schedule, locked, with this occurrence's row if it has one: one round trip.
      const locked = await client.query<
        LockedSchedule & {
          d_status: DeliveryStatus | null;
          d_attempt: number | null;
          d_repetition: number | null;
        }
      >(
        `SELECT s.id, s.tenant_id, s.key_id, s.target_id, s.agent_id, s.prompt, s.spec, ${ms('s.next_run_at', 'next_run_at')},
                s.repetitions_done, s.status, ${ms('s.created_at', 'created_at')}, ${ms('s.cancelled_at', 'cancelled_at')},
                d.status AS d_status, d.attempt AS d_attempt, d.repetition AS d_repetition
           FROM schedules s
           LEFT JOIN deliveries d ON d.tenant_id = s.tenant_id AND d.occurrence_id = $3
          WHERE s.tenant_id = $1 AND s.id = $2
            FOR UPDATE OF s`,
        [ref.tenantId, ref.scheduleId, id],
      );
      const row = locked.rows[0];
      if (row === undefined) {
        return { kind: 'done', reason: 'gone' };
      }
      const schedule = record(row);
      const found =
        row.d_status === null
          ? undefined
          : { status: row.d_status, attempt: row.d_attempt ?? 1, repetition: row.d_repetition };
      if (found !== undefined) {
        if (ref.replay === true) {
          return { kind: 'deliver', schedule, occurrenceId: id, repetition: found.repetition ?? 1 };
        }
        if (FINAL.includes(found.status)) {
          return { kind: 'done', reason: 'settled', schedule };
        }
        if (schedule.status === 'cancelled') {
          await this.#settle(client, ref.tenantId, id, Math.max(found.attempt, ref.attempt), {
            status: 'failed',
            error: 'The schedule was cancelled before this occurrence could be delivered.',
          });
          return { kind: 'done', reason: 'ended', schedule };
        }
        return { kind: 'deliver', schedule, occurrenceId: id, repetition: found.repetition ?? 1 };
      }
      if (schedule.status === 'cancelled' || schedule.status === 'finished') {
        return { kind: 'done', reason: 'ended', schedule };
      }
      const isNext = ref.event !== undefined || schedule.nextRunAt?.getTime() === ref.occurrenceAt.getTime();
      if (schedule.status !== 'active' || !isNext || ref.attempt !== 1) {
        return { kind: 'done', reason: 'stale', schedule };
      }
      const decided = plan(schedule);
      const delivering = decided.action === 'deliver';
      const repetition = schedule.repetitionsDone + 1;
      const missed = decided.missed.slice(-MAX_MISSED_ROWS);
      const at = [ref.occurrenceAt, ...missed];
      // The occurrence (and the runs missed on the way) recorded, and the schedule moved on: one statement.
      await client.query(
        `WITH recorded AS (
           INSERT INTO deliveries (tenant_id, schedule_id, occurrence_at, occurrence_id, attempt, status, repetition,
                                   event_id, event_calendar_id, event_start)
           SELECT $1, $2, to_timestamp(t.at / 1000), t.id, 1, t.status, t.repetition,
                  $7::text, $8::text, to_timestamp($9::float8 / 1000)
             FROM unnest($3::float8[], $4::text[], $5::text[], $6::int[]) AS t(at, id, status, repetition)
           ON CONFLICT (occurrence_id) DO NOTHING)
         UPDATE schedules SET
             next_run_at = CASE WHEN $10 THEN to_timestamp($11::float8 / 1000) ELSE next_run_at END,
             status = CASE WHEN $10 AND $11::float8 IS NULL THEN 'finished' ELSE status END,
             repetitions_done = repetitions_done + $12
          WHERE tenant_id = $1 AND id = $2`,
        [
          ref.tenantId,
          ref.scheduleId,
          at.map((d) => d.getTime()),
          [id, ...missed.map((d) => occurrenceId(ref.scheduleId, d))],
          [delivering ? 'pending' : 'missed', ...missed.map(() => 'missed')],
          [delivering ? repetition : null, ...missed.map(() => null)],
          ref.event?.eventId ?? null,
          ref.event?.calendarId ?? null,
          ref.event?.start ?? null,
          // An event-relative schedule's next run is the planner's business, not this occurrence's.
          ref.event === undefined,
          decided.nextRunAt?.getTime() ?? null,
          delivering ? 1 : 0,
        ],
      );
      await within(client, decided, schedule);
      return delivering
        ? { kind: 'deliver', schedule, occurrenceId: id, repetition }
        : { kind: 'done', reason: 'missed', schedule };
    });
  }

  /**
   * Records how an attempt ended: `delivered` and `failed` are final; `retrying` says the next
   * attempt is queued. An older attempt never overwrites a newer one, and nothing overwrites a
   * final status.
   */
  async settle(
    ref: OccurrenceRef,
    outcome: {
      status: 'delivered' | 'failed' | 'retrying';
      statusCode?: number | null;
      error?: string | null;
    },
    client?: pg.PoolClient,
  ): Promise<void> {
    const id = occurrenceId(ref.scheduleId, ref.occurrenceAt, ref.event?.eventId);
    await this.#settle(client ?? this.#pool, ref.tenantId, id, ref.attempt, outcome);
  }

  /** Opens a settled occurrence again for a replay; a delivered one stays delivered. */
  async reopen(tenantId: string, occurrence: string, client?: pg.PoolClient): Promise<void> {
    await (client ?? this.#pool).query(
      `UPDATE deliveries SET status = 'retrying', error = NULL, status_code = NULL
        WHERE tenant_id = $1 AND occurrence_id = $2 AND status IN ('failed', 'missed')`,
      [tenantId, occurrence],
    );
  }

  async #settle(
    db: pg.Pool | pg.PoolClient,
    tenantId: string,
    id: string,
    attempt: number,
    outcome: { status: DeliveryStatus; statusCode?: number | null; error?: string | null },
  ): Promise<void> {
    if (!Number.isInteger(attempt) || attempt < 1) {
      throw new CalgateError(
        'invalid_argument',
        `Attempt must be a whole number ≥ 1, got ${String(attempt)}.`,
      );
    }
    await db.query(
      `UPDATE deliveries SET attempt = $3, status = $4, status_code = $5, error = $6,
              delivered_at = CASE WHEN $4 = 'delivered' THEN now() END
        WHERE tenant_id = $1 AND occurrence_id = $2 AND status NOT IN ('delivered', 'failed', 'missed')
          AND attempt <= $3`,
      [
        tenantId,
        id,
        attempt,
        outcome.status,
        outcome.statusCode ?? null,
        outcome.error == null ? null : outcome.error.slice(0, DELIVERY_ERROR_MAX),
      ],
    );
  }
}
