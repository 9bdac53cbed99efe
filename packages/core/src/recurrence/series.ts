/**
 * Recurring series as calendars store them: a master's start and end plus Google-style
 * `recurrence` lines (`RRULE:…`, `RDATE…`, `EXDATE;TZID=Europe/Berlin:20260105T090000`,
 * `EXDATE;VALUE=DATE:20260105`, `EXDATE:20260105T080000Z`).
 */
import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import {
  addDays,
  dateFromEpochDay,
  epochDay,
  formatDate,
  type LocalDate,
  type LocalDateTime,
  localFromNaiveMs,
  MS_PER_DAY,
  naiveMs,
} from '../time/civil.ts';
import { formatInstant, parseDate, parseDateTime } from '../time/parse.ts';
import { fromNaiveMs, offsetMsAt, validateTimeZone } from '../time/zone.ts';
import { DEFAULT_MAX_INSTANCES, expandRule } from './expand.ts';
import { parseRRule, type RRule } from './rrule.ts';

/** Google's `{dateTime, timeZone}` / `{date}` shape. */
export interface EventTime {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

export interface SeriesDefinition {
  recurrence: readonly string[];
  start: EventTime;
  end: EventTime;
  /** Zone for all-day dates and for date-times without `timeZone` (the calendar's zone). */
  defaultTimeZone: string;
}

export interface SeriesWindow {
  /** Instances that end after this instant (epoch ms)… */
  from?: number;
  /** …and start before this one. */
  to?: number;
  /** At most this many instances, earliest first. */
  limit?: number;
  /** Hard cap on generated instances; default 10,000. */
  maxInstances?: number;
}

export interface SeriesInstance {
  start: EventTime;
  end: EventTime;
  /** The start the rule gave this instance (equal to `start` here: core knows no overrides). */
  originalStart: EventTime;
  startMs: number;
  endMs: number;
  /** Google's instance-id suffix: `20260105T080000Z`, or `20260105` for all-day series. */
  key: string;
}

/** A series reduced to what expansion needs. */
export interface CompiledSeries {
  allDay: boolean;
  timeZone: string;
  /** DTSTART as wall-clock time (midnight for all-day series). */
  start: LocalDateTime;
  /** Exact duration for timed series; whole days for all-day series. */
  durationMs: number;
  durationDays: number;
  endTimeZone: string;
  rules: RRule[];
  rdates: number[];
  /** Excluded instants, and excluded dates (epoch days) for DATE-valued EXDATEs. */
  exInstants: Set<number>;
  exDays: Set<number>;
}

function invalid(message: string, context: Record<string, unknown> = {}): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message, { context }));
}

const COMPACT = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$/;

type DateValue = { kind: 'date'; day: number } | { kind: 'instant'; instant: number };

function parseCompact(value: string, zone: string, line: string): Result<DateValue, CalgateError> {
  const m = COMPACT.exec(value);
  if (m === null) {
    return invalid(
      `Invalid value '${value}' in '${line}': expected YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ.`,
      { line },
    );
  }
  const date = parseDate(`${m[1]}-${m[2]}-${m[3]}`);
  if (!date.ok) {
    return invalid(`Invalid date '${value}' in '${line}'.`, { line });
  }
  if (m[4] === undefined) {
    return ok({ kind: 'date', day: epochDay(date.value.year, date.value.month, date.value.day) });
  }
  const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[7] === 'Z' ? 'Z' : ''}`;
  const instant = parseDateTime(iso, m[7] === 'Z' ? undefined : zone);
  if (!instant.ok) {
    return invalid(`Invalid date-time '${value}' in '${line}': ${instant.error.message}`, { line });
  }
  return ok({ kind: 'instant', instant: instant.value });
}

/** `RDATE`/`EXDATE` line → its values, honouring `TZID=` and `VALUE=DATE`. */
function parseDateList(line: string, seriesZone: string): Result<DateValue[], CalgateError> {
  const colon = line.indexOf(':');
  if (colon < 0) {
    return invalid(`Invalid recurrence line '${line}': expected NAME[;PARAMS]:VALUES.`, { line });
  }
  const [, ...params] = line.slice(0, colon).split(';');
  let zone = seriesZone;
  let valueType = 'DATE-TIME';
  for (const param of params) {
    const [key = '', value = ''] = param.split('=');
    if (key.toUpperCase() === 'TZID') {
      const checked = validateTimeZone(value.replace(/^"|"$/g, ''));
      if (!checked.ok) {
        return invalid(`Unknown TZID '${value}' in '${line}'.`, { line });
      }
      zone = checked.value;
    } else if (key.toUpperCase() === 'VALUE') {
      valueType = value.toUpperCase();
      if (valueType !== 'DATE' && valueType !== 'DATE-TIME') {
        return invalid(`VALUE=${value} is not supported in '${line}'; use DATE or DATE-TIME.`, { line });
      }
    }
  }
  const out: DateValue[] = [];
  for (const raw of line.slice(colon + 1).split(',')) {
    const value = raw.trim();
    if (value === '') {
      continue;
    }
    const parsed = parseCompact(value, zone, line);
    if (!parsed.ok) {
      return parsed;
    }
    if (valueType === 'DATE' && parsed.value.kind !== 'date') {
      return invalid(`'${value}' in '${line}' is a date-time but VALUE=DATE was given.`, { line });
    }
    out.push(parsed.value);
  }
  return ok(out);
}

/** Validates a master's start/end and recurrence lines into a {@link CompiledSeries}. */
export function compileSeries(def: SeriesDefinition): Result<CompiledSeries, CalgateError> {
  const { start, end } = def;
  const allDay = start.date !== undefined;
  if (allDay !== (end.date !== undefined)) {
    return invalid('start and end must both be dates (all-day) or both be date-times.');
  }
  const defaultZone = validateTimeZone(def.defaultTimeZone);
  if (!defaultZone.ok) {
    return defaultZone;
  }
  let timeZone = defaultZone.value;
  let local: LocalDateTime;
  let durationMs = 0;
  let durationDays = 0;
  let endTimeZone = timeZone;
  if (allDay) {
    const s = parseDate(start.date as string);
    const e = parseDate(end.date as string);
    if (!s.ok) {
      return s;
    }
    if (!e.ok) {
      return e;
    }
    local = { ...s.value, hour: 0, minute: 0, second: 0 };
    durationDays =
      epochDay(e.value.year, e.value.month, e.value.day) - epochDay(s.value.year, s.value.month, s.value.day);
  } else {
    if (start.timeZone !== undefined) {
      const z = validateTimeZone(start.timeZone);
      if (!z.ok) {
        return z;
      }
      timeZone = z.value;
    }
    endTimeZone = end.timeZone ?? timeZone;
    const s = parseDateTime(start.dateTime ?? '', timeZone);
    if (!s.ok) {
      return s;
    }
    const e = parseDateTime(end.dateTime ?? '', endTimeZone);
    if (!e.ok) {
      return e;
    }
    local = localFromNaiveMs(s.value + offsetMsAt(s.value, timeZone));
    local.millisecond = 0;
    durationMs = e.value - s.value;
  }
  const compiled: CompiledSeries = {
    allDay,
    timeZone,
    start: local,
    durationMs,
    durationDays,
    endTimeZone,
    rules: [],
    rdates: [],
    exInstants: new Set(),
    exDays: new Set(),
  };
  for (const rawLine of def.recurrence) {
    const line = rawLine.trim();
    const name = line.split(/[;:]/, 1)[0]?.toUpperCase() ?? '';
    if (name === 'RRULE') {
      const rule = parseRRule(line);
      if (!rule.ok) {
        return rule;
      }
      compiled.rules.push(rule.value);
    } else if (name === 'RDATE' || name === 'EXDATE') {
      const values = parseDateList(line, timeZone);
      if (!values.ok) {
        return values;
      }
      for (const v of values.value) {
        if (name === 'EXDATE') {
          if (v.kind === 'date') {
            compiled.exDays.add(v.day);
          } else {
            compiled.exInstants.add(v.instant);
          }
        } else {
          compiled.rdates.push(rdateInstant(compiled, v));
        }
      }
    } else if (name === 'EXRULE') {
      return invalid(`EXRULE is deprecated by RFC 5545 and not supported ('${line}'); use EXDATE.`, { line });
    } else {
      return invalid(`Unknown recurrence line '${line}': expected RRULE:, RDATE or EXDATE lines.`, { line });
    }
  }
  return ok(compiled);
}

/** An RDATE as an instance start: dates take the series' time of day (midnight for all-day). */
function rdateInstant(series: CompiledSeries, value: DateValue): number {
  if (value.kind === 'instant') {
    if (!series.allDay) {
      return value.instant;
    }
    const day = Math.floor((value.instant + offsetMsAt(value.instant, series.timeZone)) / MS_PER_DAY);
    return fromNaiveMs(day * MS_PER_DAY, series.timeZone);
  }
  const time =
    naiveMs(series.start) - epochDay(series.start.year, series.start.month, series.start.day) * MS_PER_DAY;
  return fromNaiveMs(value.day * MS_PER_DAY + time, series.timeZone);
}

const compactUtc = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

function instanceEnd(series: CompiledSeries, startMs: number): number {
  if (!series.allDay) {
    return startMs + series.durationMs;
  }
  const day = localDay(series, startMs);
  return fromNaiveMs((day + series.durationDays) * MS_PER_DAY, series.timeZone);
}

function localDay(series: CompiledSeries, instant: number): number {
  return Math.floor((instant + offsetMsAt(instant, series.timeZone)) / MS_PER_DAY);
}

function describe(series: CompiledSeries, startMs: number): SeriesInstance {
  const endMs = instanceEnd(series, startMs);
  if (series.allDay) {
    const day = localDay(series, startMs);
    const startDate = dateFromEpochDay(day);
    const start = { date: formatDate(startDate) };
    return {
      start,
      end: { date: formatDate(addDays(startDate, series.durationDays)) },
      originalStart: { ...start },
      startMs,
      endMs,
      key: start.date.replace(/-/g, ''),
    };
  }
  const start = { dateTime: formatInstant(startMs, series.timeZone), timeZone: series.timeZone };
  return {
    start,
    end: { dateTime: formatInstant(endMs, series.endTimeZone), timeZone: series.endTimeZone },
    originalStart: { ...start },
    startMs,
    endMs,
    key: compactUtc(startMs),
  };
}

function overlaps(startMs: number, endMs: number, from: number | undefined, to: number | undefined): boolean {
  if (to !== undefined && startMs >= to) {
    return false;
  }
  if (from === undefined) {
    return true;
  }
  return endMs > from || (endMs === startMs && startMs >= from);
}

/** The instances of a compiled series that overlap the window, earliest first. */
export function expandCompiledSeries(
  series: CompiledSeries,
  window: SeriesWindow = {},
): Result<SeriesInstance[], CalgateError> {
  const { from, to, limit } = window;
  const maxInstances = window.maxInstances ?? DEFAULT_MAX_INSTANCES;
  // Widen the start-based window by the longest duration so that overlapping instances count.
  const span = series.allDay ? (series.durationDays + 2) * MS_PER_DAY : Math.max(series.durationMs, 0);
  const starts = new Set<number>();
  const dtstart = fromNaiveMs(naiveMs(series.start), series.timeZone);
  if (series.rules.length === 0) {
    starts.add(dtstart);
  }
  for (const rule of series.rules) {
    const expanded = expandRule(rule, series.start, series.timeZone, {
      ...(from !== undefined ? { from: from - span } : {}),
      ...(to !== undefined ? { to } : {}),
      // Exclusions come after, so a limit on the rule alone could cut too early.
      ...(limit !== undefined && series.exInstants.size + series.exDays.size === 0
        ? { limit: limit + 1 }
        : {}),
      maxInstances,
    });
    if (!expanded.ok) {
      return expanded;
    }
    for (const occurrence of expanded.value) {
      starts.add(occurrence.instant);
    }
  }
  for (const rdate of series.rdates) {
    starts.add(rdate);
  }
  const out: SeriesInstance[] = [];
  for (const startMs of [...starts].sort((a, b) => a - b)) {
    if (series.exInstants.has(startMs) || series.exDays.has(localDay(series, startMs))) {
      continue;
    }
    const endMs = instanceEnd(series, startMs);
    if (!overlaps(startMs, endMs, from, to)) {
      continue;
    }
    out.push(describe(series, startMs));
    if (limit !== undefined && out.length >= limit) {
      break;
    }
  }
  return ok(out);
}

/**
 * The instances of a Google-style recurring event (its master's start, end and `recurrence`
 * lines) that overlap [from, to): each with start, end and originalStart in Google's shape.
 */
export function expandSeries(
  def: SeriesDefinition,
  window: SeriesWindow = {},
): Result<SeriesInstance[], CalgateError> {
  const compiled = compileSeries(def);
  if (!compiled.ok) {
    return compiled;
  }
  return expandCompiledSeries(compiled.value, window);
}

function untilBound(series: CompiledSeries, rule: RRule): number | null {
  const until = rule.until;
  if (until === undefined) {
    return null;
  }
  if (until.kind === 'utc') {
    return until.instant;
  }
  if (until.kind === 'local') {
    return fromNaiveMs(naiveMs(until.local), series.timeZone);
  }
  const next = addDays(until.date as LocalDate, 1);
  return fromNaiveMs(naiveMs(next), series.timeZone);
}

/**
 * The end (epoch ms) of the series' last instance, or null when it never ends. For a rule with
 * UNTIL whose last instance is not found near UNTIL, and for series too large to expand, this
 * is a safe upper bound (or null): good enough to index a series by its range.
 */
export function seriesEnd(
  def: SeriesDefinition,
  maxInstances = DEFAULT_MAX_INSTANCES,
): Result<number | null, CalgateError> {
  const compiled = compileSeries(def);
  if (!compiled.ok) {
    return compiled;
  }
  const series = compiled.value;
  const dtstart = fromNaiveMs(naiveMs(series.start), series.timeZone);
  let last = instanceEnd(series, dtstart);
  for (const rdate of series.rdates) {
    last = Math.max(last, instanceEnd(series, rdate));
  }
  for (const rule of series.rules) {
    if (rule.count !== undefined) {
      const expanded = expandRule(rule, series.start, series.timeZone, { maxInstances });
      if (!expanded.ok) {
        return ok(null);
      }
      const final = expanded.value.at(-1);
      if (final) {
        last = Math.max(last, instanceEnd(series, final.instant));
      }
      continue;
    }
    const bound = untilBound(series, rule);
    if (bound === null) {
      return ok(null);
    }
    // Look for the last instance in the year before UNTIL; fall back to UNTIL itself.
    const near = expandRule(rule, series.start, series.timeZone, {
      from: bound - 400 * MS_PER_DAY,
      to: bound + 1,
      maxInstances,
    });
    const final = near.ok ? near.value.at(-1) : undefined;
    last = Math.max(last, final ? instanceEnd(series, final.instant) : instanceEnd(series, bound));
  }
  return ok(last);
}
