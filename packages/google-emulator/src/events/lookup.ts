/**
 * Finding the event an id names — a single event, a series, a stored exception, or a generated
 * instance (`<seriesId>_<key>`) — and Google's rules for client-chosen event ids.
 */
import { randomBytes } from 'node:crypto';
import { apiErrors } from '../errors.ts';
import type { CalendarRecord, EventDateTime, StoredEvent } from '../state.ts';
import { findInstance, isRecurring, parseInstanceId } from './series.ts';
import { type EventView, instanceView, storedView } from './views.ts';

export type Target =
  | { kind: 'stored'; event: StoredEvent }
  | {
      kind: 'instance';
      master: StoredEvent;
      originalStart: EventDateTime;
      key: string;
      exception?: StoredEvent;
    };

export function findTarget(calendar: CalendarRecord, eventId: string): Target {
  const stored = calendar.events.get(eventId);
  if (stored && stored.recurringEventId === undefined) {
    return { kind: 'stored', event: stored };
  }
  if (stored?.recurringEventId !== undefined) {
    const master = calendar.events.get(stored.recurringEventId);
    const originalStart = stored.data.originalStartTime as EventDateTime | undefined;
    if (master && originalStart && stored.instanceKey) {
      return { kind: 'instance', master, originalStart, key: stored.instanceKey, exception: stored };
    }
    throw apiErrors.notFound();
  }
  const ref = parseInstanceId(eventId);
  const master = ref ? calendar.events.get(ref.masterId) : undefined;
  if (ref && master && isRecurring(master)) {
    const instance = findInstance(calendar, master, ref.key);
    if (instance) {
      return { kind: 'instance', master, originalStart: instance.originalStart, key: ref.key };
    }
  }
  throw apiErrors.notFound();
}

export function viewOfTarget(calendar: CalendarRecord, target: Target): EventView {
  return target.kind === 'stored'
    ? storedView(calendar, target.event)
    : instanceView(calendar, target.master, target.originalStart, target.exception);
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/** A server-chosen id: 26 base32hex characters, like Google's. */
export function newEventId(): string {
  const bytes = randomBytes(26);
  let id = '';
  for (const b of bytes) {
    id += BASE32HEX[b & 31];
  }
  return id;
}

/** Client-supplied ids: base32hex characters (a–v, 0–9), 5 to 1024 of them. */
export function checkClientEventId(id: unknown): string {
  if (typeof id !== 'string' || !/^[a-v0-9]{5,1024}$/.test(id)) {
    throw apiErrors.invalid('Invalid resource id value.');
  }
  return id;
}
