import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { ms } from '../sql.ts';
import { DELIVERY_ERROR_MAX, type DeliveryStatus, occurrenceId, type ScheduleRecord } from './model.ts';
import { type ScheduleRow, schedule as scheduleOf } from './schedules.ts';

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

/** An occurrence blocked by a worker's URL policy, queued again as its next attempt. */
export interface BlockedOccurrence {
  tenantId: string;
  scheduleId: string;
  occurrenceId: string;
  occurrenceAt: Date;
  /** The attempt to queue (one more than the attempt that was blocked). */
  attempt: number;
  event: { calendarId: string; eventId: string; start: number } | null;
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

export type Planner = (schedule: ScheduleRecord, ref: OccurrenceRef) => ClaimPlan;
export type Within = (client: pg.PoolClient, plan: ClaimPlan, schedule: ScheduleRecord) => Promise<void>;

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
  async claim(ref: OccurrenceRef, plan: Planner, within: Within): Promise<Claim> {
    const [claim] = await this.claimMany([ref], plan, within);
    return claim as Claim;
  }

  /**
   * Claims several occurrences in one transaction (a worker's batch): the schedules are locked in
   * id order (so concurrent batches cannot deadlock), the new occurrences recorded in one insert
   * and the schedules moved on in one update. Returns one Claim per ref, in order.
   */
  async claimMany(refs: readonly OccurrenceRef[], plan: Planner, within: Within): Promise<Claim[]> {
    if (refs.length === 0) {
      return [];
    }
    const ids = refs.map((ref) => occurrenceId(ref.scheduleId, ref.occurrenceAt, ref.event?.eventId));
    return this.transaction(async (client) => {
      const locked = await client.query<
        ScheduleRow & {
          i: string;
          key_ended: boolean;
          d_status: DeliveryStatus | null;
          d_attempt: number | null;
          d_repetition: number | null;
        }
      >(
        `SELECT r.i, s.id, s.tenant_id, s.key_id, s.target_id, s.agent_id, s.prompt, s.spec,
                ${ms('s.next_run_at', 'next_run_at')}, s.repetitions_done, s.status,
                ${ms('s.created_at', 'created_at')}, ${ms('s.cancelled_at', 'cancelled_at')},
                d.status AS d_status, d.attempt AS d_attempt, d.repetition AS d_repetition,
                (k.revoked_at IS NOT NULL OR k.expires_at <= now()) IS TRUE AS key_ended
           FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(tenant_id, schedule_id, occurrence_id, i)
           JOIN schedules s ON s.tenant_id = r.tenant_id AND s.id = r.schedule_id
           JOIN api_keys k ON k.tenant_id = s.tenant_id AND k.id = s.key_id
           LEFT JOIN deliveries d ON d.tenant_id = r.tenant_id AND d.occurrence_id = r.occurrence_id
          ORDER BY s.id, r.i
            FOR UPDATE OF s`,
        [refs.map((ref) => ref.tenantId), refs.map((ref) => ref.scheduleId), ids],
      );
      const rows = new Map(locked.rows.map((row) => [Number(row.i) - 1, row]));
      // The schedules as this batch leaves them (two refs may share one).
      const current = new Map<string, ScheduleRecord>();
      const inserts: {
        tenantId: string;
        scheduleId: string;
        at: number;
        id: string;
        status: 'pending' | 'missed';
        repetition: number | null;
        event: OccurrenceRef['event'];
      }[] = [];
      const moves = new Map<
        string,
        { tenantId: string; move: boolean; next: number | null; delivered: number }
      >();
      const afterwards: (() => Promise<void>)[] = [];
      const ended = new Set<string>();
      const claims: Claim[] = [];
      for (const [index, ref] of refs.entries()) {
        const id = ids[index] as string;
        const row = rows.get(index);
        if (row === undefined) {
          claims.push({ kind: 'done', reason: 'gone' });
          continue;
        }
        const key = `${row.tenant_id}\u0000${row.id}`;
        let schedule = current.get(key) ?? scheduleOf(row);
        if (row.key_ended && (schedule.status === 'active' || schedule.status === 'paused')) {
          // The key that owns the schedule was revoked or has expired: its prompts end with it.
          ended.add(key);
          schedule = { ...schedule, status: 'cancelled', nextRunAt: null, cancelledAt: new Date() };
        }
        current.set(key, schedule);
        if (row.d_status !== null) {
          const repetition = row.d_repetition ?? 1;
          if (ref.replay === true) {
            claims.push({ kind: 'deliver', schedule, occurrenceId: id, repetition });
          } else if (FINAL.includes(row.d_status)) {
            claims.push({ kind: 'done', reason: 'settled', schedule });
          } else if (schedule.status === 'cancelled') {
            const attempt = Math.max(row.d_attempt ?? 1, ref.attempt);
            afterwards.push(() =>
              this.#settle(client, ref.tenantId, id, attempt, {
                status: 'failed',
                error: 'The schedule was cancelled before this occurrence could be delivered.',
              }),
            );
            claims.push({ kind: 'done', reason: 'ended', schedule });
          } else {
            claims.push({ kind: 'deliver', schedule, occurrenceId: id, repetition });
          }
          continue;
        }
        if (schedule.status === 'cancelled' || schedule.status === 'finished') {
          claims.push({ kind: 'done', reason: 'ended', schedule });
          continue;
        }
        const isNext =
          ref.event !== undefined || schedule.nextRunAt?.getTime() === ref.occurrenceAt.getTime();
        if (
          schedule.status !== 'active' ||
          !isNext ||
          ref.attempt !== 1 ||
          inserts.some((one) => one.id === id)
        ) {
          claims.push({ kind: 'done', reason: 'stale', schedule });
          continue;
        }
        const decided = plan(schedule, ref);
        const delivering = decided.action === 'deliver';
        const repetition = schedule.repetitionsDone + 1;
        inserts.push({
          tenantId: ref.tenantId,
          scheduleId: ref.scheduleId,
          at: ref.occurrenceAt.getTime(),
          id,
          status: delivering ? 'pending' : 'missed',
          repetition: delivering ? repetition : null,
          event: ref.event,
        });
        for (const missed of decided.missed.slice(-MAX_MISSED_ROWS)) {
          inserts.push({
            tenantId: ref.tenantId,
            scheduleId: ref.scheduleId,
            at: missed.getTime(),
            id: occurrenceId(ref.scheduleId, missed),
            status: 'missed',
            repetition: null,
            event: undefined,
          });
        }
        // An event-relative schedule's next run is the planner's business, not this occurrence's.
        const moved = ref.event === undefined;
        const before = moves.get(key);
        moves.set(key, {
          tenantId: ref.tenantId,
          move: moved || (before?.move ?? false),
          next: moved ? (decided.nextRunAt?.getTime() ?? null) : (before?.next ?? null),
          delivered: (before?.delivered ?? 0) + (delivering ? 1 : 0),
        });
        const after: ScheduleRecord = {
          ...schedule,
          repetitionsDone: schedule.repetitionsDone + (delivering ? 1 : 0),
          ...(moved
            ? {
                nextRunAt: decided.nextRunAt,
                status: decided.nextRunAt === null ? ('finished' as const) : schedule.status,
              }
            : {}),
        };
        current.set(key, after);
        afterwards.push(() => within(client, decided, schedule));
        claims.push(
          delivering
            ? { kind: 'deliver', schedule, occurrenceId: id, repetition }
            : { kind: 'done', reason: 'missed', schedule },
        );
      }
      if (inserts.length > 0) {
        await client.query(
          `INSERT INTO deliveries (tenant_id, schedule_id, occurrence_at, occurrence_id, attempt, status, repetition,
                                   event_id, event_calendar_id, event_start)
           SELECT t.tenant_id, t.schedule_id, to_timestamp(t.at / 1000), t.id, 1, t.status, t.repetition,
                  t.event_id, t.event_calendar_id, to_timestamp(t.event_start / 1000)
             FROM unnest($1::text[], $2::text[], $3::float8[], $4::text[], $5::text[], $6::int[], $7::text[],
                         $8::text[], $9::float8[])
                  AS t(tenant_id, schedule_id, at, id, status, repetition, event_id, event_calendar_id, event_start)
           ON CONFLICT (occurrence_id) DO NOTHING`,
          [
            inserts.map((one) => one.tenantId),
            inserts.map((one) => one.scheduleId),
            inserts.map((one) => one.at),
            inserts.map((one) => one.id),
            inserts.map((one) => one.status),
            inserts.map((one) => one.repetition),
            inserts.map((one) => one.event?.eventId ?? null),
            inserts.map((one) => one.event?.calendarId ?? null),
            inserts.map((one) => one.event?.start ?? null),
          ],
        );
      }
      if (moves.size > 0) {
        const list = [...moves.entries()];
        await client.query(
          `UPDATE schedules s SET
              next_run_at = CASE WHEN m.move THEN to_timestamp(m.next / 1000) ELSE s.next_run_at END,
              status = CASE WHEN m.move AND m.next IS NULL THEN 'finished' ELSE s.status END,
              repetitions_done = s.repetitions_done + m.delivered
             FROM unnest($1::text[], $2::text[], $3::bool[], $4::float8[], $5::int[])
                  AS m(tenant_id, id, move, next, delivered)
            WHERE s.tenant_id = m.tenant_id AND s.id = m.id`,
          [
            list.map(([, move]) => move.tenantId),
            list.map(([key]) => key.split('\u0000')[1] as string),
            list.map(([, move]) => move.move),
            list.map(([, move]) => move.next),
            list.map(([, move]) => move.delivered),
          ],
        );
      }
      if (ended.size > 0) {
        const list = [...ended].map((key) => key.split('\u0000'));
        await client.query(
          `UPDATE schedules s SET status = 'cancelled', cancelled_at = now(), next_run_at = NULL
             FROM unnest($1::text[], $2::text[]) AS e(tenant_id, id)
            WHERE s.tenant_id = e.tenant_id AND s.id = e.id AND s.status IN ('active', 'paused')`,
          [list.map(([tenant]) => tenant), list.map(([, id]) => id)],
        );
      }
      for (const step of afterwards) {
        await step();
      }
      return claims;
    });
  }

  /**
   * Records how an attempt ended: `delivered` and `failed` are final; `retrying` says the next
   * attempt is queued; `blocked` that the worker's URL policy refused the target and the
   * occurrence waits for `requeueBlocked`. An older attempt never overwrites a newer one, and
   * nothing overwrites a final status.
   */
  async settle(
    ref: OccurrenceRef,
    outcome: {
      status: 'delivered' | 'failed' | 'retrying' | 'blocked';
      statusCode?: number | null;
      error?: string | null;
    },
    client?: pg.PoolClient,
  ): Promise<void> {
    const id = occurrenceId(ref.scheduleId, ref.occurrenceAt, ref.event?.eventId);
    await this.#settle(client ?? this.#pool, ref.tenantId, id, ref.attempt, outcome);
  }

  /** Opens a settled (or blocked) occurrence again for a replay; a delivered one stays delivered. */
  async reopen(tenantId: string, occurrence: string, client?: pg.PoolClient): Promise<void> {
    await (client ?? this.#pool).query(
      `UPDATE deliveries SET status = 'retrying', error = NULL, status_code = NULL
        WHERE tenant_id = $1 AND occurrence_id = $2 AND status IN ('failed', 'missed', 'blocked')`,
      [tenantId, occurrence],
    );
  }

  /**
   * Queues again the occurrences a worker's URL policy blocked, as their next attempt, once each
   * (a worker starting, perhaps with another policy, calls it). Those due before `since` waited
   * longer than the retry window and fail instead, with why. `queue` sends each one's job on the
   * same connection, so the new status and its job commit together. Returns how many were
   * queued and how many failed.
   */
  async requeueBlocked(
    since: Date,
    queue: (client: pg.PoolClient, blocked: BlockedOccurrence[]) => Promise<void>,
    limit = 500,
  ): Promise<{ queued: number; failed: number }> {
    let queued = 0;
    let failed = 0;
    for (;;) {
      const done = await this.transaction(async (client) => {
        const expired = await client.query(
          `UPDATE deliveries SET status = 'failed',
                  error = left('Blocked by the URL policy for longer than the retry window: ' || coalesce(error, ''), $2)
            WHERE status = 'blocked' AND occurrence_at < to_timestamp($1::float8 / 1000)`,
          [since.getTime(), DELIVERY_ERROR_MAX],
        );
        const { rows } = await client.query<{
          tenant_id: string;
          schedule_id: string;
          occurrence_id: string;
          occurrence_at: number;
          attempt: number;
          event_id: string | null;
          event_calendar_id: string | null;
          event_start: number | null;
        }>(
          `UPDATE deliveries d SET status = 'retrying', attempt = d.attempt + 1
             FROM (SELECT id FROM deliveries WHERE status = 'blocked' ORDER BY occurrence_at LIMIT $1
                   FOR UPDATE SKIP LOCKED) b
            WHERE d.id = b.id
        RETURNING d.tenant_id, d.schedule_id, d.occurrence_id, ${ms('d.occurrence_at', 'occurrence_at')},
                  d.attempt, d.event_id, d.event_calendar_id, ${ms('d.event_start', 'event_start')}`,
          [limit],
        );
        await queue(
          client,
          rows.map((row) => ({
            tenantId: row.tenant_id,
            scheduleId: row.schedule_id,
            occurrenceId: row.occurrence_id,
            occurrenceAt: new Date(row.occurrence_at),
            attempt: row.attempt,
            event:
              row.event_id === null || row.event_calendar_id === null || row.event_start === null
                ? null
                : { calendarId: row.event_calendar_id, eventId: row.event_id, start: row.event_start },
          })),
        );
        failed += expired.rowCount ?? 0;
        queued += rows.length;
        return rows.length < limit;
      });
      if (done) {
        return { queued, failed };
      }
    }
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
