/**
 * Event resources as Google returns them: read-only fields filled in, `self` flags for the
 * calendar being read, times in the response zone, and the reduced shapes Google sends for
 * cancelled exceptions, for callers who may only see free/busy and for readers of private events.
 */
import { type AccessRole, type CalendarRecord, type EventDateTime, etagOf, rfc3339Millis } from '../state.ts';
import { formatEventTime } from './times.ts';
import type { EventView } from './views.ts';

export interface RenderOptions {
  /** The `timeZone` query parameter. */
  responseZone?: string;
  maxAttendees?: number;
  role: AccessRole;
}

interface Person {
  email?: string;
  displayName?: string;
  self?: boolean;
}

function person(value: unknown, calendarId: string): Person | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const p = { ...(value as Person) };
  delete p.self;
  if (p.email === calendarId) {
    p.self = true;
  }
  return p;
}

export function htmlLink(eventId: string, calendarId: string): string {
  const eid = Buffer.from(`${eventId} ${calendarId}`).toString('base64').replace(/=+$/, '');
  return `https://www.google.com/calendar/event?eid=${eid}`;
}

function times(view: EventView, calendar: CalendarRecord, zone: string | undefined) {
  const out: Record<string, unknown> = {
    start: formatEventTime(view.data.start as EventDateTime, calendar.timeZone, zone),
    end: formatEventTime(view.data.end as EventDateTime, calendar.timeZone, zone),
  };
  if (view.data.originalStartTime !== undefined) {
    out.originalStartTime = formatEventTime(
      view.data.originalStartTime as EventDateTime,
      calendar.timeZone,
      zone,
    );
  }
  return out;
}

export function renderView(
  calendar: CalendarRecord,
  view: EventView,
  options: RenderOptions,
): Record<string, unknown> {
  const head: Record<string, unknown> = { kind: 'calendar#event', etag: etagOf(view.stamp), id: view.id };
  const instanceRefs = (): Record<string, unknown> =>
    view.recurringEventId === undefined
      ? {}
      : {
          recurringEventId: view.recurringEventId,
          originalStartTime: formatEventTime(
            view.data.originalStartTime as EventDateTime,
            calendar.timeZone,
            options.responseZone,
          ),
        };
  // A cancelled instance is only guaranteed its id, recurringEventId and originalStartTime.
  if (view.kind === 'instance' && view.cancelled) {
    return { ...head, status: 'cancelled', ...instanceRefs() };
  }
  // A private event's details are for those who may change the calendar; readers see its times.
  if (
    options.role === 'freeBusyReader' ||
    (options.role === 'reader' && view.data.visibility === 'private')
  ) {
    return {
      ...head,
      status: view.data.status,
      ...times(view, calendar, options.responseZone),
      ...instanceRefs(),
    };
  }
  const {
    start: _s,
    end: _e,
    originalStartTime: _o,
    creator,
    organizer,
    attendees,
    status,
    ...rest
  } = view.data;
  const out: Record<string, unknown> = {
    ...head,
    status,
    htmlLink: htmlLink(view.id, calendar.id),
    created: rfc3339Millis(view.created),
    updated: rfc3339Millis(Math.floor(view.stamp / 1000)),
    ...rest,
    creator: person(creator, calendar.id),
    organizer: person(organizer, calendar.id),
    ...times(view, calendar, options.responseZone),
  };
  if (view.recurringEventId !== undefined) {
    out.recurringEventId = view.recurringEventId;
  }
  if (Array.isArray(attendees) && attendees.length > 0) {
    const organizerEmail = (organizer as Person | undefined)?.email;
    let list = (attendees as Person[]).map((a) => {
      const copy: Record<string, unknown> = { ...a };
      if (a.email === organizerEmail) {
        copy.organizer = true;
      }
      if (a.email === calendar.id) {
        copy.self = true;
      }
      return copy;
    });
    if (options.maxAttendees !== undefined && list.length > options.maxAttendees) {
      list = list.filter((a) => a.self === true);
      out.attendeesOmitted = true;
    }
    out.attendees = list;
  }
  return out;
}
