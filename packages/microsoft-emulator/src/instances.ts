/**
 * What calendarView and instances answer: single events, occurrences of series (expanded here
 * from patternedRecurrence in the series' own zone) and exceptions; never series masters.
 * Occurrences carry real ids, derived from their series and original start, so a client can
 * GET, PATCH or DELETE them; an exception keeps the id of the occurrence it replaced.
 */
import { occurrenceDates } from './recurrence.ts';
import type { CalendarRecord, EventRecord, WhenRecord, Zone } from './state.ts';
import { dateOfDay, dayNumber, instantOf, localPartsAt } from './time.ts';
import { acceptZone } from './zones.ts';

export interface Instance {
  id: string;
  type: 'singleInstance' | 'occurrence' | 'exception' | 'seriesMaster';
  /** The record its fields come from (the master, for an occurrence). */
  record: EventRecord;
  start: number;
  end: number;
  /** All-day: the local dates (end exclusive) in the event's zone. */
  allDay?: { start: number; end: number };
  originalStart?: number;
  seriesMasterId?: string;
  changeKey: string;
}

const OCCURRENCE_PREFIX = 'AAMkAGO';
export const EVENT_PREFIX = 'AAMkAGI';

export function occurrenceId(masterId: string, originalStart: number): string {
  return `${OCCURRENCE_PREFIX}${Buffer.from(`${masterId}|${originalStart}`).toString('base64url')}=`;
}

/** The series and original start an occurrence id names; undefined for other ids. */
export function parseOccurrenceId(id: string): { masterId: string; originalStart: number } | undefined {
  if (!id.startsWith(OCCURRENCE_PREFIX) || !id.endsWith('=')) {
    return undefined;
  }
  const text = Buffer.from(id.slice(OCCURRENCE_PREFIX.length, -1), 'base64url').toString('utf8');
  const at = text.lastIndexOf('|');
  const originalStart = Number(text.slice(at + 1));
  return at > 0 && Number.isInteger(originalStart)
    ? { masterId: text.slice(0, at), originalStart }
    : undefined;
}

export function instantOfWhen(when: WhenRecord): number {
  return instantOf(when.local, when.zone.iana);
}

const MIDNIGHT = { hour: 0, minute: 0, second: 0 };

function dayOf(when: WhenRecord): number {
  return dayNumber(when.local.year, when.local.month, when.local.day);
}

const whenKey = (w: WhenRecord) =>
  `${w.local.year}-${w.local.month}-${w.local.day}T${w.local.hour}:${w.local.minute}:${w.local.second}@${w.zone.iana}`;

/** Zone arithmetic is the slow part of a view over a large calendar: keep each record's instants. */
const timings = new WeakMap<EventRecord, { key: string; start: number; end: number }>();

function timingOf(record: EventRecord): { start: number; end: number } {
  const key = `${whenKey(record.start)}|${whenKey(record.end)}`;
  const cached = timings.get(record);
  if (cached?.key === key) {
    return cached;
  }
  const fresh = { key, start: instantOfWhen(record.start), end: instantOfWhen(record.end) };
  timings.set(record, fresh);
  return fresh;
}

/** Instance timing of a stored single event, exception or master. */
export function ownInstance(record: EventRecord): Instance {
  const { start, end } = timingOf(record);
  const instance: Instance = {
    id: record.id,
    type: record.kind,
    record,
    start,
    end,
    changeKey: record.changeKey,
  };
  if (record.isAllDay) {
    instance.allDay = { start: dayOf(record.start), end: dayOf(record.end) };
  }
  if (record.kind === 'exception') {
    instance.originalStart = record.originalStart as number;
    instance.seriesMasterId = record.seriesMasterId as string;
  }
  return instance;
}

/** The zone a series recurs in: its range's recurrenceTimeZone when Graph takes it, else its start's. */
export function seriesZone(master: EventRecord): Zone {
  const named = master.recurrence?.range.recurrenceTimeZone;
  return (named ? acceptZone(named) : undefined) ?? master.start.zone;
}

/** Occurrences (deleted ones left out, exceptions not applied) starting before `until`. */
export function* occurrencesOf(master: EventRecord, until: number): Generator<Instance> {
  const recurrence = master.recurrence;
  if (!recurrence) {
    return;
  }
  const zone = seriesZone(master);
  const timing = timingOf(master);
  const masterStart = timing.start;
  const duration = timing.end - masterStart;
  const time = localPartsAt(masterStart, zone.iana);
  const spanDays = dayOf(master.end) - dayOf(master.start);
  const untilParts = localPartsAt(until, zone.iana);
  const untilDay = dayNumber(untilParts.year, untilParts.month, untilParts.day);
  for (const day of occurrenceDates(recurrence, untilDay)) {
    const date = dateOfDay(day);
    const local = master.isAllDay
      ? { ...date, ...MIDNIGHT }
      : { ...date, hour: time.hour, minute: time.minute, second: time.second };
    const start = instantOf(local, master.isAllDay ? master.start.zone.iana : zone.iana);
    if (start >= until) {
      return;
    }
    if (master.deleted?.has(start)) {
      continue;
    }
    const instance: Instance = {
      id: occurrenceId(master.id, start),
      type: 'occurrence',
      record: master,
      start,
      end: master.isAllDay
        ? instantOf({ ...dateOfDay(day + spanDays), ...MIDNIGHT }, master.end.zone.iana)
        : start + duration,
      originalStart: start,
      seriesMasterId: master.id,
      changeKey: master.changeKey,
    };
    if (master.isAllDay) {
      instance.allDay = { start: day, end: day + spanDays };
    }
    yield instance;
  }
}

export function exceptionsOf(calendar: CalendarRecord, masterId: string): EventRecord[] {
  return [...calendar.events.values()].filter((e) => e.kind === 'exception' && e.seriesMasterId === masterId);
}

const overlaps = (i: Instance, from: number, to: number) =>
  i.start < to && (i.end > from || (i.end === i.start && i.start >= from));

/** A series' instances overlapping [from, to): occurrences with exceptions applied. */
export function seriesInstances(
  calendar: CalendarRecord,
  master: EventRecord,
  from: number,
  to: number,
): Instance[] {
  const exceptions = exceptionsOf(calendar, master.id);
  const replaced = new Set(exceptions.map((e) => e.originalStart));
  const out: Instance[] = [];
  // An occurrence can start before `from` and still overlap it.
  const timing = timingOf(master);
  const lookBack = Math.max(0, timing.end - timing.start);
  for (const occurrence of occurrencesOf(master, to)) {
    if (occurrence.start + lookBack < from) {
      continue;
    }
    if (!replaced.has(occurrence.originalStart) && overlaps(occurrence, from, to)) {
      out.push(occurrence);
    }
  }
  for (const exception of exceptions) {
    const instance = ownInstance(exception);
    if (overlaps(instance, from, to)) {
      out.push(instance);
    }
  }
  return out;
}

/** calendarView: every instance overlapping [from, to), in start order. */
export function calendarView(calendar: CalendarRecord, from: number, to: number): Instance[] {
  const out: Instance[] = [];
  for (const record of calendar.events.values()) {
    if (record.kind === 'singleInstance') {
      const instance = ownInstance(record);
      if (overlaps(instance, from, to)) {
        out.push(instance);
      }
    } else if (record.kind === 'seriesMaster') {
      out.push(...seriesInstances(calendar, record, from, to));
    }
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end || (a.id < b.id ? -1 : 1));
}

/** The instance an id names in this calendar (occurrence ids included); undefined when none. */
export function instanceById(calendar: CalendarRecord, id: string): Instance | undefined {
  const stored = calendar.events.get(id);
  if (stored) {
    return ownInstance(stored);
  }
  const parsed = parseOccurrenceId(id);
  const master = parsed ? calendar.events.get(parsed.masterId) : undefined;
  if (!parsed || master?.kind !== 'seriesMaster') {
    return undefined;
  }
  for (const occurrence of occurrencesOf(master, parsed.originalStart + 1)) {
    if (occurrence.originalStart === parsed.originalStart) {
      return occurrence;
    }
  }
  return undefined;
}
