/**
 * RRULE lines → Graph's `patternedRecurrence`, only where Outlook would produce the same dates:
 * one RRULE, daily to yearly, days of the month Outlook can name, one numbered weekday, a start
 * on one of the rule's dates. Anything else is refused with a sentence saying what Outlook can do.
 */
import {
  addDays,
  CalgateError,
  daysInMonth,
  err,
  expandRule,
  formatDate,
  type LocalDate,
  type LocalDateTime,
  localFromNaiveMs,
  naiveMs,
  ok,
  parseRRule,
  type Result,
  type RRule,
  toLocal,
  validateTimeZone,
  weekdayOf,
} from '@calgate/core';
import {
  GRAPH_DAYS,
  type GraphDayOfWeek,
  type GraphPatternedRecurrence,
  type GraphRecurrencePattern,
  type GraphRecurrenceRange,
  type GraphWeekIndex,
  graphDaysOf,
  lastDayUpTo,
  OUTLOOK_CAN,
  type SeriesStart,
} from './recurrence-pattern.ts';
import { windowsZoneFor } from './zones.ts';

const INDEX_NAMES = new Map<number, GraphWeekIndex>([
  [1, 'first'],
  [2, 'second'],
  [3, 'third'],
  [4, 'fourth'],
  [-1, 'last'],
]);

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

const sameList = (a: readonly number[] | undefined, b: readonly number[]) =>
  a !== undefined && a.length === b.length && [...a].sort((x, y) => x - y).every((v, i) => v === b[i]);

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
