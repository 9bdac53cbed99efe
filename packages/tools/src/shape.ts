import type { CalendarEvent } from '@calgate/providers';
import { EVENT_EXTRA_FIELDS, type EventOut } from './schemas.ts';

// Google's field order: id, status, summary, description, location, start, end, then the rest.
const [description, location, ...rest] = EVENT_EXTRA_FIELDS;
/** The fields of an event the output schema knows, in the order toEventOut writes them. */
export const EVENT_OUT_FIELDS = ['id', 'status', 'summary', description, location, 'start', 'end', ...rest];

/** A value worth writing: present, and not the default that says nothing. */
function given(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Tags an upstream event with its Calgate calendar id, keeping the fields the output schema knows
 * (EVENT_OUT_FIELDS, in that order) and leaving out absent ones and the defaults
 * (transparency 'opaque', visibility 'default') to keep results small for agents. Written field by
 * field: listings call this for every event, and named reads cost less than looked-up keys.
 */
export function toEventOut(calendarId: string, event: CalendarEvent): EventOut {
  const out: Partial<EventOut> & { calendarId: string } = { calendarId };
  if (given(event.id)) {
    out.id = event.id;
  }
  if (given(event.status)) {
    out.status = event.status;
  }
  if (given(event.summary)) {
    out.summary = event.summary;
  }
  if (given(event.description)) {
    out.description = event.description;
  }
  if (given(event.location)) {
    out.location = event.location;
  }
  if (given(event.start)) {
    out.start = event.start;
  }
  if (given(event.end)) {
    out.end = event.end;
  }
  if (given(event.recurrence)) {
    out.recurrence = event.recurrence;
  }
  if (given(event.recurringEventId)) {
    out.recurringEventId = event.recurringEventId;
  }
  if (given(event.originalStartTime)) {
    out.originalStartTime = event.originalStartTime;
  }
  if (given(event.attendees)) {
    out.attendees = event.attendees;
  }
  if (given(event.organizer)) {
    out.organizer = event.organizer;
  }
  if (given(event.reminders)) {
    out.reminders = event.reminders;
  }
  if (given(event.transparency) && event.transparency !== 'opaque') {
    out.transparency = event.transparency;
  }
  if (given(event.visibility) && event.visibility !== 'default') {
    out.visibility = event.visibility;
  }
  if (given(event.colorId)) {
    out.colorId = event.colorId;
  }
  if (given(event.htmlLink)) {
    out.htmlLink = event.htmlLink;
  }
  if (given(event.updated)) {
    out.updated = event.updated;
  }
  return out as EventOut;
}
