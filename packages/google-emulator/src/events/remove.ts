/**
 * Deleting and moving events. Deleted events stay as `cancelled` tombstones (so that sync sees
 * them, `get` still returns them, and their ids cannot be reused); deleting an instance stores a
 * cancelled exception; moving leaves a tombstone behind on the source calendar.
 */
import { apiErrors } from '../errors.ts';
import type { CalendarRecord, EmulatorState, StoredEvent } from '../state.ts';
import type { Target } from './lookup.ts';
import { isRecurring } from './series.ts';
import { instanceView } from './views.ts';
import { calendarOrganizer, cancelExceptions } from './write.ts';

export function deleteTarget(state: EmulatorState, calendar: CalendarRecord, target: Target): void {
  if (target.kind === 'stored') {
    const event = target.event;
    if (event.data.status === 'cancelled') {
      throw apiErrors.deleted();
    }
    event.data = { ...event.data, status: 'cancelled' };
    state.touchEvent(calendar, event);
    if (isRecurring(event)) {
      cancelExceptions(state, calendar, event);
    }
    return;
  }
  const { master, originalStart, key } = target;
  if (instanceView(calendar, master, originalStart, target.exception).cancelled) {
    throw apiErrors.deleted();
  }
  let exception = target.exception;
  if (!exception) {
    exception = {
      id: `${master.id}_${key}`,
      data: { originalStartTime: originalStart },
      created: state.now(),
      stamp: 0,
      modSeq: 0,
      order: master.order,
      recurringEventId: master.id,
      instanceKey: key,
    };
    calendar.events.set(exception.id, exception);
  }
  exception.data = { ...exception.data, status: 'cancelled' };
  state.touchEvent(calendar, exception);
}

/** Moves an event (and a series' exceptions) to another calendar, which becomes its organizer. */
export function moveEvent(
  state: EmulatorState,
  source: CalendarRecord,
  destination: CalendarRecord,
  target: Target,
): StoredEvent {
  if (target.kind !== 'stored') {
    throw apiErrors.badRequest(
      'cannotChangeOrganizerOfInstance',
      'Cannot change the organizer of an instance.',
    );
  }
  const event = target.event;
  if (event.data.status === 'cancelled') {
    throw apiErrors.deleted();
  }
  const organizer = event.data.organizer as { email?: string } | undefined;
  if (organizer?.email !== source.id) {
    throw apiErrors.forbiddenForNonOrganizer();
  }
  if (event.data.eventType !== undefined && event.data.eventType !== 'default') {
    throw apiErrors.badRequest('eventTypeRestriction', 'Only events of type default can be moved.');
  }
  if (source.id === destination.id) {
    return event;
  }
  if (destination.events.has(event.id)) {
    throw apiErrors.duplicate();
  }
  const related = [...source.events.values()].filter((e) => e.recurringEventId === event.id);
  for (const original of [event, ...related]) {
    const copy: StoredEvent = {
      ...original,
      data: structuredClone(original.data),
      order: state.nextOrder(),
    };
    if (original === event) {
      copy.data.organizer = calendarOrganizer(destination);
    }
    destination.events.set(copy.id, copy);
    state.touchEvent(destination, copy);
    original.data = { ...original.data, status: 'cancelled' };
    state.touchEvent(source, original);
  }
  return destination.events.get(event.id) as StoredEvent;
}
