/**
 * The worker's side of prompts relative to calendar events: every minute each active schedule is
 * planned again over the next 48 h (new, moved and removed events are picked up), and each
 * occurrence is checked against its event once more just before it goes.
 */
import type { EventCheck, Scheduling } from '@calgate/scheduler';
import { EVENTS_QUEUE } from '@calgate/scheduler';
import type { Database, ScheduleRecord, SchedulerRepository } from '@calgate/store';
import { EVENT_PLAN_HORIZON_MS, type ProviderResolver, planEventOccurrences } from '@calgate/tools';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { type AroundEventsSpec, accessOf, keyPrincipal } from './scheduler.ts';

export interface EventScheduleDeps {
  db: Database;
  repository: SchedulerRepository;
  scheduling: Scheduling;
  providers: ProviderResolver;
  log: Logger;
  now?: () => number;
}

function usableKey(key: { revokedAt: Date | null; expiresAt: Date | null }, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now);
}

/** Whether the event still exists, still matches the query and still starts when it was planned to. */
export function eventCheck(deps: Omit<EventScheduleDeps, 'scheduling' | 'log'>): EventCheck {
  const now = deps.now ?? Date.now;
  return async (schedule, event) => {
    const key = await keyPrincipal(deps.db, schedule.tenantId, schedule.keyId).catch(() => null);
    if (key === null || !usableKey(key, now())) {
      return false;
    }
    const spec = schedule.spec as unknown as AroundEventsSpec;
    const at = event.start + spec.offsetMinutes * 60_000;
    const plans = await planEventOccurrences(
      accessOf(key, deps.providers),
      { ...spec, calendarIds: [event.calendarId] },
      { from: at, to: at + 1 },
      AbortSignal.timeout(30_000),
    );
    return plans.some((plan) => plan.eventId === event.eventId && plan.start === event.start);
  };
}

/**
 * Planning looks back this far, so an event moved (or created) to a time before the next planning
 * pass is still found and its prompt sent, a little late, rather than never. Jobs are idempotent per
 * event and instant, so planning the same occurrence twice queues it once.
 */
const PLAN_LOOKBACK_MS = 2 * 60_000;

/** Plans one schedule again; returns how many occurrences are queued ahead. */
export async function planSchedule(deps: EventScheduleDeps, schedule: ScheduleRecord): Promise<number> {
  const now = (deps.now ?? Date.now)();
  const spec = schedule.spec as unknown as AroundEventsSpec;
  const left =
    spec.maxRepetitions === undefined
      ? Number.POSITIVE_INFINITY
      : spec.maxRepetitions - schedule.repetitionsDone;
  if (left <= 0 || (spec.endAt !== undefined && spec.endAt < now)) {
    await deps.repository.schedules.setNextRun(schedule.tenantId, schedule.id, { nextRunAt: null });
    return 0;
  }
  const key = await keyPrincipal(deps.db, schedule.tenantId, schedule.keyId);
  if (!usableKey(key, now)) {
    return 0;
  }
  const plans = (
    await planEventOccurrences(
      accessOf(key, deps.providers),
      spec,
      {
        from: Math.max(schedule.createdAt.getTime(), now - PLAN_LOOKBACK_MS),
        to: now + EVENT_PLAN_HORIZON_MS,
      },
      AbortSignal.timeout(60_000),
    )
  )
    .filter((plan) => spec.endAt === undefined || plan.at <= spec.endAt)
    .slice(0, left);
  await deps.scheduling.queueEventOccurrences(schedule, plans);
  const ahead = plans.find((plan) => plan.at >= now);
  await deps.repository.schedules.setNextRun(schedule.tenantId, schedule.id, {
    nextRunAt: new Date(ahead?.at ?? now + EVENT_PLAN_HORIZON_MS),
  });
  return plans.length;
}

/**
 * Registers the minute-by-minute re-planning with pg-boss (its cron runs once per minute across
 * every worker) and the worker that does it. Returns a stop function.
 */
export async function startEventPlanning(
  boss: PgBoss,
  deps: EventScheduleDeps,
): Promise<() => Promise<void>> {
  await boss.schedule(EVENTS_QUEUE, '* * * * *', {}, { tz: 'UTC' });
  const id = await boss.work(EVENTS_QUEUE, { pollingIntervalSeconds: 5 }, async () => {
    const schedules = await deps.repository.schedules.listActiveOfKind('around_events');
    for (const schedule of schedules) {
      try {
        await planSchedule(deps, schedule);
      } catch (error) {
        // One tenant's unreachable calendar must not stop the others' prompts.
        deps.log.warn(
          { err: error, scheduleId: schedule.id },
          'event-relative schedule could not be planned',
        );
      }
    }
  });
  return () => boss.offWork(EVENTS_QUEUE, { id, wait: true });
}
