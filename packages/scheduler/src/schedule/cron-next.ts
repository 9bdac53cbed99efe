/**
 * When a cron expression next fires in an IANA zone. Across DST changes every job keeps its
 * local schedule: a local time skipped by a spring-forward gap fires once, at the first valid
 * instant after the gap (02:30 on the US spring-forward day fires at 03:00; `*\/15` fires once at
 * 03:00 for the readings 02:00–02:45), and a local time repeated by a fall-back overlap fires
 * once, on its first occurrence (so an hourly job does not fire twice at 01:00).
 *
 * The search jumps field by field (month, day, hour, minute) over wall-clock readings, so finding
 * the next run never walks minute by minute; it gives up after {@link SEARCH_YEARS} years, longer
 * than any expression that fires at all can go without firing.
 */
import {
  epochDay,
  localFromNaiveMs,
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  offsetMsAt,
  weekdayOfEpochDay,
} from '@calgate/core';
import type { CronExpression } from './cron-parse.ts';

/** A full Gregorian cycle and a year: every date/weekday combination recurs within it. */
export const SEARCH_YEARS = 401;

/** No DST overlap lasts longer; a wider transition would not be a DST change. */
const MAX_SHIFT_MS = 3 * MS_PER_HOUR;
/** Offsets never exceed ±15 h, so every instant of a reading lies within this of it. */
const WINDOW_MS = 18 * MS_PER_HOUR;

function dayMatches(cron: CronExpression, year: number, month: number, day: number): boolean {
  const dom = cron.daysOfMonth.includes(day);
  // Cron weekdays count from Sunday; core's count from Monday.
  const dow = cron.daysOfWeek.includes((weekdayOfEpochDay(epochDay(year, month, day)) + 1) % 7);
  return cron.domStar || cron.dowStar ? dom && dow : dom || dow;
}

const firstAfter = (values: number[], value: number) => values.find((v) => v > value);

/**
 * The matching wall-clock readings (naive ms) at or after `start`, ascending, for at most
 * {@link SEARCH_YEARS} years.
 */
export function* matchingReadings(cron: CronExpression, start: number): Generator<number, void, undefined> {
  let t = Math.ceil(start / MS_PER_MINUTE) * MS_PER_MINUTE;
  const endYear = localFromNaiveMs(t).year + SEARCH_YEARS;
  for (;;) {
    const { year, month, day, hour, minute } = localFromNaiveMs(t);
    if (year > endYear) {
      return;
    }
    if (!cron.months.includes(month)) {
      const next = firstAfter(cron.months, month);
      const [y, m] = next === undefined ? [year + 1, cron.months[0] as number] : [year, next];
      t = epochDay(y, m, 1) * MS_PER_DAY;
      continue;
    }
    const dayStart = epochDay(year, month, day) * MS_PER_DAY;
    if (!dayMatches(cron, year, month, day)) {
      t = dayStart + MS_PER_DAY;
      continue;
    }
    if (!cron.hours.includes(hour)) {
      const next = firstAfter(cron.hours, hour);
      t = next === undefined ? dayStart + MS_PER_DAY : dayStart + next * MS_PER_HOUR;
      continue;
    }
    if (!cron.minutes.includes(minute)) {
      const next = firstAfter(cron.minutes, minute);
      t = dayStart + hour * MS_PER_HOUR + (next === undefined ? MS_PER_HOUR : next * MS_PER_MINUTE);
      continue;
    }
    yield t;
    t += MS_PER_MINUTE;
  }
}

/** How a wall-clock reading maps to instants in a zone. */
type Resolved =
  | { kind: 'single'; instant: number }
  | { kind: 'repeated'; first: number; second: number }
  | { kind: 'skipped'; gapEnd: number };

/** The first instant at or after `lo` whose offset is no longer `before` (to the second). */
function transitionBetween(lo: number, hi: number, before: number, zone: string): number {
  let a = lo;
  let b = hi;
  while (b - a > 1000) {
    const mid = a + Math.floor((b - a) / 2000) * 1000;
    if (offsetMsAt(mid, zone) === before) {
      a = mid;
    } else {
      b = mid;
    }
  }
  return b;
}

export function resolveReading(naive: number, zone: string): Resolved {
  const before = offsetMsAt(naive - WINDOW_MS, zone);
  const after = offsetMsAt(naive + WINDOW_MS, zone);
  const withBefore = naive - before;
  const withAfter = naive - after;
  const beforeValid = offsetMsAt(withBefore, zone) === before;
  if (before === after && beforeValid) {
    return { kind: 'single', instant: withBefore };
  }
  const afterValid = offsetMsAt(withAfter, zone) === after;
  if (beforeValid && afterValid) {
    return {
      kind: 'repeated',
      first: Math.min(withBefore, withAfter),
      second: Math.max(withBefore, withAfter),
    };
  }
  if (beforeValid || afterValid) {
    return { kind: 'single', instant: beforeValid ? withBefore : withAfter };
  }
  const lo = Math.min(withBefore, withAfter);
  const hi = Math.max(withBefore, withAfter);
  return { kind: 'skipped', gapEnd: transitionBetween(lo, hi, offsetMsAt(lo, zone), zone) };
}

/** The first instant strictly after `after` at which the expression fires in `zone`, or null. */
export function nextCronRun(cron: CronExpression, zone: string, after: number): number | null {
  const offset = offsetMsAt(after, zone);
  // When a fall-back overlap lies just ahead, readings earlier than the current one will recur.
  const overlapAhead = Math.max(0, offset - offsetMsAt(after + MAX_SHIFT_MS, zone));
  const start = Math.floor((after + offset) / MS_PER_MINUTE) * MS_PER_MINUTE - overlapAhead;
  let best = Number.POSITIVE_INFINITY;
  for (const reading of matchingReadings(cron, start)) {
    const resolved = resolveReading(reading, zone);
    let earliest: number;
    if (resolved.kind === 'single') {
      earliest = resolved.instant;
      if (earliest > after) {
        best = Math.min(best, earliest);
      }
    } else if (resolved.kind === 'repeated') {
      earliest = resolved.first;
      if (earliest > after) {
        best = Math.min(best, earliest);
      }
    } else {
      earliest = resolved.gapEnd;
      if (earliest > after) {
        best = Math.min(best, earliest);
      }
    }
    // First occurrences rise with the reading.
    if (earliest >= best) {
      return best;
    }
  }
  return Number.isFinite(best) ? best : null;
}
