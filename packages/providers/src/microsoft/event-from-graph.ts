/**
 * A Graph event as Calgate carries it: times in the event's own zone, attendees with the
 * account's own entry marked `self` and carrying its answer, a series master's pattern as RRULE
 * lines, an occurrence's series and original start, and what a provider needs beside (type,
 * hidden, join URL, zone; an all-day event's own zone through `allDayZoneOf`).
 */
import {
  type CalgateError,
  dateInZone,
  formatInstant,
  naiveMs,
  ok,
  parseDate,
  parseDateTimeFields,
  type Result,
  toLocal,
} from '@calgate/core';
import type { CalendarEvent, EventAttendee, EventDateTime, Visibility } from '../types.ts';
import type {
  GraphAttendee,
  GraphEvent,
  GraphEventType,
  GraphResponse,
  GraphSensitivity,
} from './graph-types.ts';
import { htmlToText, present, text } from './graph-values.ts';
import { type SeriesStart, toRecurrenceLines } from './recurrence.ts';
import { readGraphTime, toEventDate, toEventDateTime, toTimestamp } from './times.ts';
import { ianaZoneFor } from './zones.ts';

const RESPONSES: Record<GraphResponse, NonNullable<EventAttendee['responseStatus']>> = {
  none: 'needsAction',
  notResponded: 'needsAction',
  organizer: 'accepted',
  accepted: 'accepted',
  tentativelyAccepted: 'tentative',
  declined: 'declined',
};

const VISIBILITY_OF: Record<GraphSensitivity, Visibility> = {
  normal: 'default',
  personal: 'private',
  private: 'private',
  confidential: 'confidential',
};

function attendeeOf(attendee: GraphAttendee, accountEmail: string | undefined): EventAttendee {
  const email = attendee.emailAddress?.address ?? '';
  const out: EventAttendee = { email };
  const name = text(attendee.emailAddress?.name);
  if (name !== undefined && name !== email) {
    out.displayName = name;
  }
  if (attendee.type === 'optional') {
    out.optional = true;
  }
  const response = attendee.status?.response;
  if (response === 'organizer') {
    out.organizer = true;
  }
  if (accountEmail !== undefined && email.toLowerCase() === accountEmail.toLowerCase()) {
    out.self = true;
  }
  out.responseStatus = present(response) ? (RESPONSES[response] ?? 'needsAction') : 'needsAction';
  return out;
}

/** The mailbox's own answer (Graph's `responseStatus.response`) as its attendee entry says it. */
const OWN_RESPONSES: Partial<Record<GraphResponse, NonNullable<EventAttendee['responseStatus']>>> = {
  organizer: 'accepted',
  accepted: 'accepted',
  tentativelyAccepted: 'tentative',
  declined: 'declined',
  notResponded: 'needsAction',
};

/**
 * The account's own answer on its attendee entry. Graph keeps it in `responseStatus`, not in the
 * attendee list (an invitee's copy lists everyone as the organizer sent them, or not the account
 * at all when it was invited through a list): an answer the account gave (accepted, tentative,
 * declined) adds its entry when missing, so that a declined invitation reads as Google's does
 * (the `self` attendee declined: free time).
 */
function withOwnResponse(
  attendees: EventAttendee[],
  response: GraphResponse | null | undefined,
  accountEmail: string | undefined,
): EventAttendee[] {
  const status = present(response) ? OWN_RESPONSES[response] : undefined;
  if (accountEmail === undefined || status === undefined) {
    return attendees;
  }
  const self = attendees.find((attendee) => attendee.self === true);
  if (self !== undefined) {
    self.responseStatus = status;
    return attendees;
  }
  return response === 'accepted' || response === 'tentativelyAccepted' || response === 'declined'
    ? [...attendees, { email: accountEmail, self: true, responseStatus: status }]
    : attendees;
}

/**
 * The zone whose midnights an all-day Outlook event's dates are (its own zone: Graph keeps an
 * all-day event midnight to midnight there, whatever the calendar's or the mailbox's zone), for
 * events this module made. Calgate's (Google's) shape has no place for it: `{date}` alone.
 */
const allDayZones = new WeakMap<CalendarEvent, string>();

/** The own zone of an all-day event mapped from Graph (undefined: a timed event, or not from Graph). */
export function allDayZoneOf(event: CalendarEvent): string | undefined {
  return allDayZones.get(event);
}

/** What the mapped event leaves out of Calgate's shape but a provider needs. */
export interface GraphEventFacts {
  event: CalendarEvent;
  type: GraphEventType;
  /** Cancelled by the organizer: listings hide it (deleted occurrences simply vanish). */
  hidden: boolean;
  /** The online meeting's join URL (Teams, Skype), when there is one. */
  joinUrl?: string;
  /** The event's own IANA zone (its original start zone), when Graph names one Calgate knows. */
  zone?: string;
}

/** The event's own zone for its start (or end: a flight may end in another zone), when Calgate knows it. */
function ownZoneOf(name: string | null | undefined): string | undefined {
  if (!name) {
    return undefined;
  }
  const zone = ianaZoneFor(name);
  return zone.ok ? zone.value : undefined;
}

/** An occurrence's start by the pattern (`originalStart`, a DateTimeOffset) in the event's zone. */
function originalStartOf(event: GraphEvent, zone: string | undefined): EventDateTime | undefined {
  const fields =
    typeof event.originalStart === 'string' ? parseDateTimeFields(event.originalStart, true) : undefined;
  if (fields === undefined || !fields.ok) {
    return undefined;
  }
  const instant = naiveMs(fields.value.local) - (fields.value.offsetMinutes ?? 0) * 60_000;
  const shown = zone ?? 'UTC';
  return event.isAllDay === true
    ? { date: dateInZone(instant, shown) }
    : { dateTime: formatInstant(instant, shown), timeZone: shown };
}

/**
 * A Graph event as Calgate carries it. `accountEmail` marks the account's own attendee entry
 * `self`. Times are written in the event's own zone when Graph names it, else in the zone Graph
 * answered in; a series master's pattern becomes RRULE lines.
 */
export function toCalendarEvent(
  event: GraphEvent,
  accountEmail?: string,
): Result<GraphEventFacts, CalgateError> {
  const zone = ownZoneOf(event.originalStartTimeZone);
  const endZone = ownZoneOf(event.originalEndTimeZone) ?? zone;
  const allDay = event.isAllDay === true;
  const start = allDay ? toEventDate(event.start, zone) : toEventDateTime(event.start, zone);
  if (!start.ok) {
    return start;
  }
  const end = allDay ? toEventDate(event.end, zone) : toEventDateTime(event.end, endZone);
  if (!end.ok) {
    return end;
  }
  const type: GraphEventType = event.type ?? 'singleInstance';
  const out: CalendarEvent = {
    id: event.id ?? '',
    status: event.isCancelled === true ? 'cancelled' : 'confirmed',
    start: start.value,
    end: end.value,
  };
  const subject = text(event.subject);
  if (subject !== undefined) {
    out.summary = subject;
  }
  const body = event.body?.content;
  if (typeof body === 'string' && body.trim() !== '') {
    out.description = event.body?.contentType === 'html' ? htmlToText(body) : body;
  }
  const locations = (event.locations ?? []).map((l) => text(l.displayName)).filter(present);
  const location =
    text(event.location?.displayName) ?? (locations.length > 0 ? locations.join('; ') : undefined);
  if (location !== undefined) {
    out.location = location;
  }
  if (type === 'seriesMaster' && event.recurrence) {
    const read = readGraphTime(event.start);
    if (!read.ok) {
      return read;
    }
    const seriesZone = zone ?? read.value.zone;
    const day = start.value.date === undefined ? undefined : parseDate(start.value.date);
    const seriesStart: SeriesStart = {
      local:
        day?.ok === true
          ? { ...day.value, hour: 0, minute: 0, second: 0 }
          : toLocal(read.value.instant, seriesZone),
      timeZone: seriesZone,
      allDay,
    };
    const lines = toRecurrenceLines(event.recurrence, seriesStart);
    if (!lines.ok) {
      return lines;
    }
    out.recurrence = lines.value;
  }
  if ((type === 'occurrence' || type === 'exception') && text(event.seriesMasterId) !== undefined) {
    out.recurringEventId = event.seriesMasterId as string;
    const original = originalStartOf(event, zone);
    if (original !== undefined) {
      out.originalStartTime = original;
    }
  }
  if (event.attendees || event.responseStatus?.response) {
    const attendees = withOwnResponse(
      (event.attendees ?? []).map((attendee) => attendeeOf(attendee, accountEmail)),
      event.responseStatus?.response,
      accountEmail,
    );
    if (event.attendees || attendees.length > 0) {
      out.attendees = attendees;
    }
  }
  const organizer = event.organizer?.emailAddress;
  if (organizer) {
    const shape: NonNullable<CalendarEvent['organizer']> = {};
    const email = text(organizer.address);
    if (email !== undefined) {
      shape.email = email;
    }
    const name = text(organizer.name);
    if (name !== undefined && name !== email) {
      shape.displayName = name;
    }
    if (present(event.isOrganizer)) {
      shape.self = event.isOrganizer;
    }
    out.organizer = shape;
  }
  if (present(event.isReminderOn)) {
    out.reminders =
      event.isReminderOn && typeof event.reminderMinutesBeforeStart === 'number'
        ? { useDefault: false, overrides: [{ method: 'popup', minutes: event.reminderMinutesBeforeStart }] }
        : { useDefault: false, overrides: [] };
  }
  if (present(event.showAs)) {
    out.transparency = event.showAs === 'free' ? 'transparent' : 'opaque';
  }
  if (present(event.sensitivity) && VISIBILITY_OF[event.sensitivity] !== undefined) {
    out.visibility = VISIBILITY_OF[event.sensitivity];
  }
  const link = text(event.webLink);
  if (link !== undefined) {
    out.htmlLink = link;
  }
  const uid = text(event.iCalUId);
  if (uid !== undefined) {
    out.iCalUID = uid;
  }
  const etag = text(event['@odata.etag']) ?? (text(event.changeKey) ? `W/"${event.changeKey}"` : undefined);
  if (etag !== undefined) {
    out.etag = etag;
  }
  const created = toTimestamp(event.createdDateTime);
  if (created !== undefined) {
    out.created = created;
  }
  const updated = toTimestamp(event.lastModifiedDateTime);
  if (updated !== undefined) {
    out.updated = updated;
  }
  if (allDay) {
    const own = zone ?? readGraphTime(event.start);
    if (typeof own === 'string') {
      allDayZones.set(out, own);
    } else if (own.ok) {
      allDayZones.set(out, own.value.zone);
    }
  }
  const facts: GraphEventFacts = { event: out, type, hidden: event.isCancelled === true };
  const joinUrl = text(event.onlineMeeting?.joinUrl) ?? text(event.onlineMeetingUrl);
  if (joinUrl !== undefined) {
    facts.joinUrl = joinUrl;
  }
  if (zone !== undefined) {
    facts.zone = zone;
  }
  return ok(facts);
}
