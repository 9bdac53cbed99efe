/**
 * Splitting a recurring series at one occurrence ("this and following"): the original series
 * ends just before it, a new series starts at it with the rest of the rule. COUNT is honoured:
 * the original gets UNTIL, the new series the occurrences that remain.
 */
import {
  CalgateError,
  compileSeries,
  err,
  expandRule,
  formatRRule,
  localFromNaiveMs,
  MS_PER_DAY,
  naiveMs,
  offsetMsAt,
  ok,
  parseDateTime,
  parseRRule,
  type Result,
  type RRule,
  toLocal,
} from '@calgate/core';
import type { EventDateTime } from '@calgate/providers';

export interface SplitRecurrence {
  /** Lines for the original series, which now ends before the split. */
  head: string[];
  /** Lines for the new series starting at the split; empty when no occurrence is left. */
  tail: string[];
}

function untilBefore(splitAt: number, allDay: boolean, timeZone: string): RRule['until'] {
  if (allDay) {
    // The day before the split, as a DATE (UNTIL must match DTSTART's value type).
    const local = localFromNaiveMs(splitAt + offsetMsAt(splitAt, timeZone) - MS_PER_DAY);
    return { kind: 'date', date: { year: local.year, month: local.month, day: local.day } };
  }
  return { kind: 'utc', instant: splitAt - 1000 };
}

function untilInstant(until: NonNullable<RRule['until']>, timeZone: string): number {
  if (until.kind === 'utc') {
    return until.instant;
  }
  if (until.kind === 'local') {
    return parseDateTime(
      `${String(until.local.year).padStart(4, '0')}-${String(until.local.month).padStart(2, '0')}-${String(until.local.day).padStart(2, '0')}T${String(until.local.hour).padStart(2, '0')}:${String(until.local.minute).padStart(2, '0')}:${String(until.local.second).padStart(2, '0')}`,
      timeZone,
    ).ok
      ? naiveMs(until.local) - offsetMsAt(naiveMs(until.local), timeZone)
      : Number.POSITIVE_INFINITY;
  }
  return naiveMs(until.date) + MS_PER_DAY - offsetMsAt(naiveMs(until.date), timeZone) - 1;
}

const COMPACT = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$/;

/** RDATE values split at `splitAt`; a line whose values cannot be read goes to both sides. */
function splitDates(line: string, splitAt: number, timeZone: string): { head?: string; tail?: string } {
  const colon = line.indexOf(':');
  const name = line.slice(0, colon);
  const zone = /;TZID=([^;:]+)/i.exec(name)?.[1] ?? timeZone;
  const head: string[] = [];
  const tail: string[] = [];
  for (const value of line.slice(colon + 1).split(',')) {
    const m = COMPACT.exec(value.trim());
    if (m === null) {
      return { head: line, tail: line };
    }
    const text = `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${m[7] ? 'Z' : ''}`;
    const at = parseDateTime(text, m[7] ? undefined : zone);
    if (!at.ok) {
      return { head: line, tail: line };
    }
    (at.value < splitAt ? head : tail).push(value.trim());
  }
  return {
    ...(head.length > 0 ? { head: `${name}:${head.join(',')}` } : {}),
    ...(tail.length > 0 ? { tail: `${name}:${tail.join(',')}` } : {}),
  };
}

/**
 * The recurrence lines of the two series a split at the occurrence starting at `splitAt`
 * (epoch ms, by the rule) produces. `start`/`end` are the original series' master times.
 */
export function splitRecurrence(
  recurrence: readonly string[],
  start: EventDateTime,
  end: EventDateTime,
  splitAt: number,
  calendarTimeZone: string,
): Result<SplitRecurrence, CalgateError> {
  const compiled = compileSeries({ recurrence, start, end, defaultTimeZone: calendarTimeZone });
  if (!compiled.ok) {
    return compiled;
  }
  const series = compiled.value;
  const head: string[] = [];
  const tail: string[] = [];
  for (const line of recurrence) {
    const upper = line.toUpperCase();
    if (upper.startsWith('RRULE')) {
      const parsed = parseRRule(line.replace(/^RRULE[:;]/i, ''));
      if (!parsed.ok) {
        return parsed;
      }
      const rule = parsed.value;
      const ending = untilBefore(splitAt, series.allDay, series.timeZone);
      const headRule: RRule = { ...rule, until: ending };
      delete headRule.count;
      if (rule.until !== undefined && untilInstant(rule.until, series.timeZone) < splitAt) {
        headRule.until = rule.until;
      }
      head.push(`RRULE:${formatRRule(headRule)}`);
      if (rule.count !== undefined) {
        const before = expandRule(rule, series.start, series.timeZone, { to: splitAt });
        if (!before.ok) {
          return before;
        }
        const remaining = rule.count - before.value.length;
        if (remaining > 0) {
          tail.push(`RRULE:${formatRRule({ ...rule, count: remaining })}`);
        }
      } else if (rule.until === undefined || untilInstant(rule.until, series.timeZone) >= splitAt) {
        tail.push(`RRULE:${formatRRule(rule)}`);
      }
    } else if (upper.startsWith('RDATE')) {
      const parts = splitDates(line, splitAt, series.timeZone);
      if (parts.head) {
        head.push(parts.head);
      }
      if (parts.tail) {
        tail.push(parts.tail);
      }
    } else {
      // EXDATE and EXRULE only remove occurrences; outside a series' range they do nothing.
      head.push(line);
      tail.push(line);
    }
  }
  if (!tail.some((line) => /^(RRULE|RDATE)/i.test(line))) {
    return err(
      new CalgateError(
        'invalid_argument',
        'No occurrence of the series is left from this one on to split off.',
      ),
    );
  }
  return ok({ head, tail });
}

/**
 * The start and end of the occurrence that begins at `at` (epoch ms), in the master's own
 * representation: the same zone for timed series, dates for all-day series.
 */
export function occurrenceTimes(
  master: { start: EventDateTime; end: EventDateTime },
  at: number,
  calendarTimeZone: string,
): { start: EventDateTime; end: EventDateTime } {
  const zone = master.start.timeZone ?? calendarTimeZone;
  if (master.start.date !== undefined && master.end.date !== undefined) {
    const days = Math.round((Date.parse(master.end.date) - Date.parse(master.start.date)) / MS_PER_DAY);
    const day = localFromNaiveMs(at + offsetMsAt(at, calendarTimeZone));
    const startDate = new Date(Date.UTC(day.year, day.month - 1, day.day));
    const endDate = new Date(startDate.getTime() + days * MS_PER_DAY);
    return {
      start: { date: startDate.toISOString().slice(0, 10) },
      end: { date: endDate.toISOString().slice(0, 10) },
    };
  }
  const masterStart = parseDateTime(master.start.dateTime ?? '', zone);
  const masterEnd = parseDateTime(master.end.dateTime ?? '', master.end.timeZone ?? zone);
  const duration = masterStart.ok && masterEnd.ok ? masterEnd.value - masterStart.value : 0;
  const local = (instant: number, timeZone: string) => {
    const l = toLocal(instant, timeZone);
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${l.year}-${pad(l.month)}-${pad(l.day)}T${pad(l.hour)}:${pad(l.minute)}:${pad(l.second)}`;
  };
  const endZone = master.end.timeZone ?? zone;
  return {
    start: { dateTime: local(at, zone), timeZone: zone },
    end: { dateTime: local(at + duration, endZone), timeZone: endZone },
  };
}
