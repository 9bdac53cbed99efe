/**
 * One resource (master + RECURRENCE-ID overrides) → Calgate events for a window. Rules are
 * expanded by core's RRULE engine (`expandRule`) on wall-clock time: COUNT counts every instance
 * the rule makes, before EXDATE removes any; UNTIL is inclusive. Zones the IANA database knows
 * convert exactly as core does elsewhere; a custom VTIMEZONE converts by its own rules.
 */
import {
  CalgateError,
  DEFAULT_MAX_INSTANCES,
  expandRule,
  localFromNaiveMs,
  MS_PER_DAY,
  parseRRule,
  type RRule,
} from '@calgate/core';
import ICAL from 'ical.js';
import type { CalendarEvent } from '../../types.ts';
import {
  dayOfNaive,
  type EventLength,
  endOf,
  eventDateTime,
  eventFields,
  type IcsResource,
  type IcsTime,
  instantOf,
  readLength,
  readTime,
  readTimeList,
  statusOf,
} from './read.ts';
import type { Zone } from './zones.ts';

export interface ExpandWindow {
  /** Occurrences ending after this instant (epoch ms)… */
  from?: number;
  /** …and starting before this one. */
  to?: number;
  /** The id Calgate gives the resource's event (default: its UID); instances are `<id>_<key>`. */
  eventId?: string;
  /** Hard cap on instances generated per rule (default 10,000). */
  maxInstances?: number;
}

/** A master's recurrence reduced to what expansion needs. */
export interface IcsSeries {
  allDay: boolean;
  start: IcsTime;
  /** The zone instances are computed in: the start's zone (the calendar's for dates). */
  zone: Zone;
  startInstant: number;
  length: EventLength;
  rules: RRule[];
  rdates: IcsTime[];
  /** Excluded starts: instants (timed series) or naive midnights (all-day series). */
  exKeys: Set<number>;
  /** Excluded local days (epoch days) from DATE-valued EXDATEs of timed series. */
  exDays: Set<number>;
  recurring: boolean;
}

function invalid(message: string): CalgateError {
  return new CalgateError('invalid_argument', message);
}

/** The recurrence of a master VEVENT (a single event is a series of one). */
export function readSeries(master: ICAL.Component, resource: IcsResource): IcsSeries {
  const { zones } = resource;
  const start = readTime(master, 'dtstart', zones);
  if (start === undefined) {
    throw invalid(`The event ${resource.uid || '(without UID)'} has no DTSTART.`);
  }
  const rules: RRule[] = [];
  for (const value of master.getAllProperties('rrule').map((p) => p.getFirstValue())) {
    if (!(value instanceof ICAL.Recur)) {
      continue;
    }
    const parsed = parseRRule(value.toString());
    if (!parsed.ok) {
      throw invalid(`The event ${resource.uid}'s RRULE cannot be used: ${parsed.error.message}`);
    }
    rules.push(parsed.value);
  }
  const rdates = readTimeList(master, 'rdate', zones);
  const exKeys = new Set<number>();
  const exDays = new Set<number>();
  for (const ex of readTimeList(master, 'exdate', zones)) {
    if (start.allDay) {
      exKeys.add(ex.allDay ? ex.naive : Math.floor(ex.naive / MS_PER_DAY) * MS_PER_DAY);
    } else if (ex.allDay) {
      exDays.add(dayOfNaive(ex.naive));
    } else {
      exKeys.add(instantOf(ex));
    }
  }
  return {
    allDay: start.allDay,
    start,
    zone: start.zone,
    startInstant: instantOf(start),
    length: readLength(master, start, zones),
    rules,
    rdates,
    exKeys,
    exDays,
    recurring: rules.length > 0 || rdates.length > 0,
  };
}

/** The key of an occurrence: its instant (timed) or naive midnight (all-day). */
function keyOfTime(series: IcsSeries, time: IcsTime): number {
  if (series.allDay) {
    return time.allDay ? time.naive : Math.floor(time.naive / MS_PER_DAY) * MS_PER_DAY;
  }
  return time.allDay
    ? series.zone.toInstant(time.naive + (series.start.naive % MS_PER_DAY))
    : instantOf(time);
}

function isExcluded(series: IcsSeries, key: number): boolean {
  if (series.exKeys.has(key)) {
    return true;
  }
  return !series.allDay && series.exDays.size > 0 && series.exDays.has(dayOfNaive(series.zone.toNaive(key)));
}

/** expandRule's window without infinite ends (an unbounded side is left out). */
function bounds(lo: number, hi: number): { from?: number; to?: number } {
  return { ...(Number.isFinite(lo) ? { from: lo } : {}), ...(Number.isFinite(hi) ? { to: hi } : {}) };
}

/**
 * Occurrence keys the rules and RDATEs give in [lo, hi) (instants for timed series, naive
 * midnights for all-day ones), before exclusions.
 */
function ruleKeys(series: IcsSeries, lo: number, hi: number, maxInstances: number): Set<number> {
  const keys = new Set<number>();
  const startLocal = localFromNaiveMs(series.start.naive);
  if (series.rules.length === 0) {
    const key = series.allDay ? series.start.naive : series.startInstant;
    if (key >= lo && key < hi) {
      keys.add(key);
    }
  }
  for (const rule of series.rules) {
    if (!series.allDay && series.zone.iana !== undefined) {
      const expanded = expandRule(rule, startLocal, series.zone.iana, { ...bounds(lo, hi), maxInstances });
      if (!expanded.ok) {
        throw expanded.error;
      }
      for (const occurrence of expanded.value) {
        keys.add(occurrence.instant);
      }
      continue;
    }
    // On naive time: all-day series, and custom zones (UNTIL moved onto their wall clock).
    let naiveRule = rule;
    if (rule.until?.kind === 'utc') {
      const local = localFromNaiveMs(series.zone.toNaive(rule.until.instant));
      naiveRule = { ...rule, until: { kind: 'local', local } };
    }
    const naiveLo = series.allDay || !Number.isFinite(lo) ? lo : series.zone.toNaive(lo) - MS_PER_DAY;
    const naiveHi = series.allDay || !Number.isFinite(hi) ? hi : series.zone.toNaive(hi) + MS_PER_DAY;
    const expanded = expandRule(naiveRule, startLocal, 'UTC', { ...bounds(naiveLo, naiveHi), maxInstances });
    if (!expanded.ok) {
      throw expanded.error;
    }
    for (const occurrence of expanded.value) {
      const key = series.allDay ? occurrence.local : series.zone.toInstant(occurrence.local);
      if (key >= lo && key < hi) {
        keys.add(key);
      }
    }
  }
  for (const rdate of series.rdates) {
    const key = keyOfTime(series, rdate);
    if (key >= lo && key < hi) {
      keys.add(key);
    }
  }
  return keys;
}

/** Whether `key` is an occurrence of the series (made by a rule or RDATE, not excluded). */
export function isOccurrence(series: IcsSeries, key: number, maxInstances = DEFAULT_MAX_INSTANCES): boolean {
  return !isExcluded(series, key) && ruleKeys(series, key, key + 1, maxInstances).has(key);
}

/** The instance-id suffix of a key: `20260105T080000Z` (timed) or `20260105` (all-day), as Google writes them. */
export function instanceKey(series: { allDay: boolean }, key: number): string {
  const iso = new Date(key).toISOString();
  const date = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`;
  return series.allDay ? date : `${date}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/** The key an instance-id suffix names, or undefined when it is not one. */
export function parseInstanceKey(text: string): { allDay: boolean; key: number } | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z)?$/.exec(text);
  if (m === null) {
    return undefined;
  }
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (m[4] === undefined) {
    return { allDay: true, key: Date.UTC(year, month - 1, day) };
  }
  return { allDay: false, key: Date.UTC(year, month - 1, day, Number(m[4]), Number(m[5]), Number(m[6])) };
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

/** Start instant of a key (all-day keys are midnights in the series' zone). */
function startOfKey(series: IcsSeries, key: number): number {
  return series.allDay ? series.zone.toInstant(key) : key;
}

/** The override key of a RECURRENCE-ID. */
function overrideKey(series: IcsSeries, override: ICAL.Component, resource: IcsResource): number | undefined {
  const rid = readTime(override, 'recurrence-id', resource.zones);
  return rid === undefined ? undefined : keyOfTime(series, rid);
}

interface Timed {
  start: number;
  end: number;
}

function overrideTimes(
  override: ICAL.Component,
  resource: IcsResource,
  series: IcsSeries | undefined,
  key: number | undefined,
): { times: Timed; start: IcsTime | undefined; allDay: boolean; zone: Zone } {
  const start = readTime(override, 'dtstart', resource.zones);
  if (start === undefined) {
    if (series === undefined || key === undefined) {
      throw invalid(`An override of ${resource.uid} has neither DTSTART nor a master to take it from.`);
    }
    const startMs = startOfKey(series, key);
    return {
      times: { start: startMs, end: endOf(startMs, series.zone, series.allDay, series.length) },
      start: undefined,
      allDay: series.allDay,
      zone: series.zone,
    };
  }
  const hasOwnEnd = override.hasProperty('dtend') || override.hasProperty('duration');
  const length =
    hasOwnEnd || series === undefined ? readLength(override, start, resource.zones) : series.length;
  const startMs = instantOf(start);
  return {
    times: { start: startMs, end: endOf(startMs, start.zone, start.allDay, length) },
    start,
    allDay: start.allDay,
    zone: start.zone,
  };
}

function recurrenceLines(master: ICAL.Component): string[] {
  const lines: string[] = [];
  for (const name of ['rrule', 'exrule', 'rdate', 'exdate']) {
    for (const property of master.getAllProperties(name)) {
      lines.push(property.toICALString());
    }
  }
  return lines;
}

/**
 * The resource's events as a listing with `singleEvents` shows them: a single event, or a
 * series' instances overlapping the window (overrides in place of the instances they replace,
 * cancelled overrides and excluded instances left out), earliest first.
 */
export function expandResource(resource: IcsResource, window: ExpandWindow = {}): CalendarEvent[] {
  const baseId = window.eventId ?? resource.uid;
  const maxInstances = window.maxInstances ?? DEFAULT_MAX_INSTANCES;
  const { from, to } = window;
  const out: { at: number; event: CalendarEvent }[] = [];
  const master = resource.master;
  const series = master === undefined ? undefined : readSeries(master, resource);
  if (master !== undefined && series !== undefined && !series.recurring) {
    const end = endOf(series.startInstant, series.zone, series.allDay, series.length);
    if (overlaps(series.startInstant, end, from, to) && statusOf(master) !== 'cancelled') {
      out.push({ at: series.startInstant, event: singleEvent(master, series, baseId) });
    }
    return out.map((entry) => entry.event);
  }
  const overridden = new Set<number>();
  for (const override of resource.overrides) {
    const key = series === undefined ? undefined : overrideKey(series, override, resource);
    if (series !== undefined && key !== undefined) {
      if (!isOccurrence(series, key, maxInstances)) {
        continue;
      }
      overridden.add(key);
    }
    if (statusOf(override) === 'cancelled') {
      continue;
    }
    const placed = overrideTimes(override, resource, series, key);
    if (!overlaps(placed.times.start, placed.times.end, from, to)) {
      continue;
    }
    const rid = readTime(override, 'recurrence-id', resource.zones);
    const ridSeries = series ?? { allDay: rid?.allDay ?? false };
    const ridKey = key ?? (rid === undefined ? placed.times.start : rid.allDay ? rid.naive : instantOf(rid));
    const originalZone = series?.zone ?? rid?.zone ?? placed.zone;
    const originalStart = series === undefined ? ridKey : startOfKey(series, ridKey);
    out.push({
      at: placed.times.start,
      event: {
        ...eventFields(override),
        id: `${baseId}_${instanceKey(ridSeries, ridKey)}`,
        start: eventDateTime(
          placed.times.start,
          placed.zone,
          placed.allDay,
          placed.start?.allDay ? placed.start.naive : undefined,
        ),
        end: eventDateTime(
          placed.times.end,
          placed.zone,
          placed.allDay,
          placed.allDay ? placed.zone.toNaive(placed.times.end) : undefined,
        ),
        recurringEventId: baseId,
        originalStartTime: eventDateTime(
          originalStart,
          originalZone,
          ridSeries.allDay,
          ridSeries.allDay ? ridKey : undefined,
        ),
      },
    });
  }
  if (master !== undefined && series !== undefined) {
    const span = series.allDay
      ? (series.length.days + 2) * MS_PER_DAY
      : series.length.exactMs + series.length.days * MS_PER_DAY + MS_PER_DAY;
    let lo: number;
    let hi: number;
    if (series.allDay) {
      lo = from === undefined ? Number.NEGATIVE_INFINITY : series.zone.toNaive(from) - span;
      hi = to === undefined ? Number.POSITIVE_INFINITY : series.zone.toNaive(to) + MS_PER_DAY;
    } else {
      lo = from === undefined ? Number.NEGATIVE_INFINITY : from - span;
      hi = to ?? Number.POSITIVE_INFINITY;
    }
    const fields = eventFields(master);
    for (const key of ruleKeys(series, lo, hi, maxInstances)) {
      if (overridden.has(key) || isExcluded(series, key)) {
        continue;
      }
      const startMs = startOfKey(series, key);
      const endMs = endOf(startMs, series.zone, series.allDay, series.length);
      if (!overlaps(startMs, endMs, from, to)) {
        continue;
      }
      const start = eventDateTime(startMs, series.zone, series.allDay, series.allDay ? key : undefined);
      out.push({
        at: startMs,
        event: {
          ...fields,
          id: `${baseId}_${instanceKey(series, key)}`,
          start,
          end: eventDateTime(
            endMs,
            series.zone,
            series.allDay,
            series.allDay ? key + series.length.days * MS_PER_DAY : undefined,
          ),
          recurringEventId: baseId,
          originalStartTime: start,
        },
      });
    }
  }
  out.sort((a, b) => a.at - b.at);
  return out.map((entry) => entry.event);
}

function singleEvent(master: ICAL.Component, series: IcsSeries, id: string): CalendarEvent {
  const end = endOf(series.startInstant, series.zone, series.allDay, series.length);
  return {
    ...eventFields(master),
    id,
    start: eventDateTime(
      series.startInstant,
      series.zone,
      series.allDay,
      series.allDay ? series.start.naive : undefined,
    ),
    end: eventDateTime(
      end,
      series.zone,
      series.allDay,
      series.allDay ? series.start.naive + series.length.days * MS_PER_DAY : undefined,
    ),
  };
}

/**
 * The resource's event as a listing without `singleEvents` shows it: the master with its
 * recurrence lines (RRULE, RDATE, EXDATE as written), or the single event.
 */
export function resourceMaster(resource: IcsResource, eventId?: string): CalendarEvent | undefined {
  const master = resource.master;
  if (master === undefined) {
    return undefined;
  }
  const series = readSeries(master, resource);
  const event = singleEvent(master, series, eventId ?? resource.uid);
  if (series.recurring) {
    event.recurrence = recurrenceLines(master);
  }
  return event;
}
