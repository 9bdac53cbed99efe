/**
 * An RRULE's plan for the iterator: the frequency as an index, and the rule with
 * python-dateutil's defaults filled in from DTSTART (the start's month, day, weekday and time
 * where the rule is silent); BYHOUR/BYMINUTE/BYSECOND that INTERVAL never reaches are refused.
 */
import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import { epochDay, type LocalDateTime, weekdayOfEpochDay } from '../time/civil.ts';
import type { Frequency, RRule } from './rrule.ts';

export const YEARLY = 0;
export const MONTHLY = 1;
export const WEEKLY = 2;
export const DAILY = 3;
export const HOURLY = 4;
export const MINUTELY = 5;
export const SECONDLY = 6;
const FREQ_INDEX: Record<Frequency, number> = { YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY, SECONDLY };
export const MAX_YEAR = 9999;

/** A rule with dateutil's defaults filled in from DTSTART. */
export interface Plan {
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
export const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
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
