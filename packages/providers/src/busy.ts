/** Free/busy helpers the providers share: the query window, merging of busy intervals, per-calendar answers. */
import {
  CalgateError,
  formatInstant,
  type Interval,
  isCalgateError,
  mergeIntervals,
  parseInstant,
} from '@calgate/core';
import type { BusyEvent, BusyInterval, CalendarRef, FreeBusyResult } from './types.ts';

export interface Window {
  from: number;
  to: number;
}

/** Google's limit on the span of one free/busy query is far larger; this bounds expansion work. */
export const MAX_FREEBUSY_DAYS = 366;

export function freeBusyWindow(timeMin: string, timeMax: string): Window {
  const from = parseInstant(timeMin);
  if (!from.ok) {
    throw new CalgateError(
      'invalid_argument',
      `timeMin '${timeMin}' is not an RFC 3339 date-time with an offset.`,
    );
  }
  const to = parseInstant(timeMax);
  if (!to.ok) {
    throw new CalgateError(
      'invalid_argument',
      `timeMax '${timeMax}' is not an RFC 3339 date-time with an offset.`,
    );
  }
  if (to.value <= from.value) {
    throw new CalgateError('invalid_argument', 'timeMax must be after timeMin.');
  }
  if (to.value - from.value > MAX_FREEBUSY_DAYS * 86_400_000) {
    throw new CalgateError(
      'invalid_argument',
      `A free/busy window may span at most ${MAX_FREEBUSY_DAYS} days; split the query.`,
    );
  }
  return { from: from.value, to: to.value };
}

/** Clips intervals to the window and merges overlapping or touching ones, as UTC RFC 3339. */
export function mergeBusy(intervals: Iterable<readonly [number, number]>, window: Window): BusyInterval[] {
  const clipped: Interval[] = [];
  for (const [start, end] of intervals) {
    clipped.push({ start: Math.max(start, window.from), end: Math.min(end, window.to) });
  }
  return mergeIntervals(clipped).map(({ start, end }) => ({
    start: formatInstant(start, 'UTC'),
    end: formatInstant(end, 'UTC'),
  }));
}

/**
 * Free/busy of each calendar, read one by one in parallel by `busyOf` (its busy time, or that and
 * the events making it, when it read them). A calendar whose read fails with what `failure` turns
 * into a CalgateError answers that error, the others their busy time; anything `failure` leaves
 * undefined is thrown.
 */
export function busyPerCalendar(
  calendars: readonly CalendarRef[],
  timeMin: string,
  timeMax: string,
  busyOf: (
    calendar: CalendarRef,
    window: Window,
  ) => Promise<BusyInterval[] | { busy: BusyInterval[]; events: BusyEvent[] }>,
  failure: (error: unknown) => CalgateError | undefined = (error) =>
    isCalgateError(error) ? error : undefined,
): Promise<FreeBusyResult[]> {
  const window = freeBusyWindow(timeMin, timeMax);
  return Promise.all(
    calendars.map(async (calendar): Promise<FreeBusyResult> => {
      try {
        const answer = await busyOf(calendar, window);
        return Array.isArray(answer)
          ? { calendarId: calendar.id, busy: answer }
          : { calendarId: calendar.id, ...answer };
      } catch (error) {
        const known = failure(error);
        if (known === undefined) {
          throw error;
        }
        return { calendarId: calendar.id, error: { code: known.code, message: known.message } };
      }
    }),
  );
}
