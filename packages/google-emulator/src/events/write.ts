/**
 * Creating and changing events: insert and import (with Google's id and iCalUID rules), and
 * update/patch of single events, whole series, or one instance (stored as an exception that
 * keeps only the fields that differ from the series).
 */
import { apiErrors } from '../errors.ts';
import type { PrincipalKind } from '../oauth/tokens.ts';
import type { CalendarRecord, EmulatorState, StoredEvent } from '../state.ts';
import type { Target } from './lookup.ts';
import { checkClientEventId, newEventId } from './lookup.ts';
import {
  changesOrganizerFields,
  EVENT_TYPES,
  isSignificantChange,
  mergePatch,
  nextSequence,
  normalizeWritable,
  writableOf,
} from './model.ts';
import { isRecurring } from './series.ts';
import { instanceView } from './views.ts';

export interface Actor {
  email: string;
  kind: PrincipalKind;
}

export function calendarOrganizer(calendar: CalendarRecord): Record<string, unknown> {
  return calendar.primary ? { email: calendar.id } : { email: calendar.id, displayName: calendar.summary };
}

const attendeeEmails = (data: Record<string, unknown>) =>
  JSON.stringify(((data.attendees as { email: string }[] | undefined) ?? []).map((a) => a.email).sort());

/** Service accounts without domain-wide delegation may not invite anyone. */
function checkServiceAccountAttendees(
  actor: Actor,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
) {
  const added = Array.isArray(after.attendees) && after.attendees.length > 0;
  if (actor.kind === 'service' && added && attendeeEmails(before) !== attendeeEmails(after)) {
    throw apiErrors.forbiddenForServiceAccounts();
  }
}

export function insertEvent(
  state: EmulatorState,
  calendar: CalendarRecord,
  actor: Actor,
  body: Record<string, unknown>,
  mode: 'insert' | 'import' = 'insert',
): StoredEvent {
  if (mode === 'import') {
    if (typeof body.iCalUID !== 'string' || body.iCalUID === '') {
      throw apiErrors.required('Missing iCalUID.');
    }
    // Importing an iCalUID the calendar already has updates that event.
    for (const existing of calendar.events.values()) {
      if (existing.recurringEventId === undefined && existing.data.iCalUID === body.iCalUID) {
        const revived = existing.data.status === 'cancelled' ? { status: 'confirmed', ...body } : body;
        return updateStored(state, calendar, actor, existing, revived, 'update');
      }
    }
  }
  const id = body.id === undefined ? newEventId() : checkClientEventId(body.id);
  if (calendar.events.has(id)) {
    throw apiErrors.duplicate();
  }
  const eventType = body.eventType ?? 'default';
  if (
    typeof eventType !== 'string' ||
    !EVENT_TYPES.has(eventType) ||
    (mode === 'import' && eventType !== 'default')
  ) {
    throw apiErrors.invalid(`Invalid event type: ${String(eventType)}`);
  }
  const normalized = normalizeWritable(body, { calendar });
  delete normalized.originalStartTime;
  checkServiceAccountAttendees(actor, {}, normalized);
  const { self: _self, ...organizer } =
    mode === 'import' && typeof body.organizer === 'object' && body.organizer !== null
      ? (body.organizer as Record<string, unknown>)
      : calendarOrganizer(calendar);
  const now = state.now();
  const event: StoredEvent = {
    id,
    data: {
      ...normalized,
      creator: { email: actor.email },
      organizer,
      iCalUID: mode === 'import' || typeof body.iCalUID === 'string' ? body.iCalUID : `${id}@google.com`,
      sequence: typeof normalized.sequence === 'number' ? normalized.sequence : 0,
      eventType,
    },
    created: now,
    stamp: 0,
    modSeq: 0,
    order: state.nextOrder(),
  };
  calendar.events.set(id, event);
  state.touchEvent(calendar, event);
  return event;
}

function updateStored(
  state: EmulatorState,
  calendar: CalendarRecord,
  actor: Actor,
  event: StoredEvent,
  body: Record<string, unknown>,
  mode: 'update' | 'patch',
): StoredEvent {
  const before = event.data;
  if (body.eventType !== undefined && body.eventType !== before.eventType) {
    throw apiErrors.invalid('The event type cannot be changed.');
  }
  const candidate = mode === 'patch' ? mergePatch(writableOf(before), body) : body;
  const normalized = normalizeWritable(candidate, { calendar });
  delete normalized.originalStartTime;
  const organizer = before.organizer as { email?: string } | undefined;
  if (
    organizer?.email !== calendar.id &&
    before.guestsCanModify !== true &&
    changesOrganizerFields(before, normalized)
  ) {
    throw apiErrors.forbiddenForNonOrganizer();
  }
  checkServiceAccountAttendees(actor, before, normalized);
  const sequence = nextSequence(
    before.sequence as number,
    body.sequence,
    isSignificantChange(before, normalized),
  );
  event.data = {
    ...normalized,
    creator: before.creator,
    organizer: before.organizer,
    iCalUID: before.iCalUID,
    sequence,
    eventType: before.eventType,
  };
  state.touchEvent(calendar, event);
  if (isRecurring({ ...event, data: before }) && !isRecurring(event)) {
    cancelExceptions(state, calendar, event);
  }
  return event;
}

/** Cancels every exception of a series (when the series is deleted or stops recurring). */
export function cancelExceptions(state: EmulatorState, calendar: CalendarRecord, master: StoredEvent): void {
  for (const e of calendar.events.values()) {
    if (e.recurringEventId === master.id && e.data.status !== 'cancelled') {
      e.data = { ...e.data, status: 'cancelled' };
      state.touchEvent(calendar, e);
    }
  }
}

/** Writes an exception over one instance: only fields that differ from the series are kept. */
export function writeInstance(
  state: EmulatorState,
  calendar: CalendarRecord,
  actor: Actor,
  target: Extract<Target, { kind: 'instance' }>,
  body: Record<string, unknown>,
  mode: 'update' | 'patch',
): StoredEvent {
  const { master, originalStart, key } = target;
  const base = instanceView(calendar, master, originalStart).data;
  const current = instanceView(calendar, master, originalStart, target.exception).data;
  const candidate = mode === 'patch' ? mergePatch(writableOf(current), body) : { ...body };
  delete candidate.recurrence;
  const normalized = normalizeWritable(candidate, { calendar, instance: true });
  checkServiceAccountAttendees(actor, current, normalized);
  const organizer = master.data.organizer as { email?: string } | undefined;
  if (
    organizer?.email !== calendar.id &&
    master.data.guestsCanModify !== true &&
    changesOrganizerFields(current, normalized)
  ) {
    throw apiErrors.forbiddenForNonOrganizer();
  }
  const overrides: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(normalized)) {
    if (JSON.stringify(value) !== JSON.stringify(base[field])) {
      overrides[field] = value;
    }
  }
  for (const field of Object.keys(writableOf(base))) {
    if (!(field in normalized) && field !== 'originalStartTime') {
      overrides[field] = null;
    }
  }
  overrides.sequence = nextSequence(
    current.sequence as number,
    body.sequence,
    isSignificantChange(current, normalized),
  );
  overrides.originalStartTime = originalStart;
  let exception = target.exception;
  if (!exception) {
    exception = {
      id: `${master.id}_${key}`,
      data: overrides,
      created: state.now(),
      stamp: 0,
      modSeq: 0,
      order: master.order,
      recurringEventId: master.id,
      instanceKey: key,
    };
    calendar.events.set(exception.id, exception);
  } else {
    exception.data = overrides;
  }
  state.touchEvent(calendar, exception);
  return exception;
}

export function writeTarget(
  state: EmulatorState,
  calendar: CalendarRecord,
  actor: Actor,
  target: Target,
  body: Record<string, unknown>,
  mode: 'update' | 'patch',
): void {
  if (target.kind === 'stored') {
    updateStored(state, calendar, actor, target.event, body, mode);
  } else {
    writeInstance(state, calendar, actor, target, body, mode);
  }
}
