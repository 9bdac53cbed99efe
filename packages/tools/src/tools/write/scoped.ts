/**
 * Changes to recurring events with a scope, as calendar apps offer them: this occurrence only,
 * this and following (the series is split), or the whole series (a time change moves every
 * occurrence by the same wall-clock amount).
 */
import { CalgateError, formatLocalDateTime, localFromNaiveMs, MS_PER_DAY, offsetMsAt } from '@calgate/core';
import type { CalendarEvent, EventDateTime, EventInput, EventPatch, WriteOptions } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import {
  checkedRange,
  derivedEventId,
  instantOf,
  isAlreadyDeleted,
  isCode,
  keepDuration,
  withSeriesZone,
} from './common.ts';
import { guardedPatch } from './guarded.ts';
import { occurrenceTimes, splitRecurrence } from './split.ts';

export type Scope = 'thisEvent' | 'thisAndFollowing' | 'all';

export interface ScopedOptions {
  sendUpdates?: WriteOptions['sendUpdates'] | undefined;
  signal?: AbortSignal | undefined;
  /** See GuardedOptions.rebase. */
  rebase?: boolean;
}

export interface ScopedResult {
  event: CalendarEvent;
  /** The scope applied; absent for an event that does not recur. */
  scope?: Scope;
  written: boolean;
  retried: boolean;
  /** The series created by a thisAndFollowing split. */
  newSeriesId?: string;
  notes: string[];
}

/** What the event addressed by an id is, read once. */
export interface Addressed {
  target: CalendarEvent;
  /** The series' master id when the target is one occurrence. */
  masterId: string | undefined;
  recurring: boolean;
  scope: Scope | undefined;
}

export async function addressEvent(
  handle: CalendarHandle,
  eventId: string,
  scope: Scope | undefined,
  signal?: AbortSignal,
): Promise<Addressed> {
  const target = await handle.provider.getEvent(handle.ref, eventId, signal);
  const masterId = target.recurringEventId;
  const recurring = masterId !== undefined || (target.recurrence?.length ?? 0) > 0;
  if (!recurring) {
    return { target, masterId, recurring, scope: undefined };
  }
  const resolved = scope ?? (masterId === undefined ? 'all' : 'thisEvent');
  if (masterId === undefined && resolved === 'thisEvent') {
    throw new CalgateError(
      'invalid_argument',
      `'${eventId}' is a whole recurring series. For one occurrence pass its instance id (list_events returns them), or use scope 'all'.`,
    );
  }
  // From the first occurrence on is the whole series.
  return { target, masterId, recurring, scope: masterId === undefined ? 'all' : resolved };
}

function wallClock(instant: number, zone: string): number {
  return instant + offsetMsAt(instant, zone);
}

function shifted(masterTime: EventDateTime, deltaMs: number, zone: string, allDay: boolean): EventDateTime {
  if (allDay) {
    const day = new Date(Date.parse(`${masterTime.date}T00:00:00Z`) + deltaMs);
    return { date: day.toISOString().slice(0, 10) };
  }
  const base = wallClock(instantOf(masterTime, zone), zone);
  return {
    dateTime: formatLocalDateTime({ ...localFromNaiveMs(base + deltaMs), millisecond: 0 }),
    timeZone: zone,
  };
}

/**
 * A patch written for one occurrence, turned into one for its series: new start/end become the
 * same wall-clock move of the master's start/end.
 */
export function seriesPatch(
  patch: EventPatch,
  occurrence: CalendarEvent,
  master: CalendarEvent,
  calendarTimeZone: string,
  notes: string[],
): EventPatch {
  if (patch.start === undefined && patch.end === undefined) {
    return patch;
  }
  const allDay = master.start.date !== undefined;
  const changesKind =
    (patch.start !== undefined && (patch.start.date !== undefined) !== allDay) ||
    (patch.end !== undefined && (patch.end.date !== undefined) !== allDay);
  if (changesKind) {
    throw new CalgateError(
      'invalid_argument',
      'To switch a whole series between timed and all-day, pass the series id with new start, end and recurrence.',
    );
  }
  const zone = master.start.timeZone ?? calendarTimeZone;
  const delta = (from: EventDateTime, to: EventDateTime | undefined) =>
    to === undefined
      ? 0
      : allDay
        ? Date.parse(`${to.date}T00:00:00Z`) - Date.parse(`${from.date}T00:00:00Z`)
        : wallClock(instantOf(to, zone), zone) - wallClock(instantOf(from, zone), zone);
  const startDelta = delta(occurrence.start, patch.start);
  const endDelta = patch.end === undefined ? startDelta : delta(occurrence.end, patch.end);
  const out: EventPatch = {
    ...patch,
    start: shifted(master.start, startDelta, zone, allDay),
    end: shifted(master.end, endDelta, master.end.timeZone ?? zone, allDay),
  };
  if (patch.end !== undefined) {
    checkedRange(out.start as EventDateTime, out.end as EventDateTime, zone);
  }
  const before = allDay ? 0 : wallClock(instantOf(occurrence.start, zone), zone);
  const movesDay = allDay
    ? startDelta !== 0
    : Math.floor(before / MS_PER_DAY) !== Math.floor((before + startDelta) / MS_PER_DAY);
  if (
    movesDay &&
    patch.recurrence === undefined &&
    (master.recurrence ?? []).some((line) => /BYDAY|BYMONTHDAY|BYYEARDAY/i.test(line))
  ) {
    notes.push(
      "The series' rule names days (BYDAY/BYMONTHDAY); it was not changed. If the move changes the day, pass recurrence too.",
    );
  }
  return out;
}

const SERIES_FIELDS = [
  'summary',
  'description',
  'location',
  'attendees',
  'reminders',
  'transparency',
  'visibility',
  'colorId',
] as const;

/**
 * Applies a change to the event `eventId` with the given scope. A new start alone keeps the
 * length of every occurrence it moves: one event or occurrence, the series, or a split.
 */
export async function applyScoped(
  handle: CalendarHandle,
  eventId: string,
  scope: Scope | undefined,
  build: (base: CalendarEvent) => EventPatch,
  options: ScopedOptions = {},
): Promise<ScopedResult> {
  const { provider, ref } = handle;
  const guardOptions = {
    sendUpdates: options.sendUpdates,
    signal: options.signal,
    rebase: options.rebase ?? false,
  };
  const addressed = await addressEvent(handle, eventId, scope, options.signal);
  const { target, masterId } = addressed;
  if (target.status === 'cancelled') {
    throw new CalgateError('not_found', `Event '${eventId}' has been deleted.`, {
      context: { eventId, alreadyDeleted: true },
    });
  }
  const notes: string[] = [];
  if (addressed.scope === undefined || addressed.scope === 'thisEvent' || masterId === undefined) {
    const zone = target.start.timeZone ?? ref.timeZone;
    const kept = (b: CalendarEvent) => keepDuration(build(b), b, ref.timeZone);
    const own =
      (target.recurrence?.length ?? 0) > 0 ? (b: CalendarEvent) => withSeriesZone(kept(b), zone, true) : kept;
    const result = await guardedPatch(handle, eventId, own, { ...guardOptions, current: target });
    return { ...result, ...(addressed.scope ? { scope: addressed.scope } : {}), notes };
  }
  const master = await provider.getEvent(ref, masterId, options.signal);
  const splitAt = instantOf(target.originalStartTime ?? target.start, ref.timeZone);
  const first = instantOf(master.start, ref.timeZone);
  if (addressed.scope === 'all' || splitAt <= first) {
    const result = await guardedPatch(
      handle,
      masterId,
      (current) => seriesPatch(build(current), target, current, ref.timeZone, notes),
      { ...guardOptions, current: master },
    );
    return { ...result, scope: 'all', notes };
  }
  return splitSeries(handle, master, splitAt, build, options, notes);
}

async function splitSeries(
  handle: CalendarHandle,
  master: CalendarEvent,
  splitAt: number,
  build: (base: CalendarEvent) => EventPatch,
  options: ScopedOptions,
  notes: string[],
): Promise<ScopedResult> {
  const { provider, ref } = handle;
  const split = splitRecurrence(master.recurrence ?? [], master.start, master.end, splitAt, ref.timeZone);
  if (!split.ok) {
    throw split.error;
  }
  const times = occurrenceTimes(master, splitAt, ref.timeZone);
  const base: CalendarEvent = { id: '', status: master.status, ...times, recurrence: split.value.tail };
  for (const field of SERIES_FIELDS) {
    if (master[field] !== undefined) {
      (base as unknown as Record<string, unknown>)[field] = master[field];
    }
  }
  const zone = master.start.timeZone ?? ref.timeZone;
  const patch = withSeriesZone(keepDuration(build(base), base, ref.timeZone), zone, true);
  const input: EventInput = {
    ...(base as unknown as EventInput),
    ...patch,
    // Same split twice (a retry) names the same new series.
    id: derivedEventId('split', ref.id, master.id, String(splitAt)),
  };
  delete (input as unknown as Record<string, unknown>).status;
  const writeOptions = options.sendUpdates === undefined ? {} : { sendUpdates: options.sendUpdates };
  let created: CalendarEvent;
  try {
    created = await provider.insertEvent(ref, input, writeOptions);
  } catch (error) {
    if (!isCode(error, 'already_exists')) {
      throw error;
    }
    created = await provider.getEvent(ref, input.id as string, options.signal);
  }
  try {
    await guardedPatch(handle, master.id, () => ({ recurrence: split.value.head }), {
      current: master,
      sendUpdates: options.sendUpdates,
      signal: options.signal,
    });
  } catch (error) {
    // Without the old series ending, the new one would duplicate its occurrences.
    await provider.deleteEvent(ref, created.id).catch(() => undefined);
    throw error;
  }
  notes.push(`Series split: occurrences before this one stay in series '${master.id}'.`);
  return {
    event: created,
    scope: 'thisAndFollowing',
    written: true,
    retried: false,
    newSeriesId: created.id,
    notes,
  };
}

export interface DeleteResult {
  deleted: boolean;
  alreadyDeleted: boolean;
  scope?: Scope;
  /** The event actually deleted or ended (the master for 'all' and 'thisAndFollowing'). */
  affectedId: string;
}

/** Deletes with a scope; an event already gone is reported, not deleted again. */
export async function deleteScoped(
  handle: CalendarHandle,
  eventId: string,
  scope: Scope | undefined,
  options: ScopedOptions = {},
): Promise<DeleteResult> {
  const { provider, ref } = handle;
  const gone = (id: string, s?: Scope): DeleteResult => ({
    deleted: false,
    alreadyDeleted: true,
    affectedId: id,
    ...(s ? { scope: s } : {}),
  });
  let addressed: Addressed;
  try {
    addressed = await addressEvent(handle, eventId, scope, options.signal);
  } catch (error) {
    if (isAlreadyDeleted(error)) {
      return gone(eventId);
    }
    throw error;
  }
  const { target, masterId } = addressed;
  const writeOptions = options.sendUpdates === undefined ? {} : { sendUpdates: options.sendUpdates };
  const remove = async (id: string, s?: Scope): Promise<DeleteResult> => {
    try {
      await provider.deleteEvent(ref, id, writeOptions);
      return { deleted: true, alreadyDeleted: false, affectedId: id, ...(s ? { scope: s } : {}) };
    } catch (error) {
      if (isAlreadyDeleted(error)) {
        return gone(id, s);
      }
      throw error;
    }
  };
  if (target.status === 'cancelled') {
    return gone(eventId, addressed.scope);
  }
  if (addressed.scope === undefined || addressed.scope === 'thisEvent' || masterId === undefined) {
    return remove(eventId, addressed.scope);
  }
  const master = await provider.getEvent(ref, masterId, options.signal);
  if (master.status === 'cancelled') {
    return gone(masterId, addressed.scope);
  }
  const splitAt = instantOf(target.originalStartTime ?? target.start, ref.timeZone);
  if (addressed.scope === 'all' || splitAt <= instantOf(master.start, ref.timeZone)) {
    return remove(masterId, 'all');
  }
  const split = splitRecurrence(master.recurrence ?? [], master.start, master.end, splitAt, ref.timeZone);
  if (!split.ok) {
    throw split.error;
  }
  await guardedPatch(handle, masterId, () => ({ recurrence: split.value.head }), {
    current: master,
    sendUpdates: options.sendUpdates,
    signal: options.signal,
  });
  return { deleted: true, alreadyDeleted: false, affectedId: masterId, scope: 'thisAndFollowing' };
}
