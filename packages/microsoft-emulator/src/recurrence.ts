/**
 * Graph's patternedRecurrence, expanded into the local dates a series occurs on. Written here,
 * apart from Calgate's RRULE code, so the emulator checks a client rather than mirroring it.
 * Dates are day numbers (days since 1970-01-01) in the series' own zone.
 */
import { dateOfDay, dayNumber, parseDate } from './time.ts';

export const WEEKDAYS = [
  'sunday',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
] as const;
export const INDEXES = ['first', 'second', 'third', 'fourth', 'last'] as const;
export const PATTERN_TYPES = [
  'daily',
  'weekly',
  'absoluteMonthly',
  'relativeMonthly',
  'absoluteYearly',
  'relativeYearly',
] as const;

export interface RecurrencePattern {
  type: (typeof PATTERN_TYPES)[number];
  interval: number;
  month?: number;
  dayOfMonth?: number;
  daysOfWeek?: string[];
  firstDayOfWeek?: string;
  index?: string;
}

export interface RecurrenceRange {
  type: 'endDate' | 'noEnd' | 'numbered';
  startDate: string;
  endDate?: string;
  numberOfOccurrences?: number;
  recurrenceTimeZone?: string;
}

export interface PatternedRecurrence {
  pattern: RecurrencePattern;
  range: RecurrenceRange;
}

/** 0 = Sunday. */
export const weekdayOf = (day: number): number => (((day + 4) % 7) + 7) % 7;

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** A reason the recurrence is invalid, in Graph's words as near as it has them; undefined when valid. */
export function recurrenceProblem(rec: PatternedRecurrence): string | undefined {
  const { pattern, range } = rec;
  if (!PATTERN_TYPES.includes(pattern.type)) {
    return `Recurrence pattern type '${String(pattern.type)}' is not supported.`;
  }
  if (!Number.isInteger(pattern.interval) || pattern.interval < 1) {
    return 'Recurrence pattern interval must be a positive integer.';
  }
  const days = pattern.daysOfWeek ?? [];
  if (days.some((d) => !WEEKDAYS.includes(d as (typeof WEEKDAYS)[number]))) {
    return 'Recurrence pattern daysOfWeek holds an unknown day.';
  }
  const needsDays = ['weekly', 'relativeMonthly', 'relativeYearly'].includes(pattern.type);
  if (needsDays && days.length === 0) {
    return `A ${pattern.type} recurrence pattern needs daysOfWeek.`;
  }
  const needsDayOfMonth = pattern.type === 'absoluteMonthly' || pattern.type === 'absoluteYearly';
  const dom = pattern.dayOfMonth ?? 0;
  if (needsDayOfMonth && (!Number.isInteger(dom) || dom < 1 || dom > 31)) {
    return `A ${pattern.type} recurrence pattern needs dayOfMonth 1–31.`;
  }
  const yearly = pattern.type === 'absoluteYearly' || pattern.type === 'relativeYearly';
  const month = pattern.month ?? 0;
  if (yearly && (!Number.isInteger(month) || month < 1 || month > 12)) {
    return `A ${pattern.type} recurrence pattern needs month 1–12.`;
  }
  if (pattern.index !== undefined && !INDEXES.includes(pattern.index as (typeof INDEXES)[number])) {
    return `Recurrence pattern index '${pattern.index}' is not one of first, second, third, fourth, last.`;
  }
  if (pattern.firstDayOfWeek !== undefined && !WEEKDAYS.includes(pattern.firstDayOfWeek as never)) {
    return 'Recurrence pattern firstDayOfWeek is not a day of the week.';
  }
  if (parseDate(range.startDate) === undefined) {
    return 'Recurrence range startDate must be a date (YYYY-MM-DD).';
  }
  if (range.type === 'endDate') {
    const end = range.endDate === undefined ? undefined : parseDate(range.endDate);
    if (end === undefined) {
      return 'A recurrence range of type endDate needs endDate (YYYY-MM-DD).';
    }
    if (end < (parseDate(range.startDate) as number)) {
      return 'Recurrence range endDate is before its startDate.';
    }
  } else if (range.type === 'numbered') {
    const n = range.numberOfOccurrences ?? 0;
    if (!Number.isInteger(n) || n < 1) {
      return 'A numbered recurrence range needs numberOfOccurrences of at least 1.';
    }
  } else if (range.type !== 'noEnd') {
    return `Recurrence range type '${String(range.type)}' is not supported.`;
  }
  return undefined;
}

/** The day in the month picked by `index` among the days whose weekday is in `days`. */
function relativeDay(year: number, month: number, days: Set<number>, index: string): number | undefined {
  const matching: number[] = [];
  for (let d = 1; d <= daysInMonth(year, month); d += 1) {
    const n = dayNumber(year, month, d);
    if (days.has(weekdayOf(n))) {
      matching.push(n);
    }
  }
  const at = index === 'last' ? matching.length - 1 : INDEXES.indexOf(index as (typeof INDEXES)[number]);
  return matching[at];
}

/** Candidate dates in order, unbounded (the caller stops). */
function* candidates(rec: PatternedRecurrence, start: number): Generator<number> {
  const { pattern } = rec;
  const interval = pattern.interval;
  const days = new Set(
    (pattern.daysOfWeek ?? []).map((d) => WEEKDAYS.indexOf(d as (typeof WEEKDAYS)[number])),
  );
  const { year: startYear, month: startMonth } = dateOfDay(start);
  const index = pattern.index ?? 'first';
  switch (pattern.type) {
    case 'daily':
      for (let day = start; ; day += interval) {
        yield day;
      }
    case 'weekly': {
      const first = WEEKDAYS.indexOf((pattern.firstDayOfWeek ?? 'sunday') as (typeof WEEKDAYS)[number]);
      const week0 = start - ((weekdayOf(start) - first + 7) % 7);
      for (let week = week0; ; week += 7 * interval) {
        for (let d = 0; d < 7; d += 1) {
          if (days.has(weekdayOf(week + d))) {
            yield week + d;
          }
        }
      }
    }
    case 'absoluteMonthly':
    case 'relativeMonthly':
      for (let k = 0; ; k += interval) {
        const m0 = startMonth - 1 + k;
        const year = startYear + Math.floor(m0 / 12);
        const month = (m0 % 12) + 1;
        const day =
          pattern.type === 'absoluteMonthly'
            ? dayNumber(year, month, Math.min(pattern.dayOfMonth ?? 1, daysInMonth(year, month)))
            : relativeDay(year, month, days, index);
        if (day !== undefined) {
          yield day;
        }
      }
    default:
      for (let year = startYear; ; year += interval) {
        const month = pattern.month ?? 1;
        const day =
          pattern.type === 'absoluteYearly'
            ? dayNumber(year, month, Math.min(pattern.dayOfMonth ?? 1, daysInMonth(year, month)))
            : relativeDay(year, month, days, index);
        if (day !== undefined) {
          yield day;
        }
      }
  }
}

/**
 * The dates the series occurs on, in order, up to `untilDay` (inclusive). Deleted occurrences
 * are the caller's business: they still count toward `numberOfOccurrences`, as in Outlook.
 * A day in a month too short for `dayOfMonth` falls on the month's last day.
 */
export function* occurrenceDates(rec: PatternedRecurrence, untilDay: number): Generator<number> {
  const start = parseDate(rec.range.startDate) as number;
  const end =
    rec.range.type === 'endDate'
      ? Math.min(parseDate(rec.range.endDate ?? '') as number, untilDay)
      : untilDay;
  let left = rec.range.type === 'numbered' ? (rec.range.numberOfOccurrences ?? 0) : Number.POSITIVE_INFINITY;
  let previous = Number.NEGATIVE_INFINITY;
  for (const day of candidates(rec, start)) {
    if (day > end || left <= 0) {
      return;
    }
    if (day < start || day === previous) {
      continue;
    }
    previous = day;
    left -= 1;
    yield day;
  }
}
