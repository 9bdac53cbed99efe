/**
 * The RRULE iterator: it walks a rule's periods (years, months, weeks, days, hours …) on local
 * wall-clock time and yields the matching readings as naive milliseconds (see `naiveMs`), in
 * order. The algorithm follows python-dateutil's `rrule._iter` closely — a well-tested reading
 * of RFC 5545 — so the comparison tests can hold the two to identical results.
 */
import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import {
  daysInMonth,
  epochDay,
  isLeapYear,
  type LocalDateTime,
  MS_PER_DAY,
  weekdayOfEpochDay,
} from '../time/civil.ts';
import type { Frequency, RRule } from './rrule.ts';

const YEARLY = 0;
const MONTHLY = 1;
const WEEKLY = 2;
const DAILY = 3;
const HOURLY = 4;
const MINUTELY = 5;
const SECONDLY = 6;
const FREQ_INDEX: Record<Frequency, number> = { YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY, SECONDLY };
const MAX_YEAR = 9999;

/** A rule with dateutil's defaults filled in from DTSTART. */
interface Plan {
  freq: number;
  interval: number;
  wkst: number;
  bymonth: Set<number> | null;
  byweekno: number[] | null;
  byyearday: Set<number> | null;
  bymonthday: Set<number> | null;
  bynmonthday: Set<number> | null;
  byweekday: Set<number> | null;
  bynweekday: [number, number][] | null;
  byhour: Set<number> | null;
  byminute: Set<number> | null;
  bysecond: Set<number> | null;
  hours: number[];
  minutes: number[];
  seconds: number[];
  bysetpos: number[] | null;
  /** Seconds of the day, sorted, for frequencies coarser than HOURLY. */
  timeset: number[];
}

const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b);
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const nonEmpty = <T>(set: Set<T>): Set<T> | null => (set.size > 0 ? set : null);

function reachable(
  name: string,
  start: number,
  values: number[],
  base: number,
  interval: number,
): Result<Set<number>, CalgateError> {
  const step = gcd(interval, base);
  const set = new Set(values.filter((v) => step === 1 || (((v - start) % step) + step) % step === 0));
  if (set.size === 0) {
    return err(
      new CalgateError(
        'invalid_argument',
        `${name}=${values.join(',')} is never reached when stepping INTERVAL=${interval} from the start's ${name.slice(2).toLowerCase()} ${start}.`,
      ),
    );
  }
  return ok(set);
}

/** Fills in dateutil's defaults: the start's month, day, weekday and time where the rule is silent. */
export function planRule(rule: RRule, start: LocalDateTime): Result<Plan, CalgateError> {
  const freq = FREQ_INDEX[rule.freq];
  const interval = rule.interval;
  let bymonth = rule.byMonth ? new Set(rule.byMonth) : null;
  let monthdays = rule.byMonthDay ?? [];
  let byweekday: Set<number> | null = null;
  let bynweekday: [number, number][] | null = null;
  if (!rule.byWeekNo && !rule.byYearDay && !rule.byMonthDay && !rule.byDay) {
    if (freq === YEARLY) {
      bymonth ??= new Set([start.month]);
      monthdays = [start.day];
    } else if (freq === MONTHLY) {
      monthdays = [start.day];
    } else if (freq === WEEKLY) {
      byweekday = new Set([weekdayOfEpochDay(epochDay(start.year, start.month, start.day))]);
    }
  }
  if (rule.byDay) {
    const plain = new Set<number>();
    const nth: [number, number][] = [];
    for (const d of rule.byDay) {
      if (d.n === undefined || freq > MONTHLY) {
        plain.add(d.weekday);
      } else {
        nth.push([d.weekday, d.n]);
      }
    }
    byweekday = nonEmpty(plain);
    bynweekday = nth.length > 0 ? nth : null;
  }
  let byhour: Set<number> | null = null;
  if (rule.byHour) {
    if (freq === HOURLY) {
      const r = reachable('BYHOUR', start.hour, rule.byHour, 24, interval);
      if (!r.ok) {
        return r;
      }
      byhour = r.value;
    } else {
      byhour = new Set(rule.byHour);
    }
  } else if (freq < HOURLY) {
    byhour = new Set([start.hour]);
  }
  let byminute: Set<number> | null = null;
  if (rule.byMinute) {
    if (freq === MINUTELY) {
      const r = reachable('BYMINUTE', start.minute, rule.byMinute, 60, interval);
      if (!r.ok) {
        return r;
      }
      byminute = r.value;
    } else {
      byminute = new Set(rule.byMinute);
    }
  } else if (freq < MINUTELY) {
    byminute = new Set([start.minute]);
  }
  let bysecond: Set<number> | null = null;
  if (rule.bySecond) {
    if (freq === SECONDLY) {
      const r = reachable('BYSECOND', start.second, rule.bySecond, 60, interval);
      if (!r.ok) {
        return r;
      }
      bysecond = r.value;
    } else {
      bysecond = new Set(rule.bySecond);
    }
  } else if (freq < SECONDLY) {
    bysecond = new Set([start.second]);
  }
  const hours = sorted(byhour ?? []);
  const minutes = sorted(byminute ?? []);
  const seconds = sorted(bysecond ?? []);
  const timeset: number[] = [];
  if (freq < HOURLY) {
    for (const h of hours) {
      for (const m of minutes) {
        for (const s of seconds) {
          timeset.push(h * 3600 + m * 60 + s);
        }
      }
    }
  }
  return ok({
    freq,
    interval,
    wkst: rule.wkst,
    bymonth,
    byweekno: rule.byWeekNo ?? null,
    byyearday: rule.byYearDay ? new Set(rule.byYearDay) : null,
    bymonthday: nonEmpty(new Set(monthdays.filter((d) => d > 0))),
    bynmonthday: nonEmpty(new Set(monthdays.filter((d) => d < 0))),
    byweekday,
    bynweekday,
    byhour,
    byminute,
    bysecond,
    hours,
    minutes,
    seconds,
    bysetpos: rule.bySetPos ?? null,
    timeset,
  });
}

/** Per-leap-ness masks over a year plus the first 7 days of the next (for weeks that cross it). */
interface Masks {
  month: Uint8Array;
  monthDay: Int8Array;
  negMonthDay: Int8Array;
  /** Day index of the 1st of each month, and the year's length last. */
  range: number[];
}

function buildMasks(leap: boolean): Masks {
  const yearlen = leap ? 366 : 365;
  const month = new Uint8Array(yearlen + 7);
  const monthDay = new Int8Array(yearlen + 7);
  const negMonthDay = new Int8Array(yearlen + 7);
  const range = [0];
  let i = 0;
  for (let m = 1; m <= 12; m++) {
    const len = daysInMonth(leap ? 2000 : 2001, m);
    for (let d = 1; d <= len; d++, i++) {
      month[i] = m;
      monthDay[i] = d;
      negMonthDay[i] = d - len - 1;
    }
    range.push(i);
  }
  for (let d = 1; d <= 7; d++, i++) {
    month[i] = 1;
    monthDay[i] = d;
    negMonthDay[i] = d - 32;
  }
  return { month, monthDay, negMonthDay, range };
}

const MASKS_365 = buildMasks(false);
const MASKS_366 = buildMasks(true);

interface YearInfo {
  year: number;
  yearlen: number;
  nextyearlen: number;
  /** Epoch day of 1 January. */
  first: number;
  /** Weekday of 1 January (0 = Monday). */
  weekday: number;
  masks: Masks;
  weekNoMask: Uint8Array | null;
}

function weekNoMask(plan: Plan, info: YearInfo): Uint8Array {
  const byweekno = plan.byweekno ?? [];
  const { yearlen, weekday: yearweekday, year } = info;
  const wkst = plan.wkst;
  const mask = new Uint8Array(yearlen + 7);
  const wday = (i: number) => (yearweekday + i) % 7;
  const firstwkst = (7 - yearweekday + wkst) % 7;
  let no1wkst = firstwkst;
  let wyearlen: number;
  if (no1wkst >= 4) {
    no1wkst = 0;
    wyearlen = yearlen + ((yearweekday - wkst + 7) % 7);
  } else {
    wyearlen = yearlen - no1wkst;
  }
  const numweeks = Math.floor(wyearlen / 7) + Math.floor((wyearlen % 7) / 4);
  const markWeek = (from: number) => {
    let i = from;
    for (let j = 0; j < 7; j++) {
      mask[i] = 1;
      i += 1;
      if (wday(i) === wkst) {
        break;
      }
    }
  };
  for (const raw of byweekno) {
    const n = raw < 0 ? raw + numweeks + 1 : raw;
    if (!(n > 0 && n <= numweeks)) {
      continue;
    }
    let i: number;
    if (n > 1) {
      i = no1wkst + (n - 1) * 7;
      if (no1wkst !== firstwkst) {
        i -= 7 - firstwkst;
      }
    } else {
      i = no1wkst;
    }
    markWeek(i);
  }
  if (byweekno.includes(1)) {
    // Week 1 of the next year may start in this one.
    let i = no1wkst + numweeks * 7;
    if (no1wkst !== firstwkst) {
      i -= 7 - firstwkst;
    }
    if (i < yearlen) {
      markWeek(i);
    }
  }
  if (no1wkst) {
    // Days before week 1 belong to the last week of the previous year.
    let lnumweeks: number;
    if (!byweekno.includes(-1)) {
      const lyearweekday = weekdayOfEpochDay(epochDay(year - 1, 1, 1));
      let lno1wkst = (7 - lyearweekday + wkst) % 7;
      const lyearlen = isLeapYear(year - 1) ? 366 : 365;
      if (lno1wkst >= 4) {
        lno1wkst = 0;
        lnumweeks = 52 + Math.floor(((lyearlen + ((lyearweekday - wkst + 7) % 7)) % 7) / 4);
      } else {
        lnumweeks = 52 + Math.floor(((yearlen - no1wkst) % 7) / 4);
      }
    } else {
      lnumweeks = -1;
    }
    if (byweekno.includes(lnumweeks)) {
      for (let i = 0; i < no1wkst; i++) {
        mask[i] = 1;
      }
    }
  }
  return mask;
}

function yearInfo(plan: Plan, year: number): YearInfo {
  const leap = isLeapYear(year);
  const first = epochDay(year, 1, 1);
  const info: YearInfo = {
    year,
    yearlen: leap ? 366 : 365,
    nextyearlen: isLeapYear(year + 1) ? 366 : 365,
    first,
    weekday: weekdayOfEpochDay(first),
    masks: leap ? MASKS_366 : MASKS_365,
    weekNoMask: null,
  };
  if (plan.byweekno) {
    info.weekNoMask = weekNoMask(plan, info);
  }
  return info;
}

/** Days matched by ordinal weekdays (1MO, -1FR) within the month or year that frames them. */
function nthWeekdayMask(plan: Plan, info: YearInfo, month: number): Uint8Array | null {
  if (!plan.bynweekday) {
    return null;
  }
  const ranges: [number, number][] = [];
  const range = info.masks.range;
  if (plan.freq === YEARLY) {
    if (plan.bymonth) {
      for (const m of plan.bymonth) {
        ranges.push([range[m - 1] as number, range[m] as number]);
      }
    } else {
      ranges.push([0, info.yearlen]);
    }
  } else if (plan.freq === MONTHLY) {
    ranges.push([range[month - 1] as number, range[month] as number]);
  }
  if (ranges.length === 0) {
    return null;
  }
  const mask = new Uint8Array(info.yearlen + 7);
  const wday = (i: number) => (((info.weekday + i) % 7) + 7) % 7;
  for (const [first, end] of ranges) {
    const last = end - 1;
    for (const [weekday, n] of plan.bynweekday) {
      let i: number;
      if (n < 0) {
        i = last + (n + 1) * 7;
        i -= (((wday(i) - weekday) % 7) + 7) % 7;
      } else {
        i = first + (n - 1) * 7;
        i += (((7 - wday(i) + weekday) % 7) + 7) % 7;
      }
      if (first <= i && i <= last) {
        mask[i] = 1;
      }
    }
  }
  return mask;
}

/** How an iteration stopped early. */
export interface IterationState {
  /** Set when the iterator gave up after `maxPeriods` periods without reaching an end. */
  exhausted: boolean;
}

export interface IterateOptions {
  /** Start walking at the period containing this naive reading (only for rules without COUNT). */
  skipTo?: number;
  /** Stop once a period starts after this naive reading. */
  stopAfter?: number;
  /** Give up after this many periods (a guard against rules that never match). */
  maxPeriods?: number;
}

function modDistance(value: number, values: Set<number>, base: number, interval: number): [number, number] {
  let acc = 0;
  let v = value;
  for (let k = 1; k <= base; k++) {
    const next = v + interval;
    acc += Math.floor(next / base);
    v = next % base;
    if (values.has(v)) {
      return [acc, v];
    }
  }
  return [0, -1];
}

/**
 * Yields the rule's readings at or after DTSTART as naive milliseconds, in order (dateutil's
 * algorithm). COUNT and UNTIL are the caller's business.
 */
export function* iterateRule(
  plan: Plan,
  start: LocalDateTime,
  state: IterationState,
  options: IterateOptions = {},
): Generator<number, void, undefined> {
  const { freq, interval } = plan;
  const dtstart =
    epochDay(start.year, start.month, start.day) * MS_PER_DAY +
    (start.hour * 3600 + start.minute * 60 + start.second) * 1000;
  let { year, month, day, hour, minute, second } = start;
  if (options.skipTo !== undefined && options.skipTo > dtstart) {
    ({ year, month, day, hour, minute, second } = skipAhead(plan, start, options.skipTo));
  }
  const stopDay =
    options.stopAfter === undefined ? Number.POSITIVE_INFINITY : Math.floor(options.stopAfter / MS_PER_DAY);
  const maxPeriods = options.maxPeriods ?? 5_000_000;
  let info = yearInfo(plan, year);
  let nth = nthWeekdayMask(plan, info, month);
  const hourSet = (h: number) => {
    const out: number[] = [];
    for (const m of plan.minutes) {
      for (const s of plan.seconds) {
        out.push(h * 3600 + m * 60 + s);
      }
    }
    return out;
  };
  const minuteSet = (h: number, m: number) => plan.seconds.map((s) => h * 3600 + m * 60 + s);
  const timeFor = (h: number, m: number, s: number): number[] => {
    if (freq === HOURLY) {
      return hourSet(h);
    }
    if (freq === MINUTELY) {
      return minuteSet(h, m);
    }
    return [h * 3600 + m * 60 + s];
  };
  let timeset: number[];
  if (freq < HOURLY) {
    timeset = plan.timeset;
  } else if (
    (plan.byhour && !plan.byhour.has(hour)) ||
    (freq >= MINUTELY && plan.byminute && !plan.byminute.has(minute)) ||
    (freq >= SECONDLY && plan.bysecond && !plan.bysecond.has(second))
  ) {
    timeset = [];
  } else {
    timeset = timeFor(hour, minute, second);
  }
  const days: number[] = [];
  for (let periods = 0; ; periods++) {
    if (periods >= maxPeriods) {
      state.exhausted = true;
      return;
    }
    const periodDay =
      freq === YEARLY ? info.first : freq === MONTHLY ? epochDay(year, month, 1) : epochDay(year, month, day);
    if (periodDay > stopDay) {
      return;
    }
    let dstart: number;
    let dend: number;
    if (freq === YEARLY) {
      dstart = 0;
      dend = info.yearlen;
    } else if (freq === MONTHLY) {
      dstart = info.masks.range[month - 1] as number;
      dend = info.masks.range[month] as number;
    } else if (freq === WEEKLY) {
      let i = periodDay - info.first;
      dstart = i;
      for (let j = 0; j < 7; j++) {
        i += 1;
        if ((info.weekday + i) % 7 === plan.wkst) {
          break;
        }
      }
      dend = i;
    } else {
      dstart = periodDay - info.first;
      dend = dstart + 1;
    }
    days.length = 0;
    let filtered = false;
    for (let i = dstart; i < dend; i++) {
      if (matchesDay(plan, info, nth, i)) {
        days.push(i);
      } else {
        filtered = true;
      }
    }
    if (plan.bysetpos && timeset.length > 0) {
      const picked: number[] = [];
      const n = timeset.length;
      for (const pos of plan.bysetpos) {
        const p = pos < 0 ? pos : pos - 1;
        const daypos = Math.floor(p / n);
        const timepos = p - daypos * n;
        const index = daypos < 0 ? days.length + daypos : daypos;
        if (index < 0 || index >= days.length) {
          continue;
        }
        const res = (info.first + (days[index] as number)) * MS_PER_DAY + (timeset[timepos] as number) * 1000;
        if (!picked.includes(res)) {
          picked.push(res);
        }
      }
      picked.sort((a, b) => a - b);
      for (const res of picked) {
        if (res >= dtstart) {
          yield res;
        }
      }
    } else {
      for (const d of days) {
        const base = (info.first + d) * MS_PER_DAY;
        for (const t of timeset) {
          const res = base + t * 1000;
          if (res >= dtstart) {
            yield res;
          }
        }
      }
    }

    // Advance to the next period.
    let fixday = false;
    if (freq === YEARLY) {
      year += interval;
      if (year > MAX_YEAR) {
        return;
      }
      info = yearInfo(plan, year);
      nth = nthWeekdayMask(plan, info, month);
    } else if (freq === MONTHLY) {
      month += interval;
      if (month > 12) {
        year += Math.floor((month - 1) / 12);
        month = ((month - 1) % 12) + 1;
        if (year > MAX_YEAR) {
          return;
        }
        if (year !== info.year) {
          info = yearInfo(plan, year);
        }
      }
      nth = nthWeekdayMask(plan, info, month);
    } else if (freq === WEEKLY) {
      const weekday = weekdayOfEpochDay(periodDay);
      if (plan.wkst > weekday) {
        day += -(weekday + 1 + (6 - plan.wkst)) + interval * 7;
      } else {
        day += -(weekday - plan.wkst) + interval * 7;
      }
      fixday = true;
    } else if (freq === DAILY) {
      day += interval;
      fixday = true;
    } else if (freq === HOURLY) {
      if (filtered) {
        hour += Math.floor((23 - hour) / interval) * interval;
      }
      let ndays: number;
      if (plan.byhour) {
        [ndays, hour] = modDistance(hour, plan.byhour, 24, interval);
      } else {
        ndays = Math.floor((hour + interval) / 24);
        hour = (hour + interval) % 24;
      }
      if (ndays) {
        day += ndays;
        fixday = true;
      }
      timeset = hourSet(hour);
    } else if (freq === MINUTELY) {
      if (filtered) {
        minute += Math.floor((1439 - (hour * 60 + minute)) / interval) * interval;
      }
      let valid = false;
      const rep = 1440 / gcd(interval, 1440);
      for (let j = 0; j < rep; j++) {
        let nhours: number;
        if (plan.byminute) {
          [nhours, minute] = modDistance(minute, plan.byminute, 60, interval);
        } else {
          nhours = Math.floor((minute + interval) / 60);
          minute = (minute + interval) % 60;
        }
        const div = Math.floor((hour + nhours) / 24);
        hour = (hour + nhours) % 24;
        if (div) {
          day += div;
          fixday = true;
          filtered = false;
        }
        if (!plan.byhour || plan.byhour.has(hour)) {
          valid = true;
          break;
        }
      }
      if (!valid) {
        return;
      }
      timeset = minuteSet(hour, minute);
    } else {
      if (filtered) {
        second += Math.floor((86399 - (hour * 3600 + minute * 60 + second)) / interval) * interval;
      }
      let valid = false;
      const rep = 86400 / gcd(interval, 86400);
      for (let j = 0; j < rep; j++) {
        let nminutes: number;
        if (plan.bysecond) {
          [nminutes, second] = modDistance(second, plan.bysecond, 60, interval);
        } else {
          nminutes = Math.floor((second + interval) / 60);
          second = (second + interval) % 60;
        }
        let div = Math.floor((minute + nminutes) / 60);
        minute = (minute + nminutes) % 60;
        if (div) {
          hour += div;
          div = Math.floor(hour / 24);
          hour %= 24;
          if (div) {
            day += div;
            fixday = true;
          }
        }
        if (
          (!plan.byhour || plan.byhour.has(hour)) &&
          (!plan.byminute || plan.byminute.has(minute)) &&
          (!plan.bysecond || plan.bysecond.has(second))
        ) {
          valid = true;
          break;
        }
      }
      if (!valid) {
        return;
      }
      timeset = [hour * 3600 + minute * 60 + second];
    }
    if (fixday && day > 28) {
      let dim = daysInMonth(year, month);
      if (day > dim) {
        while (day > dim) {
          day -= dim;
          month += 1;
          if (month === 13) {
            month = 1;
            year += 1;
            if (year > MAX_YEAR) {
              return;
            }
          }
          dim = daysInMonth(year, month);
        }
        if (year !== info.year) {
          info = yearInfo(plan, year);
        }
        nth = nthWeekdayMask(plan, info, month);
      }
    }
  }
}

function matchesDay(plan: Plan, info: YearInfo, nth: Uint8Array | null, i: number): boolean {
  const { masks, yearlen } = info;
  if (plan.bymonth && !plan.bymonth.has(masks.month[i] as number)) {
    return false;
  }
  if (info.weekNoMask && !info.weekNoMask[i]) {
    return false;
  }
  // BYDAY=MO,2TU is a union: any Monday, or the second Tuesday. (dateutil intersects the two
  // kinds, which makes such a rule never occur; RFC 5545 lists them as alternatives.)
  if (plan.byweekday || nth) {
    const plain = plan.byweekday?.has((info.weekday + i) % 7) ?? false;
    if (!plain && !nth?.[i]) {
      return false;
    }
  }
  if (
    (plan.bymonthday || plan.bynmonthday) &&
    !plan.bymonthday?.has(masks.monthDay[i] as number) &&
    !plan.bynmonthday?.has(masks.negMonthDay[i] as number)
  ) {
    return false;
  }
  if (plan.byyearday) {
    if (i < yearlen) {
      if (!plan.byyearday.has(i + 1) && !plan.byyearday.has(i - yearlen)) {
        return false;
      }
    } else if (!plan.byyearday.has(i + 1 - yearlen) && !plan.byyearday.has(i - yearlen - info.nextyearlen)) {
      return false;
    }
  }
  return true;
}

/**
 * The period position to start from so that the first period yielded ends no earlier than two
 * days before `target`. Periods are whole multiples of INTERVAL from DTSTART, so skipping them
 * changes nothing but speed.
 */
function skipAhead(plan: Plan, start: LocalDateTime, target: number): LocalDateTime {
  const { freq, interval } = plan;
  const targetDay = Math.floor(target / MS_PER_DAY) - 2;
  const startDay = epochDay(start.year, start.month, start.day);
  const out = { ...start };
  if (freq === YEARLY) {
    const targetYear = new Date(targetDay * MS_PER_DAY).getUTCFullYear() - 1;
    const k = Math.floor((targetYear - start.year) / interval);
    if (k > 0) {
      out.year += k * interval;
    }
  } else if (freq === MONTHLY) {
    const t = new Date(targetDay * MS_PER_DAY);
    const targetMonth = t.getUTCFullYear() * 12 + t.getUTCMonth() - 1;
    const startMonth = start.year * 12 + start.month - 1;
    const k = Math.floor((targetMonth - startMonth) / interval);
    if (k > 0) {
      const m = startMonth + k * interval;
      out.year = Math.floor(m / 12);
      out.month = (m % 12) + 1;
    }
  } else if (freq === WEEKLY) {
    const weekStart = startDay - ((weekdayOfEpochDay(startDay) - plan.wkst + 7) % 7);
    const k = Math.floor((targetDay - 7 - weekStart) / (7 * interval));
    if (k > 0) {
      const d = new Date((weekStart + k * 7 * interval) * MS_PER_DAY);
      Object.assign(out, { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() });
    }
  } else {
    const unit =
      freq === DAILY ? MS_PER_DAY : freq === HOURLY ? 3_600_000 : freq === MINUTELY ? 60_000 : 1000;
    const startMs = startDay * MS_PER_DAY + (start.hour * 3600 + start.minute * 60 + start.second) * 1000;
    const k = Math.floor((targetDay * MS_PER_DAY - startMs) / (unit * interval));
    if (k > 0) {
      const d = new Date(startMs + k * unit * interval);
      return {
        year: d.getUTCFullYear(),
        month: d.getUTCMonth() + 1,
        day: d.getUTCDate(),
        hour: d.getUTCHours(),
        minute: d.getUTCMinutes(),
        second: d.getUTCSeconds(),
      };
    }
  }
  return out;
}

export type { Plan };
