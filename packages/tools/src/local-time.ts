/**
 * The one way tools read an instant an agent writes (an event's start and end, a booking's, a
 * scheduled prompt's `at`): RFC 3339 with an offset, or a local date-time without one, read in
 * the zone that applies to the call (the time's own `timeZone`, else the request's, else the
 * key's own, else the calendar's; see CalendarAccess.zoneFor). A local time that does not exist there (clocks go forward over
 * it) is refused by name; one that happens twice (clocks go back) takes the first reading and
 * says so in the answer.
 */
import { CalgateError, naiveMs, parseDateTimeFields, readLocal } from '@calgate/core';
import type { EventDateTime } from '@calgate/providers';
import { z } from 'zod';
import { instantOut } from './range.ts';

const MIN_YEAR = 1900;
const MAX_YEAR = 2200;

/** Seconds may be left out, as people write times: 09:00 is 09:00:00. */
function withSeconds(text: string): string {
  return text.replace(/^(.{10}[Tt]\d{2}:\d{2})(?=$|[Zz+-])/, '$1:00');
}

/** Why `text` is not an instant or local date-time, or undefined when it is one. */
export function instantProblem(text: string): string | undefined {
  const parsed = parseDateTimeFields(withSeconds(text), true);
  if (!parsed.ok) {
    return `'${text}' is not a date-time: use RFC 3339 with an offset (2026-12-07T09:00:00+01:00) or a local date-time (2026-12-07T09:00:00), read in timeZone`;
  }
  const { year } = parsed.value.local;
  if (year < MIN_YEAR || year > MAX_YEAR) {
    return `'${text}' must fall between the years ${MIN_YEAR} and ${MAX_YEAR}`;
  }
  return undefined;
}

/** An instant argument: RFC 3339 with an offset, or a local date-time read in the call's zone. */
export const instantIn = z
  .string()
  .max(64)
  .superRefine((value, context) => {
    const problem = instantProblem(value);
    if (problem !== undefined) {
      context.addIssue({ code: 'custom', message: problem });
    }
  });

/** Whether `text` is a date-time without an offset. */
export function isLocalDateTime(text: string): boolean {
  const parsed = parseDateTimeFields(withSeconds(text), true);
  return parsed.ok && parsed.value.offsetMinutes === undefined;
}

/**
 * Epoch milliseconds of an instant argument, a local date-time read in `zone`. Refuses a time
 * that does not exist in `zone`; a repeated one takes the first reading and adds a notice.
 */
export function instantAt(text: string, zone: string, notices?: string[]): number {
  const parsed = parseDateTimeFields(withSeconds(text), true);
  if (!parsed.ok) {
    throw new CalgateError('invalid_argument', `${instantProblem(text) ?? parsed.error.message}.`);
  }
  const { local, offsetMinutes } = parsed.value;
  if (offsetMinutes !== undefined) {
    return naiveMs(local) - offsetMinutes * 60_000;
  }
  const read = readLocal(local, zone);
  if (!read.ok) {
    throw read.error;
  }
  if (read.value.notice !== undefined && notices !== undefined && !notices.includes(read.value.notice)) {
    notices.push(read.value.notice);
  }
  return read.value.instant;
}

/**
 * An event time with a local `dateTime` made exact: read in its own `timeZone`, else `zone`, and
 * written with that zone's offset. The zone it was read in becomes its `timeZone`, so a series
 * repeats at that wall-clock time. Dates and exact times pass as they are.
 */
export function eventTimeAt(time: EventDateTime, zone: string, notices: string[]): EventDateTime {
  if (time.dateTime === undefined || !isLocalDateTime(time.dateTime)) {
    return time;
  }
  const own = time.timeZone ?? zone;
  return { ...time, dateTime: instantOut(instantAt(time.dateTime, own, notices), own), timeZone: own };
}

/** `start` and `end` of event arguments with local date-times made exact (see eventTimeAt). */
export function withExactTimes<
  T extends { start?: EventDateTime | undefined; end?: EventDateTime | undefined },
>(args: T, zone: string, notices: string[]): T {
  return {
    ...args,
    ...(args.start === undefined ? {} : { start: eventTimeAt(args.start, zone, notices) }),
    ...(args.end === undefined ? {} : { end: eventTimeAt(args.end, zone, notices) }),
  };
}

/**
 * The `timeZone` parameter of every tool that reads or answers instants: an IANA zone, checked
 * (with a suggestion for near-misses) when the call's zone is worked out. Undescribed on purpose:
 * the server instructions say what it means once instead of every tool repeating it.
 */
export const timeZoneArg = z
  .string()
  .refine((zone) => zone.length > 0 && zone.length <= 64, { message: 'must be an IANA zone name' })
  .optional();

/** The `timeZone` of every answer with instants: the zone they are written in (see timeZoneArg). */
export const timeZoneOut = z.string();

/** Notices of repeated local times as the write tools' warnings carry them. */
export function noticeWarnings(notices: readonly string[]): { kind: 'note'; message: string }[] {
  return notices.map((message) => ({ kind: 'note' as const, message }));
}
