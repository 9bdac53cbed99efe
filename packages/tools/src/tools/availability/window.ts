import { CalgateError, formatInstant, type Interval } from '@calgate/core';
import { z } from 'zod';
import { parseRfc3339 } from '../../schemas.ts';

const DAY_MS = 86_400_000;
/** The widest window the availability tools search, as find_free_time. */
export const MAX_WINDOW_DAYS = 92;

/** [start, end) of a call, checked: end after start, at most 92 days. */
export function windowOf(args: { start: string; end: string }): Interval {
  const start = parseRfc3339(args.start);
  const end = parseRfc3339(args.end);
  if (start === undefined || end === undefined) {
    throw new CalgateError('invalid_argument', 'start and end must be RFC 3339 date-times with an offset.');
  }
  if (end <= start) {
    throw new CalgateError('invalid_argument', 'end must be later than start.');
  }
  if (end - start > MAX_WINDOW_DAYS * DAY_MS) {
    throw new CalgateError(
      'invalid_argument',
      `start to end spans more than ${MAX_WINDOW_DAYS} days; ask for a shorter range.`,
    );
  }
  return { start, end };
}

export const range = z.object({ start: z.string(), end: z.string() });

/** An interval as RFC 3339 text: UTC, or wall-clock time with the offset of `timeZone`. */
export function rangeOut(interval: Interval, timeZone?: string): { start: string; end: string } {
  return { start: formatInstant(interval.start, timeZone), end: formatInstant(interval.end, timeZone) };
}

export const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;
