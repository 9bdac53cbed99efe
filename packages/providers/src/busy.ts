/** Free/busy helpers both providers share: the query window and merging of busy intervals. */
import { CalgateError, formatInstant, type Interval, mergeIntervals, parseInstant } from '@calgate/core';
import type { BusyInterval } from './types.ts';

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
