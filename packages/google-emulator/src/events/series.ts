/**
 * Recurring series over @calgate/core's RRULE engine: validation of `recurrence` lines, instance
 * expansion within a window, and Google's instance ids (`<id>_20260105T080000Z`, `<id>_20260105`).
 */
import { type CompiledSeries, compileSeries, expandCompiledSeries, type SeriesInstance } from '@calgate/core';
import { apiErrors } from '../errors.ts';
import type { CalendarRecord, EventDateTime, StoredEvent } from '../state.ts';
import { resolveTime } from './times.ts';

export type { SeriesInstance };

/** Open-ended series are expanded this far past "now" when a query gives no timeMax. */
export const EXPANSION_HORIZON_MS = 2 * 366 * 86_400_000;
const MAX_INSTANCES = 20_000;

const cache = new WeakMap<StoredEvent, { stamp: number; zone: string; series: CompiledSeries }>();

function compile(
  recurrence: readonly string[],
  start: EventDateTime,
  end: EventDateTime,
  calendarZone: string,
): CompiledSeries {
  const compiled = compileSeries({ recurrence, start, end, defaultTimeZone: calendarZone });
  if (!compiled.ok) {
    throw apiErrors.invalid('Invalid recurrence rule.');
  }
  return compiled.value;
}

/** Checks a series definition the way an insert or update must: every line, and one expansion. */
export function validateRecurrence(
  recurrence: unknown,
  start: EventDateTime,
  end: EventDateTime,
  calendarZone: string,
): string[] {
  if (!Array.isArray(recurrence) || recurrence.some((line) => typeof line !== 'string')) {
    throw apiErrors.invalid('Invalid recurrence rule.');
  }
  const lines = recurrence as string[];
  if (lines.some((line) => /^\s*(DTSTART|DTEND)/i.test(line))) {
    throw apiErrors.invalid('Invalid recurrence rule.');
  }
  const series = compile(lines, start, end, calendarZone);
  if (!expandCompiledSeries(series, { limit: 1, maxInstances: MAX_INSTANCES }).ok) {
    throw apiErrors.invalid('Invalid recurrence rule.');
  }
  return lines;
}

export function isRecurring(event: StoredEvent): boolean {
  return Array.isArray(event.data.recurrence) && (event.data.recurrence as unknown[]).length > 0;
}

function seriesOf(calendar: CalendarRecord, master: StoredEvent): CompiledSeries {
  const hit = cache.get(master);
  if (hit && hit.stamp === master.stamp && hit.zone === calendar.timeZone) {
    return hit.series;
  }
  const series = compile(
    master.data.recurrence as string[],
    master.data.start as EventDateTime,
    master.data.end as EventDateTime,
    calendar.timeZone,
  );
  cache.set(master, { stamp: master.stamp, zone: calendar.timeZone, series });
  return series;
}

export interface ExpansionWindow {
  from?: number;
  to: number;
  limit?: number;
}

/** The series' instances overlapping the window, earliest first (exceptions not applied). */
export function expandInstances(
  calendar: CalendarRecord,
  master: StoredEvent,
  window: ExpansionWindow,
): SeriesInstance[] {
  const expanded = expandCompiledSeries(seriesOf(calendar, master), {
    ...window,
    maxInstances: MAX_INSTANCES,
  });
  // A series too dense to expand (e.g. minutely for years) yields what fits rather than failing a read.
  return expanded.ok ? expanded.value : [];
}

export interface InstanceRef {
  masterId: string;
  key: string;
}

/** `abc123_20260105T080000Z` → master `abc123`, key `20260105T080000Z`. */
export function parseInstanceId(id: string): InstanceRef | null {
  const m = /^(.+)_(\d{8}(?:T\d{6}Z)?)$/.exec(id);
  return m ? { masterId: m[1] as string, key: m[2] as string } : null;
}

function keyInstant(key: string, calendar: CalendarRecord): number | null {
  const y = key.slice(0, 4);
  const mo = key.slice(4, 6);
  const d = key.slice(6, 8);
  if (key.length === 8) {
    // All-day series are expanded in the calendar's zone.
    return resolveTime({ date: `${y}-${mo}-${d}` }, calendar.timeZone).ms;
  }
  const ms = Date.parse(`${y}-${mo}-${d}T${key.slice(9, 11)}:${key.slice(11, 13)}:${key.slice(13, 15)}Z`);
  return Number.isNaN(ms) ? null : ms;
}

/** The instance a key names, if the series generates it. */
export function findInstance(
  calendar: CalendarRecord,
  master: StoredEvent,
  key: string,
): SeriesInstance | undefined {
  const at = keyInstant(key, calendar);
  if (at === null) {
    return undefined;
  }
  return expandInstances(calendar, master, { from: at, to: at + 1 }).find((i) => i.key === key);
}

/** The instance key for an original start (used when a client sends `originalStartTime`). */
export function keyForOriginalStart(value: EventDateTime, calendarZone: string): string {
  if (value.date !== undefined) {
    return value.date.replace(/-/g, '');
  }
  const ms = resolveTime(value, calendarZone).ms;
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}
