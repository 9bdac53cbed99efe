/**
 * An event as one row of a list: a single event, a recurring master, or one instance of a
 * series (generated, or an exception stored over it), with its effective data and instants.
 */
import { addDays, formatDate, formatInstant, parseDate } from '@calgate/core';
import type { CalendarRecord, EventDateTime, StoredEvent } from '../state.ts';
import { isRecurring, keyForOriginalStart } from './series.ts';
import { resolveTime } from './times.ts';

export type ViewKind = 'single' | 'master' | 'instance';

export interface EventView {
  id: string;
  kind: ViewKind;
  data: Record<string, unknown>;
  created: number;
  stamp: number;
  modSeq: number;
  order: number;
  recurringEventId?: string;
  /** Set when an instance is backed by a stored exception. */
  exception?: StoredEvent;
  startMs: number;
  endMs: number;
  allDay: boolean;
  cancelled: boolean;
}

function instants(calendar: CalendarRecord, data: Record<string, unknown>) {
  const start = resolveTime(data.start as EventDateTime, calendar.timeZone);
  const end = resolveTime(data.end as EventDateTime, calendar.timeZone);
  return { startMs: start.ms, endMs: end.ms, allDay: start.allDay };
}

/** A single event or a recurring master (its times are those of the first instance). */
export function storedView(calendar: CalendarRecord, event: StoredEvent): EventView {
  return {
    id: event.id,
    kind: isRecurring(event) ? 'master' : 'single',
    data: event.data,
    created: event.created,
    stamp: event.stamp,
    modSeq: event.modSeq,
    order: event.order,
    cancelled: event.data.status === 'cancelled',
    ...instants(calendar, event.data),
  };
}

/** Start and end of an unmodified instance that starts at `originalStart`. */
export function defaultInstanceTimes(
  calendar: CalendarRecord,
  master: StoredEvent,
  originalStart: EventDateTime,
): { start: EventDateTime; end: EventDateTime } {
  const mStart = master.data.start as EventDateTime;
  const mEnd = master.data.end as EventDateTime;
  if (originalStart.date !== undefined && mStart.date !== undefined && mEnd.date !== undefined) {
    const s = parseDate(mStart.date);
    const e = parseDate(mEnd.date);
    const o = parseDate(originalStart.date);
    if (s.ok && e.ok && o.ok) {
      const days = Math.round(
        (Date.UTC(e.value.year, e.value.month - 1, e.value.day) -
          Date.UTC(s.value.year, s.value.month - 1, s.value.day)) /
          86_400_000,
      );
      return { start: { date: originalStart.date }, end: { date: formatDate(addDays(o.value, days)) } };
    }
  }
  const duration = resolveTime(mEnd, calendar.timeZone).ms - resolveTime(mStart, calendar.timeZone).ms;
  const startMs = resolveTime(originalStart, calendar.timeZone).ms;
  const startZone = mStart.timeZone ?? calendar.timeZone;
  const endZone = mEnd.timeZone ?? startZone;
  return {
    start: { dateTime: formatInstant(startMs, startZone), timeZone: startZone },
    end: { dateTime: formatInstant(startMs + duration, endZone), timeZone: endZone },
  };
}

/** One instance of a series: generated from the master, with an exception's overrides on top. */
export function instanceView(
  calendar: CalendarRecord,
  master: StoredEvent,
  originalStart: EventDateTime,
  exception?: StoredEvent,
): EventView {
  const { recurrence: _recurrence, ...base } = master.data;
  const key = keyForOriginalStart(originalStart, calendar.timeZone);
  const data: Record<string, unknown> = {
    ...base,
    ...defaultInstanceTimes(calendar, master, originalStart),
    originalStartTime: originalStart,
    ...(exception?.data ?? {}),
  };
  for (const [key, value] of Object.entries(data)) {
    if (value === null) {
      delete data[key]; // an exception that removed a field of the series
    }
  }
  if (master.data.status === 'cancelled') {
    data.status = 'cancelled';
  }
  const view: EventView = {
    id: `${master.id}_${key}`,
    kind: 'instance',
    data,
    created: master.created,
    stamp: Math.max(master.stamp, exception?.stamp ?? 0),
    modSeq: Math.max(master.modSeq, exception?.modSeq ?? 0),
    order: master.order,
    recurringEventId: master.id,
    cancelled: data.status === 'cancelled',
    ...instants(calendar, data),
  };
  if (exception) {
    view.exception = exception;
  }
  return view;
}

/** The view of a stored exception, or null when its series is gone. */
export function exceptionView(calendar: CalendarRecord, exception: StoredEvent): EventView | null {
  const master = exception.recurringEventId ? calendar.events.get(exception.recurringEventId) : undefined;
  const original = exception.data.originalStartTime as EventDateTime | undefined;
  if (!master || !original) {
    return null;
  }
  return instanceView(calendar, master, original, exception);
}
