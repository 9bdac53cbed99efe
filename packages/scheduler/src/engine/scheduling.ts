/** The producer's side: schedules are stored and their first run queued in one transaction. */
import { CalgateError } from '@calgate/core';
import {
  type NewSchedule,
  occurrenceId,
  type ScheduleRecord,
  type SchedulerRepository,
  type ScheduleScope,
} from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import { compileSchedule } from '../schedule/compile.ts';
import { nextRun } from '../schedule/next.ts';
import type { ScheduleSpec } from '../schedule/types.ts';
import { type OccurrenceJob, onClient, sendOccurrence } from './jobs.ts';

export class Scheduling {
  readonly #boss: PgBoss;
  readonly #repository: SchedulerRepository;
  readonly #now: () => number;

  constructor(boss: PgBoss, repository: SchedulerRepository, now: () => number = Date.now) {
    this.#boss = boss;
    this.#repository = repository;
    this.#now = now;
  }

  /** Stores the schedule and queues its first run; both or neither. */
  async create(tenantId: string, input: NewSchedule): Promise<ScheduleRecord> {
    return this.#repository.schedules.create(tenantId, input, async (client, created) => {
      if (created.spec.kind === 'around_events' || created.nextRunAt === null) {
        return;
      }
      await this.#queue(created, created.nextRunAt, onClient(client));
    });
  }

  /** Queues the given occurrences of an event-relative schedule (idempotent per event and instant). */
  async queueEventOccurrences(
    schedule: ScheduleRecord,
    occurrences: readonly { at: number; calendarId: string; eventId: string; start: number }[],
  ): Promise<void> {
    for (const occurrence of occurrences) {
      const job: OccurrenceJob = {
        tenantId: schedule.tenantId,
        scheduleId: schedule.id,
        at: occurrence.at,
        attempt: 1,
        event: { calendarId: occurrence.calendarId, eventId: occurrence.eventId, start: occurrence.start },
      };
      await sendOccurrence(
        this.#boss,
        occurrenceId(schedule.id, new Date(occurrence.at), occurrence.eventId),
        job,
        new Date(occurrence.at),
      );
    }
  }

  async cancel(tenantId: string, scheduleId: string, scope: ScheduleScope = {}) {
    return this.#repository.schedules.cancel(tenantId, scheduleId, scope);
  }

  async pause(tenantId: string, scheduleId: string, scope: ScheduleScope = {}): Promise<ScheduleRecord> {
    return this.#repository.schedules.pause(tenantId, scheduleId, scope);
  }

  /** Resumes from now: runs that fell due while paused are skipped, not delivered late. */
  async resume(tenantId: string, scheduleId: string, scope: ScheduleScope = {}): Promise<ScheduleRecord> {
    const current = await this.#repository.schedules.get(tenantId, scheduleId, scope);
    if (current === null) {
      throw new CalgateError('not_found', `No scheduled prompt ${scheduleId} for this key.`);
    }
    let next: number | null = null;
    if (current.spec.kind !== 'around_events') {
      const compiled = compileSchedule(current.spec as unknown as ScheduleSpec);
      next = compiled.ok ? nextRun(compiled.value, this.#now() - 1, current.repetitionsDone) : null;
      if (next === null && current.status === 'paused') {
        throw new CalgateError(
          'precondition_failed',
          `Scheduled prompt ${scheduleId} has no runs left after now; cancel it instead.`,
        );
      }
    }
    const resumed = await this.#repository.schedules.resume(tenantId, scheduleId, {
      ...scope,
      ...(next === null ? {} : { nextRunAt: new Date(next) }),
    });
    if (resumed.nextRunAt !== null && resumed.spec.kind !== 'around_events') {
      await this.#queue(resumed, resumed.nextRunAt);
    }
    return resumed;
  }

  /**
   * Delivers an occurrence again, with the same `webhook-id` (a person's retry of a failed one, or
   * a replay of a delivered one).
   */
  async replay(tenantId: string, occurrence: string): Promise<void> {
    const row = await this.#repository.deliveries.get(tenantId, occurrence);
    if (row === null) {
      throw new CalgateError('not_found', `No delivery ${occurrence}.`);
    }
    const attempt = row.attempt + 1;
    await this.#repository.runs.transaction(async (client) => {
      await this.#repository.runs.reopen(tenantId, occurrence, client);
      await sendOccurrence(
        this.#boss,
        occurrence,
        {
          tenantId,
          scheduleId: row.scheduleId,
          at: row.occurrenceAt.getTime(),
          attempt,
          replay: true,
          ...(row.event === null ? {} : { event: row.event }),
        },
        new Date(this.#now()),
        onClient(client),
      );
    });
  }

  async #queue(schedule: ScheduleRecord, at: Date, db?: ReturnType<typeof onClient>): Promise<void> {
    await sendOccurrence(
      this.#boss,
      occurrenceId(schedule.id, at),
      { tenantId: schedule.tenantId, scheduleId: schedule.id, at: at.getTime(), attempt: 1 },
      at,
      db,
    );
  }
}
