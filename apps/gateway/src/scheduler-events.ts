/**
 * The worker's side of prompts relative to calendar events. Three things keep their occurrences
 * right:
 *
 * - The mirror's change feed: when a sync (or a write through Calgate) changes events of a
 *   mirrored calendar, the schedules that read that calendar are planned again at once (a second
 *   or so after the change commits), so a new or moved event gets its prompt queued without
 *   waiting for the sweep.
 * - The sweep: every minute each active schedule is planned again over the next 48 h. It moves
 *   the horizon forward (an unchanged event entering the 48 h window), and it is what sees
 *   changes the feed does not carry: Calgate's own calendars, calendars the mirror does not sync,
 *   a key given another calendar. It stays at one minute for mirrored calendars too: once reads
 *   come from the mirror a pass costs Postgres reads, and a slower sweep would make a prompt's
 *   timeliness depend on the mirror syncing every calendar a schedule reads.
 * - The check just before delivery: each occurrence is compared with its event once more, so an
 *   event moved or cancelled after planning is not prompted at its old time.
 */
import type { EventCheck, Scheduling } from '@calgate/scheduler';
import { EVENTS_QUEUE } from '@calgate/scheduler';
import type { Database, MirrorChange, ScheduleRecord, SchedulerRepository } from '@calgate/store';
import {
  EVENT_PLAN_HORIZON_MS,
  EVENT_PLAN_SWEEP_MINUTES,
  type ProviderResolver,
  planEventOccurrences,
} from '@calgate/tools';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { type FeedConsumer, type FeedLoop, startFeedConsumer } from './mirror/feed.ts';
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
  // No event ahead in the window: no next run, and the schedule stays active for the next sweep.
  await deps.repository.schedules.setNextRun(schedule.tenantId, schedule.id, {
    nextRunAt: ahead === undefined ? null : new Date(ahead.at),
    finished: false,
  });
  return plans.length;
}

/** The change feed's cursor of event-relative schedules (mirror_feed_cursors.consumer). */
export const EVENT_SCHEDULES_FEED = 'event-schedules';

/** Calendar ids Calgate gives (cal_…); a spec may also name 'primary', an upstream id or a name. */
const CALGATE_CALENDAR_ID = /^cal_/;

/**
 * Whether a schedule may read a calendar that changed. Specs name calendars as the caller did
 * ('primary', an upstream id or a calendar name are resolved only against the key's calendars),
 * so anything but a Calgate id counts as possibly changed, as does a spec without calendars (all
 * the key can read). Planning a schedule that did not need it costs one read and queues nothing
 * new; missing one would delay its prompt to the next sweep.
 */
export function readsChanged(
  schedule: ScheduleRecord,
  changed: ReadonlyMap<string, ReadonlySet<string>>,
): boolean {
  const calendars = changed.get(schedule.tenantId);
  if (calendars === undefined) {
    return false;
  }
  const spec = schedule.spec as unknown as AroundEventsSpec;
  return (
    spec.calendarIds === undefined ||
    spec.calendarIds.some((id) => !CALGATE_CALENDAR_ID.test(id) || calendars.has(id))
  );
}

/** Changed calendars by tenant. */
function changedCalendars(changes: readonly MirrorChange[]): Map<string, Set<string>> {
  const byTenant = new Map<string, Set<string>>();
  for (const change of changes) {
    const calendars = byTenant.get(change.tenantId) ?? new Set<string>();
    calendars.add(change.calendarId);
    byTenant.set(change.tenantId, calendars);
  }
  return byTenant;
}

/**
 * Plans again, once each, the active schedules that read a calendar of these changes. A schedule
 * that cannot be planned now (its key revoked, Google unreachable) is logged and left to the
 * sweep, so it does not hold the feed up for everyone; only a stop (or the database failing)
 * throws, and the batch is then handled again. Returns the ids of the schedules planned.
 */
export async function replanChanged(
  deps: EventScheduleDeps,
  changes: readonly MirrorChange[],
  signal: AbortSignal,
): Promise<string[]> {
  const changed = changedCalendars(changes);
  const schedules = (await deps.repository.schedules.listActiveOfKind('around_events')).filter((schedule) =>
    readsChanged(schedule, changed),
  );
  const planned: string[] = [];
  for (const schedule of schedules) {
    signal.throwIfAborted();
    try {
      await planSchedule(deps, schedule);
      planned.push(schedule.id);
    } catch (error) {
      deps.log.warn(
        { err: error, scheduleId: schedule.id },
        'event-relative schedule could not be planned after a calendar change; the sweep will retry',
      );
    }
  }
  if (planned.length > 0) {
    deps.log.debug(
      { schedules: planned.length, changes: changes.length },
      'event-relative schedules re-planned',
    );
  }
  return planned;
}

/** The feed consumer that re-plans schedules whose calendars changed. */
export function eventScheduleFeed(deps: EventScheduleDeps): FeedConsumer {
  return {
    name: EVENT_SCHEDULES_FEED,
    // Changes from before the first start were the sweep's to see; replaying them plans nothing new.
    start: 'now',
    handle: async (changes, signal) => {
      await replanChanged(deps, changes, signal);
    },
  };
}

export interface EventPlanningOptions {
  /** How often the change feed is probed (default 1 s). */
  feedPollMs?: number;
}

/**
 * Registers the minute-by-minute sweep with pg-boss (its cron runs once per minute across every
 * worker) and the worker that does it, and starts this process's change-feed consumer. Returns a
 * stop function.
 */
export async function startEventPlanning(
  boss: PgBoss,
  deps: EventScheduleDeps,
  options: EventPlanningOptions = {},
): Promise<() => Promise<void>> {
  const sweep = EVENT_PLAN_SWEEP_MINUTES === 1 ? '* * * * *' : `*/${EVENT_PLAN_SWEEP_MINUTES} * * * *`;
  await boss.schedule(EVENTS_QUEUE, sweep, {}, { tz: 'UTC' });
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
  let feed: FeedLoop;
  try {
    feed = await startFeedConsumer(eventScheduleFeed(deps), {
      db: deps.db,
      log: deps.log,
      ...(options.feedPollMs === undefined ? {} : { pollMs: options.feedPollMs }),
    });
  } catch (error) {
    await boss.offWork(EVENTS_QUEUE, { id, wait: true });
    throw error;
  }
  return async () => {
    await feed.stop();
    await boss.offWork(EVENTS_QUEUE, { id, wait: true });
  };
}
