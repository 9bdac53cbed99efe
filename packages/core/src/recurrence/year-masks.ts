/**
 * A year as the iterator sees it: per-day masks of month, day of month and its negative, the
 * weeks BYWEEKNO selects (weeks begin on WKST), the days ordinal weekdays (1MO, -1FR) pick in
 * their month or year, and whether one day of the year passes the rule's BY… filters.
 */
import { daysInMonth, epochDay, isLeapYear, weekdayOfEpochDay } from '../time/civil.ts';
import { MONTHLY, type Plan, YEARLY } from './plan.ts';

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

export interface YearInfo {
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

export function yearInfo(plan: Plan, year: number): YearInfo {
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
export function nthWeekdayMask(plan: Plan, info: YearInfo, month: number): Uint8Array | null {
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

export function matchesDay(plan: Plan, info: YearInfo, nth: Uint8Array | null, i: number): boolean {
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
