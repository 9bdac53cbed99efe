/**
 * Graph's `patternedRecurrence` ↔ RFC 5545 RRULE lines, both ways, exactly: a rule converts only
 * when Outlook would produce the same dates, and anything else is refused with a sentence saying
 * what Outlook can do. Graph's semantics, as Outlook applies them:
 * - weekly needs `daysOfWeek`; weeks are counted from `firstDayOfWeek` (RRULE's WKST; Graph's
 *   default is Sunday, RFC 5545's Monday);
 * - relative patterns take the `index`-th (first … fourth, or last) of the days in `daysOfWeek`
 *   (BYSETPOS, or a BYDAY ordinal for one day);
 * - a day of the month that a month lacks (29–31) falls on that month's last day (so dayOfMonth 31
 *   is RRULE's BYMONTHDAY=-1, and 30 is BYMONTHDAY=28,29,30;BYSETPOS=-1); yearly on February 29
 *   falls on February 28 in common years;
 * - `numbered` is COUNT, `endDate` an inclusive local date (UNTIL), `noEnd` neither; the range
 *   starts on the series start's local date, and the series recurs in its own zone.
 */
import {
  addDays,
  CalgateError,
  daysInMonth,
  err,
  expandRule,
  formatDate,
  formatRRule,
  fromLocal,
  type LocalDate,
  type LocalDateTime,
  localFromNaiveMs,
  naiveMs,
  ok,
  parseDate,
  parseRRule,
  type Result,
  type RRule,
  toLocal,
  validateTimeZone,
  weekdayOf,
} from '@calgate/core';
import { ianaZoneFor, windowsZoneFor } from './zones.ts';

export type GraphPatternType =
  | 'daily'
  | 'weekly'
  | 'absoluteMonthly'
  | 'relativeMonthly'
  | 'absoluteYearly'
  | 'relativeYearly';
export type GraphDayOfWeek =
  | 'monday'
  | 'tuesday'
  | 'wednesday'
  | 'thursday'
  | 'friday'
  | 'saturday'
  | 'sunday';
export type GraphWeekIndex = 'first' | 'second' | 'third' | 'fourth' | 'last';

export interface GraphRecurrencePattern {
  type: GraphPatternType;
  interval: number;
  month?: number;
  dayOfMonth?: number;
  daysOfWeek?: GraphDayOfWeek[];
  firstDayOfWeek?: GraphDayOfWeek;
  index?: GraphWeekIndex;
}

export interface GraphRecurrenceRange {
  type: 'endDate' | 'noEnd' | 'numbered';
  startDate: string;
  endDate?: string;
  numberOfOccurrences?: number;
  recurrenceTimeZone?: string;
}

export interface GraphPatternedRecurrence {
  pattern: GraphRecurrencePattern;
  range: GraphRecurrenceRange;
}

/** The series' first start: its wall clock in its IANA zone, and whether it is all-day. */
export interface SeriesStart {
  local: LocalDateTime;
  timeZone: string;
  allDay: boolean;
}

/** Graph's day names in core's order (0 = Monday … 6 = Sunday). */
export const GRAPH_DAYS: readonly GraphDayOfWeek[] = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
];
const INDEXES: Record<GraphWeekIndex, number> = { first: 1, second: 2, third: 3, fourth: 4, last: -1 };
const INDEX_NAMES = new Map<number, GraphWeekIndex>([
  [1, 'first'],
  [2, 'second'],
  [3, 'third'],
  [4, 'fourth'],
  [-1, 'last'],
]);

/** What Outlook can repeat, for every refusal. */
export const OUTLOOK_CAN =
  'Outlook can repeat every N days; every N weeks on chosen weekdays; every N months or years on one day of the month (29–31 fall on the last day of shorter months) or on the first, second, third, fourth or last of chosen weekdays; ending after a number of times, on a date, or never';

function refuse(rule: string, why: string): Result<never, CalgateError> {
  return err(
    new CalgateError(
      'invalid_argument',
      `Outlook cannot store the recurrence '${rule}': ${why}. ${OUTLOOK_CAN}.`,
      {
        context: { rule },
      },
    ),
  );
}

function badPattern(why: string, recurrence: unknown): Result<never, CalgateError> {
  return err(
    new CalgateError('upstream_unavailable', `Microsoft Graph answered an unreadable recurrence: ${why}.`, {
      context: { recurrence },
    }),
  );
}

const sameList = (a: readonly number[] | undefined, b: readonly number[]) =>
  a !== undefined && a.length === b.length && [...a].sort((x, y) => x - y).every((v, i) => v === b[i]);

/** 28…day: the RRULE day list whose last existing entry is Outlook's day 29 or 30. */
const lastDayUpTo = (day: number) => Array.from({ length: day - 27 }, (_, i) => 28 + i);

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

/** Graph's names of BYDAY's weekdays, Monday first. */
function graphDaysOf(byDay: readonly { weekday: number }[]): GraphDayOfWeek[] {
  return [...new Set(byDay.map((d) => d.weekday))]
    .sort((a, b) => a - b)
    .map((d) => GRAPH_DAYS[d] as GraphDayOfWeek);
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

/**
 * Outlook's day of the month for the RRULE's day-of-month parts, in months of `shortest` to
 * `longest` days (28–31 for monthly, 28–29 for February, fixed for other months), or why
 * Outlook cannot: a day some months lack is skipped by RRULE but moved to the last day by Outlook.
 */
function absoluteDay(
  rule: RRule,
  text: string,
  startDay: number,
  shortest: number,
  longest: number,
): Result<number, CalgateError> {
  const skips = (day: number) =>
    refuse(
      text,
      `it skips months without day ${day}, where Outlook moves the date to the month's last day (BYMONTHDAY=${lastDayUpTo(day).join(',')};BYSETPOS=-1 means that)`,
    );
  const days = rule.byMonthDay;
  const setPos = rule.bySetPos;
  if (days === undefined) {
    if (setPos !== undefined) {
      return refuse(text, 'BYSETPOS here picks among several days');
    }
    return startDay > shortest ? skips(startDay) : ok(startDay);
  }
  if (setPos === undefined && days.length === 1) {
    const [day] = days as [number];
    if (day === -1) {
      return ok(longest);
    }
    if (day >= 1 && day <= shortest) {
      return ok(day);
    }
    if (day > shortest) {
      return skips(day);
    }
    return refuse(
      text,
      'Outlook counts days of the month from its start, besides the last day (BYMONTHDAY=-1)',
    );
  }
  if (sameList(setPos, [-1])) {
    for (let day = shortest + 1; day <= longest; day += 1) {
      if (sameList(days, lastDayUpTo(day))) {
        return ok(day);
      }
    }
  }
  return refuse(text, 'it repeats on several days of the month');
}

/** A relative pattern's days and index from BYDAY (+BYSETPOS), or why Outlook cannot. */
function relativeParts(
  rule: RRule,
  text: string,
): Result<{ daysOfWeek: GraphDayOfWeek[]; index: GraphWeekIndex }, CalgateError> {
  const byDay = rule.byDay ?? [];
  if (rule.byMonthDay !== undefined) {
    return refuse(text, 'it combines weekdays with days of the month');
  }
  const ordinals = byDay.filter((d) => d.n !== undefined);
  let n: number | undefined;
  if (ordinals.length > 0) {
    const [only] = byDay;
    if (byDay.length !== 1 || only === undefined || rule.bySetPos !== undefined) {
      return refuse(text, 'it names several numbered weekdays');
    }
    n = only.n;
  } else {
    if (rule.bySetPos === undefined || rule.bySetPos.length !== 1) {
      return refuse(
        text,
        rule.bySetPos === undefined
          ? 'it repeats on every such weekday of the month, where Outlook picks one (first … fourth or last); use FREQ=WEEKLY for every week'
          : 'BYSETPOS picks several of the days',
      );
    }
    n = rule.bySetPos[0];
  }
  const index = n === undefined ? undefined : INDEX_NAMES.get(n);
  if (index === undefined) {
    return refuse(
      text,
      `Outlook picks the first, second, third, fourth or last of the days, not number ${String(n)}`,
    );
  }
  return ok({ daysOfWeek: graphDaysOf(byDay), index });
}

/** An inclusive local end date for an RRULE UNTIL: the last date whose occurrence UNTIL still admits. */
function endDateOf(rule: RRule, start: SeriesStart, zone: string): LocalDate | undefined {
  const until = rule.until;
  if (until === undefined) {
    return undefined;
  }
  if (until.kind === 'date') {
    return until.date;
  }
  const local = until.kind === 'utc' ? toLocal(until.instant, zone) : until.local;
  const clock = (l: LocalDateTime) => naiveMs(l) - naiveMs({ year: l.year, month: l.month, day: l.day });
  const date = { year: local.year, month: local.month, day: local.day };
  return clock(local) < clock({ ...start.local, millisecond: 0 }) ? addDays(date, -1) : date;
}

/**
 * The Graph recurrence of Calgate's recurrence lines for a series starting at `start`. Only one
 * RRULE converts; EXDATE/RDATE/EXRULE lines, and rules Outlook cannot repeat exactly, are
 * refused saying what Outlook can do. The start must be one of the rule's dates, since Outlook
 * starts a series on the first date its pattern gives.
 */
export function toPatternedRecurrence(
  lines: readonly string[],
  start: SeriesStart,
): Result<GraphPatternedRecurrence, CalgateError> {
  const rules = lines.map((line) => line.trim()).filter((line) => line !== '');
  const other = rules.find((line) => !/^RRULE:/i.test(line));
  if (other !== undefined) {
    const name = other.split(/[:;]/)[0] ?? other;
    return err(
      new CalgateError(
        'invalid_argument',
        `Outlook cannot store '${name}' recurrence lines; give one RRULE, then change or delete single occurrences after creating the series.`,
        { context: { line: other } },
      ),
    );
  }
  const [line] = rules;
  if (line === undefined || rules.length > 1) {
    return err(
      new CalgateError(
        'invalid_argument',
        `Outlook stores exactly one RRULE per series, got ${rules.length}; give one 'RRULE:…' line.`,
      ),
    );
  }
  const parsed = parseRRule(line);
  if (!parsed.ok) {
    return parsed;
  }
  const rule = parsed.value;
  const text = line.replace(/^RRULE:/i, '');
  if (rule.freq === 'HOURLY' || rule.freq === 'MINUTELY' || rule.freq === 'SECONDLY') {
    return refuse(text, `it repeats ${rule.freq.toLowerCase()}, more often than daily`);
  }
  if (rule.byHour || rule.byMinute || rule.bySecond) {
    return refuse(text, 'it repeats at several times of the day (BYHOUR, BYMINUTE, BYSECOND)');
  }
  if (rule.byWeekNo) {
    return refuse(text, 'it picks weeks of the year (BYWEEKNO)');
  }
  if (rule.byYearDay) {
    return refuse(text, 'it picks days of the year (BYYEARDAY)');
  }
  if (rule.byMonth && (rule.freq !== 'YEARLY' || rule.byMonth.length > 1)) {
    return refuse(
      text,
      'it is limited to some months (BYMONTH), where Outlook repeats yearly in one month only',
    );
  }
  const zone = validateTimeZone(start.timeZone);
  if (!zone.ok) {
    return zone;
  }
  const windows = windowsZoneFor(zone.value);
  if (!windows.ok) {
    return windows;
  }
  const pattern: GraphRecurrencePattern = { type: 'daily', interval: rule.interval };
  const startWeekday = weekdayOf(start.local);
  switch (rule.freq) {
    case 'DAILY': {
      if (rule.byMonthDay || rule.bySetPos) {
        return refuse(text, 'it filters days by their day of the month');
      }
      if (rule.byDay) {
        if (rule.interval !== 1) {
          return refuse(text, 'it repeats every few days on chosen weekdays only');
        }
        pattern.type = 'weekly';
        pattern.daysOfWeek = graphDaysOf(rule.byDay);
        pattern.firstDayOfWeek = GRAPH_DAYS[rule.wkst] as GraphDayOfWeek;
      }
      break;
    }
    case 'WEEKLY': {
      if (rule.bySetPos) {
        return refuse(text, 'BYSETPOS picks among the days of a week');
      }
      pattern.type = 'weekly';
      pattern.daysOfWeek = graphDaysOf(rule.byDay ?? [{ weekday: startWeekday }]);
      pattern.firstDayOfWeek = GRAPH_DAYS[rule.wkst] as GraphDayOfWeek;
      break;
    }
    case 'MONTHLY':
    case 'YEARLY': {
      const yearly = rule.freq === 'YEARLY';
      const month = rule.byMonth?.[0] ?? start.local.month;
      if (yearly) {
        pattern.month = month;
      }
      if (rule.byDay) {
        if (yearly && rule.byMonth === undefined && rule.byDay.some((d) => d.n !== undefined)) {
          return refuse(text, 'it counts weekdays through the whole year; give BYMONTH');
        }
        const parts = relativeParts(rule, text);
        if (!parts.ok) {
          return parts;
        }
        pattern.type = yearly ? 'relativeYearly' : 'relativeMonthly';
        pattern.daysOfWeek = parts.value.daysOfWeek;
        pattern.index = parts.value.index;
        break;
      }
      // Only February's length varies from year to year; monthly series see every length.
      const longest = yearly ? daysInMonth(2000, month) : 31;
      const shortest = yearly ? daysInMonth(2001, month) : 28;
      const day = absoluteDay(rule, text, start.local.day, shortest, longest);
      if (!day.ok) {
        return day;
      }
      pattern.type = yearly ? 'absoluteYearly' : 'absoluteMonthly';
      pattern.dayOfMonth = day.value;
      break;
    }
    default:
      return refuse(text, `FREQ=${rule.freq}`);
  }
  const range: GraphRecurrenceRange = {
    type: 'noEnd',
    startDate: formatDate(start.local),
    recurrenceTimeZone: windows.value,
  };
  if (rule.count !== undefined) {
    range.type = 'numbered';
    range.numberOfOccurrences = rule.count;
  }
  const endDate = endDateOf(rule, start, zone.value);
  if (endDate !== undefined) {
    range.type = 'endDate';
    range.endDate = formatDate(endDate);
  }
  const first = expandRule(rule, start.local, zone.value, { includeStart: false, limit: 1 });
  if (!first.ok) {
    return first;
  }
  const startNaive = naiveMs({ ...start.local, millisecond: 0 });
  const firstLocal = first.value[0]?.local;
  if (firstLocal !== startNaive) {
    const by =
      firstLocal === undefined ? 'no date at all' : `${formatDate(localFromNaiveMs(firstLocal))} first`;
    return err(
      new CalgateError(
        'invalid_argument',
        `The series starts on ${formatDate(start.local)}, which its rule '${text}' does not produce (it gives ${by}); Outlook starts a series on its pattern's first date, so start the event on one of the rule's dates.`,
        { context: { rule: text } },
      ),
    );
  }
  return ok({ pattern, range });
}
