import { epochDay } from '@calgate/core';
import type { CalendarEvent, EventDateTime } from '@calgate/providers';
import { instantOut } from './range.ts';
import { EVENT_EXTRA_FIELDS, type EventOut, parseRfc3339 } from './schemas.ts';

// Google's field order: id, status, summary, description, location, start, end, then the rest.
const [description, location, ...rest] = EVENT_EXTRA_FIELDS;
/** The fields of an event the output schema knows, in the order toEventOut writes them. */
export const EVENT_OUT_FIELDS = ['id', 'status', 'summary', description, location, 'start', 'end', ...rest];

/** A value worth writing: present, and not the default that says nothing. */
function given(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** A digit's value at `i`, or NaN. */
function digit(text: string, i: number): number {
  const value = text.charCodeAt(i) - 48;
  return value >= 0 && value <= 9 ? value : Number.NaN;
}

/**
 * Milliseconds of a provider's date-time in its usual form (`2026-12-07T09:00:00+01:00` or
 * `…Z`), read by hand: listings rewrite two per event, and the general parser costs ~1 µs each.
 * Anything else goes to parseRfc3339.
 */
function providerMs(text: string): number | undefined {
  const n = text.length;
  if ((n !== 20 && n !== 25) || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T') {
    return parseRfc3339(text);
  }
  const two = (i: number) => digit(text, i) * 10 + digit(text, i + 1);
  const year = two(0) * 100 + two(2);
  const [month, day, hour, minute, second] = [two(5), two(8), two(11), two(14), two(17)];
  let offset = 0;
  if (n === 25) {
    const sign = text[19] === '+' ? 1 : text[19] === '-' ? -1 : Number.NaN;
    offset = sign * (two(20) * 60 + two(23));
  } else if (text[19] !== 'Z') {
    return parseRfc3339(text);
  }
  const ms =
    epochDay(year, month, day) * 86_400_000 +
    hour * 3_600_000 +
    minute * 60_000 +
    second * 1000 -
    offset * 60_000;
  return Number.isFinite(ms) && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23
    ? ms
    : parseRfc3339(text);
}

/**
 * An event time written in the answer's zone, as Google's `timeZone` parameter does: the instant
 * is unchanged, the time's own `timeZone` (the zone its series repeats in) stays beside it.
 */
export function timeIn(time: EventDateTime, zone: string | undefined): EventDateTime {
  if (zone === undefined || time.dateTime === undefined) {
    return time;
  }
  const ms = providerMs(time.dateTime);
  if (ms === undefined) {
    return time;
  }
  const dateTime = instantOut(ms, zone);
  return dateTime === time.dateTime ? time : { ...time, dateTime };
}

/**
 * Tags an upstream event with its Calgate calendar id, keeping the fields the output schema knows
 * (EVENT_OUT_FIELDS, in that order) and leaving out absent ones and the defaults
 * (transparency 'opaque', visibility 'default') to keep results small for agents. With `zone`, event
 * times are written in it (see timeIn). Written field by
 * field: listings call this for every event, and named reads cost less than looked-up keys.
 */
export function toEventOut(calendarId: string, event: CalendarEvent, zone?: string): EventOut {
  const out: Partial<EventOut> & { calendarId: string } = { calendarId };
  if (given(event.id)) {
    out.id = event.id;
  }
  if (given(event.status)) {
    out.status = event.status;
  }
  if (given(event.summary)) {
    out.summary = event.summary;
  }
  if (given(event.description)) {
    out.description = event.description;
  }
  if (given(event.location)) {
    out.location = event.location;
  }
  if (given(event.start)) {
    out.start = timeIn(event.start, zone);
  }
  if (given(event.end)) {
    out.end = timeIn(event.end, zone);
  }
  if (given(event.recurrence)) {
    out.recurrence = event.recurrence;
  }
  if (given(event.recurringEventId)) {
    out.recurringEventId = event.recurringEventId;
  }
  if (given(event.originalStartTime)) {
    out.originalStartTime = timeIn(event.originalStartTime as EventDateTime, zone);
  }
  if (given(event.attendees)) {
    out.attendees = event.attendees;
  }
  if (given(event.organizer)) {
    out.organizer = event.organizer;
  }
  if (given(event.reminders)) {
    out.reminders = event.reminders;
  }
  if (given(event.transparency) && event.transparency !== 'opaque') {
    out.transparency = event.transparency;
  }
  if (given(event.visibility) && event.visibility !== 'default') {
    out.visibility = event.visibility;
  }
  if (given(event.colorId)) {
    out.colorId = event.colorId;
  }
  if (given(event.htmlLink)) {
    out.htmlLink = event.htmlLink;
  }
  if (given(event.updated)) {
    out.updated = event.updated;
  }
  return out as EventOut;
}
