import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import { addDays, dateFromEpochDay, epochDay, weekdayOf } from '../time/civil.ts';
import { fromLocal, isValidTimeZone, toLocal } from '../time/zone.ts';
import type { Interval } from './intervals.ts';

// In the order of weekdayOf(): Monday is 0.
const DAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type DayName = (typeof DAY_NAMES)[number];

/** Working hours: on these weekdays, from `start` to `end` (HH:MM) local time in `timeZone`. */
export interface WorkingHours {
  days: readonly DayName[];
  start: string;
  end: string;
  timeZone: string;
}

interface Clock {
  hour: number;
  minute: number;
}

function clock(text: string, field: string): Result<Clock, CalgateError> {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  if (m === null || (m[1] === '24' && m[2] !== '00')) {
    return err(
      new CalgateError('invalid_argument', `workingHours.${field} '${text}' must be HH:MM (00:00–24:00).`),
    );
  }
  return ok({ hour: Number(m[1]), minute: Number(m[2]) });
}

/**
 * The working-hour intervals overlapping `window`, one per working day, each computed on that
 * day's wall clock (so 09:00–17:00 stays 09:00–17:00 local across a DST change).
 */
export function workingIntervals(window: Interval, hours: WorkingHours): Result<Interval[], CalgateError> {
  if (!isValidTimeZone(hours.timeZone)) {
    return err(
      new CalgateError(
        'invalid_argument',
        `workingHours.timeZone '${hours.timeZone}' is not an IANA time zone.`,
      ),
    );
  }
  const from = clock(hours.start, 'start');
  if (!from.ok) {
    return from;
  }
  const to = clock(hours.end, 'end');
  if (!to.ok) {
    return to;
  }
  if (to.value.hour * 60 + to.value.minute <= from.value.hour * 60 + from.value.minute) {
    return err(
      new CalgateError('invalid_argument', 'workingHours.end must be later than workingHours.start.'),
    );
  }
  const days = new Set(hours.days.map((day) => DAY_NAMES.indexOf(day)));
  const first = toLocal(window.start, hours.timeZone);
  const last = toLocal(window.end, hours.timeZone);
  const out: Interval[] = [];
  for (
    let day = epochDay(first.year, first.month, first.day) - 1;
    day <= epochDay(last.year, last.month, last.day);
    day++
  ) {
    const date = dateFromEpochDay(day);
    if (!days.has(weekdayOf(date))) {
      continue;
    }
    const at = (c: Clock) =>
      c.hour === 24
        ? fromLocal({ ...addDays(date, 1), hour: 0, minute: 0, second: 0 }, hours.timeZone)
        : fromLocal({ ...date, hour: c.hour, minute: c.minute, second: 0 }, hours.timeZone);
    const start = Math.max(at(from.value), window.start);
    const end = Math.min(at(to.value), window.end);
    if (end > start) {
      out.push({ start, end });
    }
  }
  return ok(out);
}
