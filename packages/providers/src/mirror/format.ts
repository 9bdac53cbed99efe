/**
 * A provider-neutral MirrorFormat: rows keep the event as Calgate's CalendarEvent, so a
 * provider whose mapping already yields CalendarEvents (Outlook, CalDAV, ICS feeds) needs no
 * format of its own. All-day events start and end at UTC midnight of their dates (the dates
 * themselves are kept), as in every mirror row.
 */
import { seriesEnd } from '@calgate/core';
import type { MirrorEventInput } from '@calgate/store';
import { instantOfKey, parseInstanceId } from '../local/rows.ts';
import type { CalendarEvent, CalendarRef } from '../types.ts';
import type { MirrorFormat } from './source.ts';

const DAY_MS = 86_400_000;

const instant = (value: string | undefined): Date | null => {
  if (value === undefined) {
    return null;
  }
  const at = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
  return Number.isNaN(at.getTime()) ? null : at;
};

const text = (value: string | undefined): string | null => (value ? value : null);

/** A CalendarEvent as a mirror row; `raw` is the event itself. */
export function calendarEventRow(event: CalendarEvent): MirrorEventInput {
  return {
    eventId: event.id,
    recurringEventId: text(event.recurringEventId),
    originalStart: instant(event.originalStartTime?.dateTime ?? event.originalStartTime?.date),
    status: event.status,
    summary: text(event.summary),
    description: text(event.description),
    location: text(event.location),
    allDay: Boolean(event.start.date),
    startAt: instant(event.start.dateTime ?? event.start.date),
    endAt: instant(event.end.dateTime ?? event.end.date),
    startDate: text(event.start.date),
    endDate: text(event.end.date),
    startTimeZone: text(event.start.timeZone),
    endTimeZone: text(event.end.timeZone),
    recurrence: event.recurrence ?? [],
    seriesEnd: seriesEndOf(event),
    attendees: event.attendees ?? null,
    updated: instant(event.updated),
    etag: text(event.etag),
    raw: { ...event },
  };
}

/**
 * When a master's last occurrence ends, a day later (floating times are in the calendar's zone,
 * unknown here: a day covers every zone). Null when it never ends or the rule cannot be read.
 */
function seriesEndOf(event: CalendarEvent): Date | null {
  if (!event.recurrence?.length || event.recurringEventId) {
    return null;
  }
  const end = seriesEnd({
    recurrence: event.recurrence,
    start: event.start,
    end: event.end,
    defaultTimeZone: 'UTC',
  });
  return end.ok && end.value !== null ? new Date(end.value + DAY_MS) : null;
}

/** What a delete leaves: a single event or series removed, an occurrence (`<master>_<key>`) cancelled. */
function deletion(calendar: CalendarRef, eventId: string, at: number): MirrorEventInput {
  const parsed = parseInstanceId(eventId);
  const originalStart = parsed === null ? null : instantOfKey(parsed.key, calendar.timeZone);
  const occurrence =
    parsed === null || originalStart === null
      ? {}
      : {
          recurringEventId: parsed.masterId,
          originalStartTime: { dateTime: new Date(originalStart).toISOString() },
        };
  return calendarEventRow({
    id: eventId,
    status: 'cancelled',
    start: {},
    end: {},
    updated: new Date(at).toISOString(),
    ...occurrence,
  });
}

export const CALENDAR_EVENT_FORMAT: MirrorFormat = {
  toMirrorEvent: calendarEventRow,
  deletion,
  toEvent: (row) => row.raw as unknown as CalendarEvent,
};
