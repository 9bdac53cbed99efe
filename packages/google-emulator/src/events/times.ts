/**
 * Event start/end values (`{date}` or `{dateTime, timeZone}`) checked the way Google checks
 * them, resolved to instants, and formatted back for a response time zone. Time arithmetic
 * is @calgate/core's.
 */
import {
  formatInstant,
  fromLocal,
  isValidTimeZone,
  parseDate,
  parseDateTime,
  parseInstant,
} from '@calgate/core';
import { apiErrors } from '../errors.ts';
import type { EventDateTime } from '../state.ts';

export interface ResolvedTime {
  ms: number;
  allDay: boolean;
}

const LABEL: Record<string, string> = {
  start: 'start time',
  end: 'end time',
  originalStartTime: 'original start time',
};

/** Checks one start/end value; throws Google's 400 for a missing or malformed one. */
export function checkEventTime(value: unknown, field: 'start' | 'end' | 'originalStartTime'): EventDateTime {
  const label = LABEL[field] ?? field;
  if (value === undefined || value === null) {
    throw apiErrors.required(`Missing ${label}.`);
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw apiErrors.invalid(`Invalid ${label}.`);
  }
  const { date, dateTime, timeZone } = value as Record<string, unknown>;
  const out: EventDateTime = {};
  if (timeZone !== undefined && timeZone !== null) {
    if (typeof timeZone !== 'string' || !isValidTimeZone(timeZone)) {
      throw apiErrors.invalid(`Invalid time zone definition for ${label}.`);
    }
    out.timeZone = timeZone;
  }
  const hasDate = date !== undefined && date !== null;
  const hasDateTime = dateTime !== undefined && dateTime !== null;
  if (hasDate === hasDateTime) {
    throw hasDate ? apiErrors.invalid(`Invalid ${label}.`) : apiErrors.required(`Missing ${label}.`);
  }
  if (hasDate) {
    if (typeof date !== 'string' || !parseDate(date).ok) {
      throw apiErrors.invalid(`Invalid ${label}.`);
    }
    out.date = date;
    return out;
  }
  if (typeof dateTime !== 'string') {
    throw apiErrors.invalid(`Invalid ${label}.`);
  }
  const hasOffset = /(?:[zZ]|[+-]\d{2}:\d{2})$/.test(dateTime);
  if (!hasOffset && out.timeZone === undefined) {
    throw apiErrors.required(`Missing time zone definition for ${label}.`);
  }
  if (!parseDateTime(dateTime, out.timeZone).ok) {
    throw apiErrors.invalid(`Invalid ${label}.`);
  }
  out.dateTime = dateTime;
  return out;
}

/** The instant a checked value denotes; all-day dates start at midnight in `calendarZone`. */
export function resolveTime(value: EventDateTime, calendarZone: string): ResolvedTime {
  if (value.date !== undefined) {
    const d = parseDate(value.date);
    if (!d.ok) {
      throw apiErrors.invalid('Invalid date.');
    }
    return { ms: fromLocal({ ...d.value, hour: 0, minute: 0, second: 0 }, calendarZone), allDay: true };
  }
  const parsed = parseDateTime(value.dateTime ?? '', value.timeZone ?? calendarZone);
  if (!parsed.ok) {
    throw apiErrors.invalid('Invalid date-time.');
  }
  return { ms: parsed.value, allDay: false };
}

/**
 * A value as Google returns it: a date-time in the response zone (the `timeZone` query
 * parameter, else the event's own zone, else the calendar's) with that zone's offset.
 */
export function formatEventTime(
  value: EventDateTime,
  calendarZone: string,
  responseZone?: string,
): EventDateTime {
  if (value.date !== undefined) {
    return { date: value.date };
  }
  const ms = resolveTime(value, calendarZone).ms;
  const zone = responseZone ?? value.timeZone ?? calendarZone;
  const out: EventDateTime = { dateTime: formatInstant(ms, zone) };
  if (value.timeZone !== undefined) {
    out.timeZone = value.timeZone;
  }
  return out;
}

/** A query instant such as `timeMin`: RFC 3339 with a mandatory offset. */
export function parseQueryInstant(value: string, name: string): number {
  const parsed = parseInstant(value);
  if (!parsed.ok) {
    throw apiErrors.invalid(`Invalid value for ${name}: ${value}`, name);
  }
  return parsed.value;
}

/** A `timeZone` query parameter, checked. */
export function queryZone(value: string | null): string | undefined {
  if (value === null || value === '') {
    return undefined;
  }
  if (!isValidTimeZone(value)) {
    throw apiErrors.invalid(`Invalid time zone definition: ${value}`, 'timeZone');
  }
  return value;
}
