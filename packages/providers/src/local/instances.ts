/** Single instances of a series written as exception rows, and the small write helpers. */
import { CalgateError } from '@calgate/core';
import type { LocalEventRow, NewLocalEvent } from '@calgate/store';
import type { CalendarEvent, CalendarRef, EventPatch } from '../types.ts';
import { newEtag } from './rows.ts';
import { resolveTimes } from './times.ts';

/** A generated (unmodified) instance of a series, with the master it comes from. */
export interface Instance {
  master: LocalEventRow;
  event: CalendarEvent;
  originalStart: Date;
}

export function changed(eventId: string, detail: string): CalgateError {
  return new CalgateError('precondition_failed', `Event '${eventId}' ${detail}`, { context: { eventId } });
}

export function alreadyDeleted(eventId: string): CalgateError {
  return new CalgateError('not_found', `Event '${eventId}' was already deleted.`, {
    context: { eventId, alreadyDeleted: true },
  });
}

/** The stored fields a patch changes (absent fields stay). */
export function patchFields(patch: EventPatch) {
  return {
    ...(patch.summary === undefined ? {} : { summary: patch.summary }),
    ...(patch.description === undefined ? {} : { description: patch.description }),
    ...(patch.location === undefined ? {} : { location: patch.location }),
    ...(patch.attendees === undefined ? {} : { attendees: patch.attendees }),
    ...(patch.reminders === undefined ? {} : { reminders: patch.reminders }),
    ...(patch.transparency === undefined ? {} : { transparency: patch.transparency }),
    ...(patch.visibility === undefined ? {} : { visibility: patch.visibility }),
    ...(patch.colorId === undefined ? {} : { colorId: patch.colorId }),
    ...(patch.status === undefined ? {} : { status: patch.status }),
  };
}

/** The exception row that replaces a generated instance: the instance's fields, the patch applied. */
export function exceptionRow(calendar: CalendarRef, instance: Instance, patch: EventPatch): NewLocalEvent {
  const { master, event } = instance;
  const times = resolveTimes(patch.start ?? event.start, patch.end ?? event.end, [], calendar.timeZone);
  return {
    calendarId: calendar.id,
    id: event.id,
    iCalUid: master.iCalUid,
    status: master.status,
    summary: master.summary,
    description: master.description,
    location: master.location,
    ...times,
    recurrence: [],
    recurringEventId: master.id,
    originalStartTime: instance.originalStart,
    attendees: master.attendees,
    reminders: master.reminders,
    transparency: master.transparency,
    visibility: master.visibility,
    colorId: master.colorId,
    ...patchFields(patch),
    sequence: master.sequence + 1,
    etag: newEtag(),
  };
}
