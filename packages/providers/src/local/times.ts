import {
  CalgateError,
  dateInZone,
  expandSeries,
  formatInstant,
  isValidTimeZone,
  parseDate,
  parseDateTime,
  seriesEnd,
} from '@calgate/core';
import type { EventDateTime } from '../types.ts';

/** An event's start and end resolved to instants, with what is stored beside them. */
export interface ResolvedTimes {
  allDay: boolean;
  startAt: Date;
  endAt: Date;
  startDate: string | null;
  endDate: string | null;
  startTimeZone: string | null;
  endTimeZone: string | null;
  seriesEndAt: Date | null;
}

function invalid(message: string): CalgateError {
  return new CalgateError('invalid_argument', message);
}

function zoneOf(value: EventDateTime, which: string): string | null {
  if (value.timeZone === undefined) {
    return null;
  }
  if (!isValidTimeZone(value.timeZone)) {
    throw invalid(`${which}.timeZone '${value.timeZone}' is not an IANA time zone (e.g. Europe/Berlin).`);
  }
  return value.timeZone;
}

function instantOf(value: EventDateTime, which: string, calendarZone: string): number {
  if (value.date !== undefined) {
    const date = parseDate(value.date);
    if (!date.ok) {
      throw invalid(`${which}.date '${value.date}' is not a valid YYYY-MM-DD date.`);
    }
    const instant = parseDateTime(`${value.date}T00:00:00`, calendarZone);
    if (!instant.ok) {
      throw invalid(`${which}.date '${value.date}' cannot be placed in ${calendarZone}.`);
    }
    return instant.value;
  }
  if (value.dateTime === undefined) {
    throw invalid(`${which} needs either dateTime (timed event) or date (all-day event).`);
  }
  const zone = value.timeZone ?? calendarZone;
  const instant = parseDateTime(value.dateTime, zone);
  if (!instant.ok) {
    throw invalid(`${which}.dateTime '${value.dateTime}': ${instant.error.message}`);
  }
  return instant.value;
}

/**
 * Validates start/end (and recurrence) as Google does and resolves them to instants: all-day
 * dates are midnights in the calendar's zone, and local date-times are read in their own zone.
 */
export function resolveTimes(
  start: EventDateTime,
  end: EventDateTime,
  recurrence: readonly string[],
  calendarZone: string,
): ResolvedTimes {
  const startAllDay = start.date !== undefined;
  const endAllDay = end.date !== undefined;
  if (start.date !== undefined && start.dateTime !== undefined) {
    throw invalid('start has both date and dateTime; give one.');
  }
  if (end.date !== undefined && end.dateTime !== undefined) {
    throw invalid('end has both date and dateTime; give one.');
  }
  if (startAllDay !== endAllDay) {
    throw invalid('start and end must both be dates (all-day) or both be date-times.');
  }
  const startTimeZone = zoneOf(start, 'start');
  const endTimeZone = zoneOf(end, 'end');
  const startMs = instantOf(start, 'start', calendarZone);
  const endMs = instantOf(end, 'end', calendarZone);
  if (startAllDay ? endMs <= startMs : endMs < startMs) {
    throw invalid(
      startAllDay
        ? 'end.date must be after start.date (the end date of an all-day event is exclusive).'
        : 'end must not be before start.',
    );
  }
  let seriesEndAt: Date | null = null;
  if (recurrence.length > 0) {
    const last = seriesEnd({ recurrence, start, end, defaultTimeZone: calendarZone });
    if (!last.ok) {
      throw last.error;
    }
    seriesEndAt = last.value === null ? null : new Date(last.value);
  }
  return {
    allDay: startAllDay,
    startAt: new Date(startMs),
    endAt: new Date(endMs),
    startDate: start.date ?? null,
    endDate: end.date ?? null,
    startTimeZone,
    endTimeZone,
    seriesEndAt,
  };
}

/** Google's shape for a stored time: the date, or the instant written in its zone. */
export function toEventDateTime(
  allDay: boolean,
  date: string | null,
  at: Date,
  zone: string | null,
  calendarZone: string,
): EventDateTime {
  if (allDay) {
    return { date: date ?? dateInZone(at.getTime(), calendarZone) };
  }
  const dateTime = formatInstant(at.getTime(), zone ?? calendarZone);
  return zone === null ? { dateTime } : { dateTime, timeZone: zone };
}

export { expandSeries };
