/**
 * Graph's `patternedRecurrence` → one RRULE line: days of the month Outlook moves to a month's
 * last day become BYMONTHDAY=-1 (or 28…N with BYSETPOS=-1), relative patterns BYSETPOS or a BYDAY
 * ordinal, an inclusive end date UNTIL at that day's end in the series' zone. A pattern Graph
 * should not have sent is `upstream_unavailable`.
 */
import {
  CalgateError,
  daysInMonth,
  err,
  formatRRule,
  fromLocal,
  ok,
  parseDate,
  type Result,
  type RRule,
  validateTimeZone,
} from '@calgate/core';
import {
  GRAPH_DAYS,
  type GraphDayOfWeek,
  type GraphPatternedRecurrence,
  type GraphRecurrencePattern,
  type GraphRecurrenceRange,
  type GraphWeekIndex,
  lastDayUpTo,
  type SeriesStart,
} from './recurrence-pattern.ts';
import { ianaZoneFor } from './zones.ts';

const INDEXES: Record<GraphWeekIndex, number> = { first: 1, second: 2, third: 3, fourth: 4, last: -1 };

function badPattern(why: string, recurrence: unknown): Result<never, CalgateError> {
  return err(
    new CalgateError('upstream_unavailable', `Microsoft Graph answered an unreadable recurrence: ${why}.`, {
      context: { recurrence },
    }),
  );
}

/** BYMONTHDAY (+BYSETPOS) for Outlook's day of the month `day` in months of at most `longest` days. */
function monthDayParts(day: number, longest: number): Pick<RRule, 'byMonthDay' | 'bySetPos'> {
  if (day <= 28) {
    return { byMonthDay: [day] };
  }
  if (day >= longest) {
    return { byMonthDay: [-1] };
  }
  return { byMonthDay: lastDayUpTo(day), bySetPos: [-1] };
}

function weekdaysOf(days: readonly string[] | undefined): number[] | undefined {
  if (!Array.isArray(days) || days.length === 0) {
    return undefined;
  }
  const out: number[] = [];
  for (const day of days) {
    const index = GRAPH_DAYS.indexOf(String(day).toLowerCase() as GraphDayOfWeek);
    if (index < 0) {
      return undefined;
    }
    if (!out.includes(index)) {
      out.push(index);
    }
  }
  return out;
}

function relativeDays(
  pattern: GraphRecurrencePattern,
  recurrence: unknown,
): Result<Pick<RRule, 'byDay' | 'bySetPos'>, CalgateError> {
  const days = weekdaysOf(pattern.daysOfWeek);
  if (days === undefined) {
    return badPattern(`a ${pattern.type} pattern without daysOfWeek`, recurrence);
  }
  const n = INDEXES[pattern.index ?? 'first'];
  if (n === undefined) {
    return badPattern(`index '${String(pattern.index)}'`, recurrence);
  }
  const [only] = days;
  if (days.length === 1 && only !== undefined) {
    return ok({ byDay: [{ weekday: only, n }] });
  }
  return ok({ byDay: days.map((weekday) => ({ weekday })), bySetPos: [n] });
}

/** The series' zone: the range's recurrenceTimeZone when Graph names one, else the start's. */
function seriesZone(
  range: GraphRecurrenceRange | undefined,
  start: SeriesStart,
): Result<string, CalgateError> {
  if (range?.recurrenceTimeZone) {
    const zone = ianaZoneFor(range.recurrenceTimeZone);
    if (zone.ok) {
      return zone;
    }
  }
  return validateTimeZone(start.timeZone);
}

/**
 * The RRULE lines (one `RRULE:` line) of a Graph recurrence whose series starts at `start`.
 * An inclusive end date becomes UNTIL at the end of that day in the series' zone (a date for
 * all-day series).
 */
export function toRecurrenceLines(
  recurrence: GraphPatternedRecurrence,
  start: SeriesStart,
): Result<string[], CalgateError> {
  const { pattern, range } = recurrence ?? {};
  if (!pattern || typeof pattern !== 'object') {
    return badPattern('no pattern', recurrence);
  }
  const interval = pattern.interval ?? 1;
  if (!Number.isInteger(interval) || interval < 1) {
    return badPattern(`interval ${String(interval)}`, recurrence);
  }
  const rule: RRule = { freq: 'DAILY', interval, wkst: 0 };
  switch (pattern.type) {
    case 'daily':
      break;
    case 'weekly': {
      const days = weekdaysOf(pattern.daysOfWeek);
      if (days === undefined) {
        return badPattern('a weekly pattern without daysOfWeek', recurrence);
      }
      const wkst = GRAPH_DAYS.indexOf(pattern.firstDayOfWeek ?? 'sunday');
      rule.freq = 'WEEKLY';
      rule.wkst = wkst < 0 ? 6 : wkst;
      rule.byDay = days
        .sort((a, b) => ((a - rule.wkst + 7) % 7) - ((b - rule.wkst + 7) % 7))
        .map((weekday) => ({
          weekday,
        }));
      break;
    }
    case 'absoluteMonthly': {
      const day = pattern.dayOfMonth ?? 0;
      if (!Number.isInteger(day) || day < 1 || day > 31) {
        return badPattern(`dayOfMonth ${String(pattern.dayOfMonth)}`, recurrence);
      }
      Object.assign(rule, { freq: 'MONTHLY' }, monthDayParts(day, 31));
      break;
    }
    case 'relativeMonthly': {
      const days = relativeDays(pattern, recurrence);
      if (!days.ok) {
        return days;
      }
      Object.assign(rule, { freq: 'MONTHLY' }, days.value);
      break;
    }
    case 'absoluteYearly':
    case 'relativeYearly': {
      const month = pattern.month ?? 0;
      if (!Number.isInteger(month) || month < 1 || month > 12) {
        return badPattern(`month ${String(pattern.month)}`, recurrence);
      }
      rule.freq = 'YEARLY';
      rule.byMonth = [month];
      if (pattern.type === 'relativeYearly') {
        const days = relativeDays(pattern, recurrence);
        if (!days.ok) {
          return days;
        }
        Object.assign(rule, days.value);
        break;
      }
      const day = pattern.dayOfMonth ?? 0;
      const longest = daysInMonth(2000, month);
      if (!Number.isInteger(day) || day < 1 || day > longest) {
        return badPattern(`dayOfMonth ${String(pattern.dayOfMonth)} in month ${month}`, recurrence);
      }
      // Only February's length changes: February 29 is its last day, other days are plain.
      Object.assign(rule, month === 2 ? monthDayParts(day, 29) : { byMonthDay: [day] });
      break;
    }
    default:
      return badPattern(`pattern type '${String(pattern.type)}'`, recurrence);
  }
  const zone = seriesZone(range, start);
  if (!zone.ok) {
    return zone;
  }
  switch (range?.type ?? 'noEnd') {
    case 'noEnd':
      break;
    case 'numbered': {
      const count = range?.numberOfOccurrences ?? 0;
      if (!Number.isInteger(count) || count < 1) {
        return badPattern(`numberOfOccurrences ${String(count)}`, recurrence);
      }
      rule.count = count;
      break;
    }
    case 'endDate': {
      const end = parseDate(range?.endDate ?? '');
      if (!end.ok) {
        return badPattern(`endDate '${String(range?.endDate)}'`, recurrence);
      }
      rule.until = start.allDay
        ? { kind: 'date', date: end.value }
        : { kind: 'utc', instant: fromLocal({ ...end.value, hour: 23, minute: 59, second: 59 }, zone.value) };
      break;
    }
    default:
      return badPattern(`range type '${String(range?.type)}'`, recurrence);
  }
  return ok([`RRULE:${formatRRule(rule)}`]);
}
