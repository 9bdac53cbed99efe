/**
 * The RRULE iterator: it walks a rule's periods (years, months, weeks, days, hours …) on local
 * wall-clock time and yields the matching readings as naive milliseconds (see `naiveMs`), in
 * order. The algorithm follows python-dateutil's `rrule._iter` closely — a well-tested reading
 * of RFC 5545 — so the comparison tests can hold the two to identical results.
 */
import { daysInMonth, epochDay, type LocalDateTime, MS_PER_DAY, weekdayOfEpochDay } from '../time/civil.ts';
import {
  DAILY,
  gcd,
  HOURLY,
  MAX_YEAR,
  MINUTELY,
  MONTHLY,
  type Plan,
  SECONDLY,
  WEEKLY,
  YEARLY,
} from './plan.ts';
import { matchesDay, nthWeekdayMask, yearInfo } from './year-masks.ts';

export { planRule } from './plan.ts';

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
