/**
 * The one way tools take a time range and write instants back. `timeMin` / `timeMax` accept an
 * RFC 3339 date-time with an offset, a local date-time without one, or a plain date; the last two
 * are read in the zone that applies to the call (the request's `timeZone`, else the key's own,
 * else the calendar's; see CalendarAccess.zoneFor); a local time that does not exist there is
 * refused, a repeated one is its first reading. A plain date as `timeMin` is the start of that
 * day; as `timeMax`, its end (so `timeMin: 2026-11-26, timeMax: 2026-11-26` is that whole day).
 * Every instant in an answer is wall-clock time with that zone's offset, to the second.
 */
import {
  addDays,
  CalgateError,
  formatInstant,
  fromLocal,
  naiveMs,
  parseDate,
  parseDateTimeFields,
  readLocal,
} from '@calgate/core';
import { z } from 'zod';

export const DAY_MS = 86_400_000;
const MIN_YEAR = 1900;
const MAX_YEAR = 2200;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export type Edge = 'min' | 'max';

/** Milliseconds of a range bound read in `zone`, or the reason it is not one. */
function readBound(text: string, zone: string, edge: Edge): number | CalgateError {
  if (DATE.test(text)) {
    const date = parseDate(text);
    if (!date.ok) {
      return date.error;
    }
    const day = edge === 'min' ? date.value : addDays(date.value, 1);
    return fromLocal({ ...day, hour: 0, minute: 0, second: 0, millisecond: 0 }, zone);
  }
  // Seconds may be left out, as people write times: 09:00 is 09:00:00.
  const parsed = parseDateTimeFields(text.replace(/^(.{10}[Tt]\d{2}:\d{2})(?=$|[Zz+-])/, '$1:00'), true);
  if (!parsed.ok) {
    return new CalgateError(
      'invalid_argument',
      `'${text}' is not a date or date-time: use RFC 3339 (2026-11-26T09:00:00+01:00), a local date-time (2026-11-26T09:00:00) or a date (2026-11-26).`,
    );
  }
  const { local, offsetMinutes } = parsed.value;
  if (local.year < MIN_YEAR || local.year > MAX_YEAR) {
    return new CalgateError(
      'invalid_argument',
      `'${text}' must fall between the years ${MIN_YEAR} and ${MAX_YEAR}.`,
    );
  }
  if (offsetMinutes === undefined) {
    // A time that does not exist in the zone is refused as everywhere; a repeated one is its first.
    const read = readLocal(local, zone);
    return read.ok ? read.value.instant : read.error;
  }
  return naiveMs(local) - offsetMinutes * 60_000;
}

/** A `timeMin` / `timeMax` argument: checked for form here, read in the call's zone by `boundOf`. */
export const rangeBound = z
  .string()
  .max(64)
  .superRefine((value, context) => {
    const problem = readBound(value, 'UTC', 'min');
    if (problem instanceof CalgateError) {
      const message = problem.message
        .replace(`'${value}' is not a date or date-time: use `, 'must be ')
        .replace(`'${value}' `, '');
      context.addIssue({ code: 'custom', message });
    }
  });

/** A range bound as epoch milliseconds, local forms read in `zone`. */
export function boundOf(text: string, zone: string, edge: Edge): number {
  const value = readBound(text, zone, edge);
  if (value instanceof CalgateError) {
    throw value;
  }
  return value;
}

/** [start, end) in epoch milliseconds. */
export interface Window {
  start: number;
  end: number;
}

/**
 * A checked [timeMin, timeMax) window read in `zone`; an absent bound is `now` plus the given
 * day offsets (only where the tool has a default).
 */
export function windowIn(
  args: { timeMin?: string | undefined; timeMax?: string | undefined },
  zone: string,
  options: { now: Date; beforeDays?: number; afterDays?: number; maxDays: number },
): Window {
  const now = options.now.getTime();
  const min =
    args.timeMin === undefined
      ? now - (options.beforeDays ?? 0) * DAY_MS
      : boundOf(args.timeMin, zone, 'min');
  const max =
    args.timeMax === undefined ? now + (options.afterDays ?? 0) * DAY_MS : boundOf(args.timeMax, zone, 'max');
  if (max <= min) {
    throw new CalgateError(
      'invalid_argument',
      `timeMax must be later than timeMin (read in ${zone}: ${instantOut(min, zone)} to ${instantOut(max, zone)}).`,
    );
  }
  if (max - min > options.maxDays * DAY_MS) {
    throw new CalgateError(
      'invalid_argument',
      `The range from timeMin to timeMax spans more than ${options.maxDays} days; ask for a shorter range.`,
    );
  }
  return { start: min, end: max };
}

/** An instant as every answer writes it: wall-clock time in `zone` with its offset, to the second. */
export function instantOut(ms: number, zone: string): string {
  return formatInstant(Math.floor(ms / 1000) * 1000, zone);
}

/** An interval in the same form. */
export function rangeOut(
  interval: { start: number; end: number },
  zone: string,
): { start: string; end: string } {
  return { start: instantOut(interval.start, zone), end: instantOut(interval.end, zone) };
}
