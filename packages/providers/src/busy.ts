/** Free/busy helpers both providers share: the query window and merging of busy intervals. */
import { CalgateError, formatInstant, parseInstant } from '@calgate/core';
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

/** Clips intervals to the window, drops empty ones, and merges overlapping or touching ones. */
export function mergeBusy(intervals: Iterable<readonly [number, number]>, window: Window): BusyInterval[] {
  const clipped: [number, number][] = [];
  for (const [start, end] of intervals) {
    const s = Math.max(start, window.from);
    const e = Math.min(end, window.to);
    if (e > s) {
      clipped.push([s, e]);
    }
  }
  clipped.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: [number, number][] = [];
  for (const [s, e] of clipped) {
    const last = merged.at(-1);
    if (last !== undefined && s <= last[1]) {
      last[1] = Math.max(last[1], e);
    } else {
      merged.push([s, e]);
    }
  }
  return merged.map(([s, e]) => ({ start: formatInstant(s, 'UTC'), end: formatInstant(e, 'UTC') }));
}
