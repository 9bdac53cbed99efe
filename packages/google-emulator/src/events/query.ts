/**
 * events.list and events.instances: which rows a query selects (time window, text, deleted,
 * updatedMin, iCalUID, extended properties, incremental sync) and in which order.
 */
import { apiErrors } from '../errors.ts';
import type { CalendarRecord, EmulatorState, StoredEvent } from '../state.ts';
import { EXPANSION_HORIZON_MS, expandInstances } from './series.ts';
import { parseQueryInstant } from './times.ts';
import type { SortKey } from './tokens.ts';
import { type EventView, exceptionView, instanceView, storedView } from './views.ts';

export interface ListFilter {
  timeMin?: number;
  timeMax?: number;
  terms: string[];
  singleEvents: boolean;
  orderBy?: 'startTime' | 'updated';
  showDeleted: boolean;
  updatedMin?: number;
  iCalUID?: string;
  eventTypes?: Set<string>;
  privateProps: [string, string][];
  sharedProps: [string, string][];
  /** Incremental sync: only rows changed after this sequence. */
  sinceSeq?: number;
}

const SYNC_CONFLICTS = [
  'iCalUID',
  'orderBy',
  'privateExtendedProperty',
  'q',
  'sharedExtendedProperty',
  'timeMin',
  'timeMax',
  'updatedMin',
];

const bool = (q: URLSearchParams, name: string) => q.get(name) === 'true';

function props(values: string[], name: string): [string, string][] {
  return values.map((v) => {
    const i = v.indexOf('=');
    if (i <= 0) {
      throw apiErrors.invalid(`Invalid value for ${name}: ${v}`, name);
    }
    return [v.slice(0, i), v.slice(i + 1)];
  });
}

export function parseListFilter(q: URLSearchParams, syncing: boolean): ListFilter {
  if (syncing && (SYNC_CONFLICTS.some((p) => q.has(p)) || q.get('showDeleted') === 'false')) {
    throw apiErrors.invalid('Sync token cannot be used with other request restrictions.', 'syncToken');
  }
  const orderBy = q.get('orderBy') ?? undefined;
  if (orderBy !== undefined && orderBy !== 'startTime' && orderBy !== 'updated') {
    throw apiErrors.invalid(`Invalid value for orderBy: ${orderBy}`, 'orderBy');
  }
  const singleEvents = bool(q, 'singleEvents');
  if (orderBy === 'startTime' && !singleEvents) {
    throw apiErrors.badRequest(
      'badRequest',
      'The requested ordering is not available for the particular query.',
    );
  }
  const filter: ListFilter = {
    terms: (q.get('q') ?? '').toLowerCase().split(/\s+/).filter(Boolean),
    singleEvents,
    showDeleted: syncing || bool(q, 'showDeleted'),
    privateProps: props(q.getAll('privateExtendedProperty'), 'privateExtendedProperty'),
    sharedProps: props(q.getAll('sharedExtendedProperty'), 'sharedExtendedProperty'),
  };
  if (orderBy !== undefined) {
    filter.orderBy = orderBy;
  }
  for (const name of ['timeMin', 'timeMax', 'updatedMin'] as const) {
    const value = q.get(name);
    if (value !== null && value !== '') {
      filter[name] = parseQueryInstant(value, name);
    }
  }
  if (filter.timeMin !== undefined && filter.timeMax !== undefined && filter.timeMax <= filter.timeMin) {
    throw apiErrors.timeRangeEmpty();
  }
  const iCalUID = q.get('iCalUID');
  if (iCalUID) {
    filter.iCalUID = iCalUID;
  }
  const types = q.getAll('eventTypes');
  if (types.length > 0) {
    filter.eventTypes = new Set(types);
  }
  return filter;
}

function overlaps(view: EventView, from: number | undefined, to: number | undefined): boolean {
  if (to !== undefined && view.startMs >= to) {
    return false;
  }
  return from === undefined || view.endMs > from || (view.endMs === view.startMs && view.startMs >= from);
}

function searchable(data: Record<string, unknown>): string {
  const people = [data.organizer, ...((data.attendees as unknown[] | undefined) ?? [])] as
    | { email?: string; displayName?: string }[]
    | undefined[];
  return [data.summary, data.description, data.location, ...people.flatMap((p) => [p?.email, p?.displayName])]
    .filter((v) => typeof v === 'string')
    .join('\n')
    .toLowerCase();
}

function matchesProps(data: Record<string, unknown>, kind: 'private' | 'shared', wanted: [string, string][]) {
  const bag = ((data.extendedProperties as Record<string, Record<string, string>> | undefined)?.[kind] ??
    {}) as Record<string, string>;
  return wanted.every(([k, v]) => bag[k] === v);
}

/** Every filter except the deleted/sync rules, which depend on how a row was produced. */
function matches(view: EventView, f: ListFilter, checkWindow: boolean): boolean {
  if (checkWindow && !overlaps(view, f.timeMin, f.timeMax)) {
    return false;
  }
  if (f.updatedMin !== undefined && Math.floor(view.stamp / 1000) < f.updatedMin) {
    return false;
  }
  if (f.iCalUID !== undefined && view.data.iCalUID !== f.iCalUID) {
    return false;
  }
  if (f.eventTypes && !f.eventTypes.has(String(view.data.eventType ?? 'default'))) {
    return false;
  }
  if (
    !matchesProps(view.data, 'private', f.privateProps) ||
    !matchesProps(view.data, 'shared', f.sharedProps)
  ) {
    return false;
  }
  const text = f.terms.length > 0 ? searchable(view.data) : '';
  return f.terms.every((t) => text.includes(t));
}

/** Whether a deleted row shows: with showDeleted, during sync, or with updatedMin. */
const deletedVisible = (f: ListFilter) => f.showDeleted || f.updatedMin !== undefined;

function seriesRows(calendar: CalendarRecord, master: StoredEvent, f: ListFilter, now: number): EventView[] {
  const exceptions = new Set<string>();
  for (const e of calendar.events.values()) {
    if (e.recurringEventId === master.id && e.instanceKey) {
      exceptions.add(e.instanceKey);
    }
  }
  const to = f.timeMax ?? Math.max(now, master.created) + EXPANSION_HORIZON_MS;
  const window = f.timeMin === undefined ? { to } : { from: f.timeMin, to };
  return expandInstances(calendar, master, window)
    .filter((i) => !exceptions.has(i.key))
    .map((i) => instanceView(calendar, master, i.originalStart));
}

/** The rows of an events.list query, unsorted. */
export function selectRows(calendar: CalendarRecord, f: ListFilter, state: EmulatorState): EventView[] {
  const rows: EventView[] = [];
  const syncing = f.sinceSeq !== undefined;
  for (const event of calendar.events.values()) {
    if (event.recurringEventId !== undefined) {
      const view = exceptionView(calendar, event);
      // An exception also changes when its series does (it inherits the series' fields).
      if (!view || (syncing && view.modSeq <= (f.sinceSeq as number))) {
        continue;
      }
      const masterGone = calendar.events.get(event.recurringEventId)?.data.status === 'cancelled';
      // Cancelled instances still show with singleEvents=false (unless the series is gone).
      const visible = !view.cancelled || deletedVisible(f) || (!f.singleEvents && !masterGone);
      if (visible && matches(view, f, !syncing)) {
        rows.push(view);
      }
      continue;
    }
    const view = storedView(calendar, event);
    if (syncing && event.modSeq <= (f.sinceSeq as number)) {
      continue;
    }
    if (view.kind === 'master' && f.singleEvents) {
      if (view.cancelled && !syncing) {
        continue;
      }
      const instances = seriesRows(calendar, event, syncing ? { ...f, timeMin: undefined } : f, state.now());
      rows.push(...instances.filter((i) => matches(i, f, false)));
      continue;
    }
    if (view.cancelled && !deletedVisible(f)) {
      continue;
    }
    const inWindow =
      view.kind !== 'master' ||
      syncing ||
      (f.timeMin === undefined && f.timeMax === undefined) ||
      seriesRows(calendar, event, f, state.now()).length > 0 ||
      hasExceptionInWindow(calendar, event, f);
    if (inWindow && matches(view, f, !syncing && view.kind !== 'master')) {
      rows.push(view);
    }
  }
  return rows;
}

function hasExceptionInWindow(calendar: CalendarRecord, master: StoredEvent, f: ListFilter): boolean {
  for (const e of calendar.events.values()) {
    if (e.recurringEventId === master.id) {
      const view = exceptionView(calendar, e);
      if (view && !view.cancelled && overlaps(view, f.timeMin, f.timeMax)) {
        return true;
      }
    }
  }
  return false;
}

export function sortKey(view: EventView, f: ListFilter): SortKey {
  if (f.orderBy === 'startTime') {
    return [view.startMs, view.id];
  }
  if (f.orderBy === 'updated') {
    return [view.stamp, view.id];
  }
  return [view.order, view.startMs, view.id];
}
