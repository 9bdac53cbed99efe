/**
 * A listing answered from mirror rows, the way Google answers events.list: single events and
 * exceptions by their own times, series expanded into instances (`<masterId>_<key>` ids) with
 * their exceptions in place, cancelled occurrences left out unless asked for, sorted and paged.
 * Events are built from the resources the provider sent (its MirrorFormat reads them back), so
 * a mirrored event reads like a fetched one.
 */
import { type CompiledSeries, compileSeries, expandCompiledSeries } from '@calgate/core';
import type { MirrorResourceRow } from '@calgate/store';
import { instanceEtag, instantOf, MAX_INSTANCES, startKey } from '../local/rows.ts';
import type { CalendarEvent, CalendarRef } from '../types.ts';
import type { MirrorFormat } from './source.ts';

export interface ListingWindow {
  timeMin?: number | undefined;
  timeMax?: number | undefined;
}

export interface ListingOptions extends ListingWindow {
  singleEvents: boolean;
  showDeleted: boolean;
  /** Instances generated per series at most (the page's end plus one is enough). */
  instanceLimit: number;
  /** Instances starting at or after this are not generated (the caller keeps only earlier ones). */
  expandUntil?: number | undefined;
}

/** Compiled series by calendar, event, ETag and zone: compiling a rule costs more than expanding it. */
const compiled = new Map<string, CompiledSeries | null>();
const COMPILED_MAX = 5_000;

function seriesOf(row: MirrorResourceRow, master: CalendarEvent, zone: string): CompiledSeries | null {
  const key = `${row.eventId}\u0000${row.etag ?? ''}\u0000${zone}`;
  const cached = compiled.get(key);
  if (cached !== undefined) {
    return cached;
  }
  const result = compileSeries({
    recurrence: master.recurrence ?? [],
    start: master.start,
    end: master.end,
    defaultTimeZone: zone,
  });
  // A rule Google accepted but Calgate cannot read yields no instances rather than failing the read.
  const series = result.ok ? result.value : null;
  if (compiled.size >= COMPILED_MAX) {
    compiled.clear();
  }
  compiled.set(key, series);
  return series;
}

/** Google's window rule: start before timeMax, end after timeMin (zero-length events at timeMin count). */
export function inWindow(event: CalendarEvent, zone: string, window: ListingWindow): boolean {
  const start = instantOf(event.start, zone);
  const end = instantOf(event.end, zone);
  return (
    (window.timeMax === undefined || start < window.timeMax) &&
    (window.timeMin === undefined || end > window.timeMin || (end === start && start >= window.timeMin))
  );
}

/**
 * The events of a window. `rows` are the mirror's rows for it (masters, exceptions, singles);
 * rows with `matched: false` are exceptions read only to hide the instances they replace.
 */
export function listingEvents(
  rows: readonly MirrorResourceRow[],
  calendar: CalendarRef,
  options: ListingOptions,
  format: MirrorFormat,
): CalendarEvent[] {
  const zone = calendar.timeZone;
  const replaced = new Set<string>();
  for (const row of rows) {
    if (row.recurringEventId !== null) {
      replaced.add(row.eventId);
      if (row.originalStart !== null) {
        replaced.add(`${row.recurringEventId}@${row.originalStart}`);
      }
    }
  }
  const out: CalendarEvent[] = [];
  for (const row of rows) {
    if (row.matched === false) {
      continue;
    }
    // Google lists cancelled occurrences of a series when both singleEvents and showDeleted are
    // false; other cancelled rows only with showDeleted.
    const cancelled = row.status === 'cancelled';
    const cancelledOccurrence = cancelled && row.recurringEventId !== null && !options.singleEvents;
    if (cancelled && !options.showDeleted && !cancelledOccurrence) {
      continue;
    }
    const event = format.toEvent(row);
    const recurring = (event.recurrence?.length ?? 0) > 0 && row.recurringEventId === null;
    if (!recurring) {
      // A cancelled occurrence carries no times of its own: it sits where the rule put it.
      const placed =
        event.start.dateTime === undefined && event.start.date === undefined && event.originalStartTime
          ? { ...event, start: event.originalStartTime, end: event.originalStartTime }
          : event;
      if (inWindow(placed, format.allDayZone?.(row) ?? zone, options)) {
        out.push(event);
      }
      continue;
    }
    if (!options.singleEvents) {
      if (seriesTouches(row, event, zone, options)) {
        out.push(event);
      }
      continue;
    }
    out.push(...instancesOf(row, event, zone, options, replaced, format));
  }
  return out;
}

function instancesOf(
  row: MirrorResourceRow,
  master: CalendarEvent,
  zone: string,
  options: ListingOptions,
  replaced: ReadonlySet<string>,
  format: MirrorFormat,
): CalendarEvent[] {
  const series = seriesOf(row, master, zone);
  if (series === null) {
    return [];
  }
  const to =
    options.expandUntil === undefined
      ? options.timeMax
      : Math.min(options.expandUntil, options.timeMax ?? Number.POSITIVE_INFINITY);
  const expanded = expandCompiledSeries(series, {
    ...(options.timeMin === undefined ? {} : { from: options.timeMin }),
    ...(to === undefined ? {} : { to }),
    limit: options.instanceLimit,
    maxInstances: MAX_INSTANCES,
  });
  if (!expanded.ok) {
    return [];
  }
  const { recurrence: _recurrence, ...base } = master;
  const out: CalendarEvent[] = [];
  for (const instance of expanded.value) {
    const id = `${row.eventId}_${instance.key}`;
    if (replaced.has(id) || replaced.has(`${row.eventId}@${instance.startMs}`)) {
      continue;
    }
    const event: CalendarEvent = {
      ...base,
      id,
      etag: instanceEtag(row.etag ?? '', instance.key),
      start: instance.start,
      end: instance.end,
      recurringEventId: row.eventId,
      originalStartTime: instance.originalStart,
    };
    if (base.htmlLink !== undefined && format.instanceLink !== undefined) {
      event.htmlLink = format.instanceLink(base.htmlLink, row.eventId, id);
    }
    out.push(event);
  }
  return out;
}

/** With singleEvents=false a master shows when one of its instances falls in the window. */
function seriesTouches(
  row: MirrorResourceRow,
  master: CalendarEvent,
  zone: string,
  window: ListingWindow,
): boolean {
  if (window.timeMin === undefined && window.timeMax === undefined) {
    return true;
  }
  const series = seriesOf(row, master, zone);
  if (series === null) {
    return false;
  }
  const expanded = expandCompiledSeries(series, {
    ...(window.timeMin === undefined ? {} : { from: window.timeMin }),
    ...(window.timeMax === undefined ? {} : { to: window.timeMax }),
    limit: 1,
    maxInstances: MAX_INSTANCES,
  });
  return expanded.ok && expanded.value.length > 0;
}

/** Sorted as Google sorts: by start (ties by id), or by last update. */
export function sortEvents(events: CalendarEvent[], orderBy: 'startTime' | 'updated' | undefined): void {
  if (orderBy === 'updated') {
    events.sort((a, b) => (a.updated ?? '').localeCompare(b.updated ?? '') || compareIds(a.id, b.id));
    return;
  }
  const keys = new Map(events.map((event) => [event, startKey(event)]));
  events.sort((a, b) => (keys.get(a) ?? 0) - (keys.get(b) ?? 0) || compareIds(a.id, b.id));
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
