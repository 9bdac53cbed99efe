/**
 * Prompts relative to calendar events: the occurrences "N minutes before/after each event matching
 * a rules query" on the calendars a key can read. Shared by the gateway (planning when a schedule
 * is made) and the worker (re-planning as events change, checking an occurrence before it goes).
 */
import { CalgateError } from '@calgate/core';
import type { CalendarAccess } from './access.ts';
import { compiled, readOccurrences, rulesCalendars } from './tools/rules/common.ts';

export interface EventScheduleSpec {
  query: string;
  /** Negative: before each event's start; positive: after it. */
  offsetMinutes: number;
  /** Default: every calendar the key can read. */
  calendarIds?: readonly string[] | undefined;
}

export interface EventOccurrencePlan {
  /** When the prompt is due (epoch ms): the event's start plus the offset. */
  at: number;
  calendarId: string;
  eventId: string;
  /** The event's start (epoch ms) the plan was made from. */
  start: number;
  summary: string;
}

/** How far ahead event-relative prompts are planned. */
export const EVENT_PLAN_HORIZON_MS = 48 * 60 * 60_000;
/** How often the worker's sweep plans every event-relative schedule again, in minutes. */
export const EVENT_PLAN_SWEEP_MINUTES = 1;

/**
 * Why an active event-relative schedule has no next run: nothing matches in the window planned.
 * Names the real window and sweep, so an agent knows when to look again.
 */
export function noPlannedEventReason(query: string): string {
  const hours = EVENT_PLAN_HORIZON_MS / (60 * 60_000);
  const every = EVENT_PLAN_SWEEP_MINUTES === 1 ? 'minute' : `${EVENT_PLAN_SWEEP_MINUTES} minutes`;
  return `no event matching ${JSON.stringify(query)} in the next ${hours} h; checked every ${every}`;
}
/** The largest offset allowed either way: one week. */
export const MAX_EVENT_OFFSET_MINUTES = 7 * 24 * 60;

/** Checks the spec before anything is stored: the query compiles, the offset is in range. */
export function checkEventSpec(spec: EventScheduleSpec): void {
  compiled(spec.query);
  if (!Number.isInteger(spec.offsetMinutes) || Math.abs(spec.offsetMinutes) > MAX_EVENT_OFFSET_MINUTES) {
    throw new CalgateError(
      'invalid_argument',
      `offsetMinutes must be a whole number between -${MAX_EVENT_OFFSET_MINUTES} and ${MAX_EVENT_OFFSET_MINUTES} (one week), got ${String(spec.offsetMinutes)}.`,
    );
  }
}

/**
 * The prompts due in [from, to) for events matching the query on the key's readable calendars
 * (all-day events and cancelled ones excluded), earliest first. Events are read around the window
 * shifted by the offset, so an event just after `to` whose prompt falls before `to` is included.
 */
export async function planEventOccurrences(
  access: CalendarAccess,
  spec: EventScheduleSpec,
  window: { from: number; to: number },
  signal: AbortSignal,
): Promise<EventOccurrencePlan[]> {
  const query = compiled(spec.query);
  const offsetMs = spec.offsetMinutes * 60_000;
  const { handles } = rulesCalendars(access, spec.calendarIds);
  const { occurrences } = await readOccurrences(
    handles,
    { start: window.from - offsetMs, end: window.to - offsetMs },
    signal,
  );
  const plans: EventOccurrencePlan[] = [];
  for (const occurrence of occurrences) {
    const at = occurrence.start + offsetMs;
    if (occurrence.allDay || at < window.from || at >= window.to || !query.matches(occurrence.rule)) {
      continue;
    }
    plans.push({
      at,
      calendarId: occurrence.calendar.id,
      eventId: occurrence.event.id,
      start: occurrence.start,
      summary: occurrence.event.summary ?? '',
    });
  }
  return plans.sort((a, b) => a.at - b.at || a.eventId.localeCompare(b.eventId));
}
