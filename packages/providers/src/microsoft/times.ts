/**
 * Graph's `dateTimeTimeZone` ↔ Calgate's times. Graph writes a wall-clock reading without an
 * offset (`2026-03-29T09:00:00.0000000`, seven fractional digits) in the zone it names (the
 * `Prefer: outlook.timezone` zone, else UTC), so a time is never read with `new Date(text)`: it
 * is a wall clock in that zone, turned into an instant by core's rules (a reading in a DST gap
 * moves forward by the gap, a repeated one means its first occurrence). All-day events run
 * midnight to midnight in the event's own zone: their dates are the date parts, end exclusive.
 */
import {
  CalgateError,
  dateInZone,
  err,
  formatInstant,
  formatLocalDateTime,
  fromLocal,
  isoInstant,
  type LocalDateTime,
  naiveMs,
  ok,
  parseDate,
  parseDateTime,
  parseDateTimeFields,
  type Result,
  toLocal,
  validateTimeZone,
} from '@calgate/core';
import type { EventDateTime } from '../types.ts';
import { ianaZoneFor, windowsZoneFor } from './zones.ts';

/** Graph's `dateTimeTimeZone`. */
export interface GraphDateTimeTimeZone {
  dateTime: string;
  timeZone?: string;
}

/** A Graph time read: the wall clock as written, the IANA zone it was written in, and its instant. */
export interface GraphTime {
  local: LocalDateTime;
  zone: string;
  instant: number;
}

function badTime(value: unknown, why: string): Result<never, CalgateError> {
  return err(
    new CalgateError('upstream_unavailable', `Microsoft Graph answered an unreadable time: ${why}.`, {
      context: { value },
    }),
  );
}

/** Reads a `dateTimeTimeZone` (a text carrying an offset, which Graph does not send, counts as written). */
export function readGraphTime(
  value: GraphDateTimeTimeZone | null | undefined,
): Result<GraphTime, CalgateError> {
  if (value === null || value === undefined || typeof value.dateTime !== 'string') {
    return badTime(value, 'a start or end without dateTime');
  }
  const fields = parseDateTimeFields(value.dateTime, true);
  if (!fields.ok) {
    return badTime(value, fields.error.message);
  }
  const zone = ianaZoneFor(value.timeZone ?? 'UTC');
  if (!zone.ok) {
    return zone;
  }
  const { local, offsetMinutes } = fields.value;
  const instant =
    offsetMinutes === undefined ? fromLocal(local, zone.value) : naiveMs(local) - offsetMinutes * 60_000;
  return ok({ local, zone: zone.value, instant });
}

/**
 * A timed start or end as Calgate writes it: the instant with the offset of `displayZone` (the
 * event's own zone when known) and that zone; without one, the zone Graph answered in.
 */
export function toEventDateTime(
  value: GraphDateTimeTimeZone | null | undefined,
  displayZone?: string,
): Result<EventDateTime, CalgateError> {
  const read = readGraphTime(value);
  if (!read.ok) {
    return read;
  }
  const zone = displayZone ?? read.value.zone;
  return ok({ dateTime: formatInstant(read.value.instant, zone), timeZone: zone });
}

/**
 * An all-day start or end as a date: the date parts when Graph answered in the event's own zone
 * (`ownZone`, or no zone given), else the date of that instant in the event's zone. Graph's end is
 * already the exclusive midnight, so it maps to the exclusive end date.
 */
export function toEventDate(
  value: GraphDateTimeTimeZone | null | undefined,
  ownZone?: string,
): Result<EventDateTime, CalgateError> {
  const read = readGraphTime(value);
  if (!read.ok) {
    return read;
  }
  const { local, zone, instant } = read.value;
  if (ownZone === undefined || ownZone === zone) {
    return ok({ date: formatLocalDateTime(local).slice(0, 10) });
  }
  return ok({ date: dateInZone(instant, ownZone) });
}

/** A Graph instant property (`createdDateTime`, `lastModifiedDateTime`: UTC with 7 digits) as RFC 3339. */
export function toTimestamp(text: string | null | undefined): string | undefined {
  if (typeof text !== 'string') {
    return undefined;
  }
  const fields = parseDateTimeFields(text, true);
  if (!fields.ok) {
    return undefined;
  }
  const { local, offsetMinutes } = fields.value;
  return isoInstant(naiveMs(local) - (offsetMinutes ?? 0) * 60_000);
}

/** What a start or end becomes for Graph: the wall clock in its zone, and that zone's Windows name. */
export interface GraphTimeInput {
  value: GraphDateTimeTimeZone;
  /** The IANA zone the wall clock is read in. */
  zone: string;
  allDay: boolean;
}

/**
 * A Calgate start or end for a Graph write. A timed value is its instant's wall clock in its own
 * `timeZone`, else `defaultZone` (the calendar's); an all-day date is midnight in that zone. The
 * zone is sent by its Windows name, the one kind Graph accepts for every zone.
 */
export function toGraphTime(value: EventDateTime, defaultZone: string): Result<GraphTimeInput, CalgateError> {
  const zoneName = value.timeZone ?? defaultZone;
  const zone = validateTimeZone(zoneName);
  if (!zone.ok) {
    return zone;
  }
  const windows = windowsZoneFor(zone.value);
  if (!windows.ok) {
    return windows;
  }
  if (value.date !== undefined) {
    const date = parseDate(value.date);
    if (!date.ok) {
      return date;
    }
    return ok({
      value: { dateTime: `${value.date}T00:00:00`, timeZone: windows.value },
      zone: zone.value,
      allDay: true,
    });
  }
  if (value.dateTime === undefined) {
    return err(
      new CalgateError(
        'invalid_argument',
        "A start or end needs 'dateTime' (RFC 3339) or 'date' (YYYY-MM-DD).",
      ),
    );
  }
  const instant = parseDateTime(value.dateTime, zone.value);
  if (!instant.ok) {
    return instant;
  }
  const local = formatLocalDateTime({ ...toLocal(instant.value, zone.value) });
  return ok({ value: { dateTime: local, timeZone: windows.value }, zone: zone.value, allDay: false });
}

/** A `calendarView` bound (`startDateTime`/`endDateTime`): the instant in UTC, `Z` and all. */
export function graphRangeBound(instant: number): string {
  return formatInstant(instant);
}

/**
 * The `Prefer: outlook.timezone` preference that makes Graph write times in `zone` (by its
 * Windows name, which Graph knows for every zone it has).
 */
export function preferTimeZone(zone: string): Result<string, CalgateError> {
  const windows = windowsZoneFor(zone);
  return windows.ok ? ok(`outlook.timezone="${windows.value}"`) : windows;
}
