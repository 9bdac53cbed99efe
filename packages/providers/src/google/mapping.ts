/**
 * Google Calendar resources to Calgate's shapes and back. The shapes already follow Google's,
 * so this is mostly dropping nulls and unknown values and copying the fields we carry.
 */
import { CalgateError, isValidTimeZone } from '@calgate/core';
import type { calendar_v3 } from '@googleapis/calendar';
import type {
  CalendarEvent,
  CalendarInfo,
  ColorDefinition,
  ColorPalette,
  EventAttendee,
  EventDateTime,
  EventInput,
  EventPatch,
  EventReminders,
  EventStatus,
  NewCalendar,
  Transparency,
  Visibility,
} from '../types.ts';

type GoogleEvent = calendar_v3.Schema$Event;

const STATUSES = new Set<EventStatus>(['confirmed', 'tentative', 'cancelled']);
const TRANSPARENCIES = new Set<Transparency>(['opaque', 'transparent']);
const VISIBILITIES = new Set<Visibility>(['default', 'public', 'private', 'confidential']);
const RESPONSES = new Set(['needsAction', 'declined', 'tentative', 'accepted']);
const ACCESS_ROLES = new Set<CalendarInfo['accessRole']>(['owner', 'writer', 'reader', 'freeBusyReader']);

const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

function member<T extends string>(set: Set<T>, value: string | null | undefined): T | undefined {
  return present(value) && set.has(value as T) ? (value as T) : undefined;
}

function dateTime(value: calendar_v3.Schema$EventDateTime | undefined | null): EventDateTime {
  const out: EventDateTime = {};
  if (present(value?.dateTime)) {
    out.dateTime = value.dateTime;
  }
  if (present(value?.date)) {
    out.date = value.date;
  }
  if (present(value?.timeZone)) {
    out.timeZone = value.timeZone;
  }
  return out;
}

function attendee(value: calendar_v3.Schema$EventAttendee): EventAttendee {
  const out: EventAttendee = { email: value.email ?? '' };
  if (present(value.displayName)) {
    out.displayName = value.displayName;
  }
  if (present(value.optional)) {
    out.optional = value.optional;
  }
  if (present(value.organizer)) {
    out.organizer = value.organizer;
  }
  if (present(value.self)) {
    out.self = value.self;
  }
  const response = member(RESPONSES, value.responseStatus);
  if (response !== undefined) {
    out.responseStatus = response as EventAttendee['responseStatus'];
  }
  if (present(value.comment)) {
    out.comment = value.comment;
  }
  return out;
}

function reminders(value: GoogleEvent['reminders']): EventReminders {
  const out: EventReminders = { useDefault: value?.useDefault ?? false };
  const overrides = (value?.overrides ?? []).flatMap(
    (o): NonNullable<EventReminders['overrides']> =>
      (o.method === 'email' || o.method === 'popup') && typeof o.minutes === 'number'
        ? [{ method: o.method, minutes: o.minutes }]
        : [],
  );
  if (value?.overrides) {
    out.overrides = overrides;
  }
  return out;
}

/** A Google event as Calgate carries it. Cancelled entries may lack start/end; they get `{}`. */
export function toCalendarEvent(event: GoogleEvent): CalendarEvent {
  const out: CalendarEvent = {
    id: event.id ?? '',
    status: member(STATUSES, event.status) ?? 'confirmed',
    start: dateTime(event.start),
    end: dateTime(event.end),
  };
  const strings = [
    'summary',
    'description',
    'location',
    'recurringEventId',
    'colorId',
    'htmlLink',
    'iCalUID',
    'etag',
    'created',
    'updated',
  ] as const;
  for (const key of strings) {
    const value = event[key];
    if (present(value)) {
      out[key] = value;
    }
  }
  if (event.recurrence && event.recurrence.length > 0) {
    out.recurrence = [...event.recurrence];
  }
  if (event.originalStartTime) {
    out.originalStartTime = dateTime(event.originalStartTime);
  }
  if (event.attendees) {
    out.attendees = event.attendees.map(attendee);
  }
  if (event.organizer) {
    const organizer: NonNullable<CalendarEvent['organizer']> = {};
    if (present(event.organizer.email)) {
      organizer.email = event.organizer.email;
    }
    if (present(event.organizer.displayName)) {
      organizer.displayName = event.organizer.displayName;
    }
    if (present(event.organizer.self)) {
      organizer.self = event.organizer.self;
    }
    out.organizer = organizer;
  }
  if (event.reminders) {
    out.reminders = reminders(event.reminders);
  }
  const transparency = member(TRANSPARENCIES, event.transparency);
  if (transparency !== undefined) {
    out.transparency = transparency;
  }
  const visibility = member(VISIBILITIES, event.visibility);
  if (visibility !== undefined) {
    out.visibility = visibility;
  }
  if (typeof event.sequence === 'number') {
    out.sequence = event.sequence;
  }
  return out;
}

/** The request body for events.insert / events.patch: only the fields the caller gave. */
export function toGoogleEvent(input: EventInput | EventPatch): GoogleEvent {
  const body: GoogleEvent = {};
  const keys = [
    'summary',
    'description',
    'location',
    'start',
    'end',
    'recurrence',
    'attendees',
    'reminders',
    'transparency',
    'visibility',
    'colorId',
    'status',
  ] as const;
  for (const key of keys) {
    if (input[key] !== undefined) {
      (body as Record<string, unknown>)[key] = input[key];
    }
  }
  if ('id' in input && input.id !== undefined) {
    body.id = input.id;
  }
  return body;
}

export function toCalendarInfo(
  calendar: calendar_v3.Schema$Calendar | calendar_v3.Schema$CalendarListEntry,
  accessRole: CalendarInfo['accessRole'],
  primary: boolean,
): CalendarInfo {
  const entry = calendar as calendar_v3.Schema$CalendarListEntry;
  const info: CalendarInfo = {
    externalId: calendar.id ?? '',
    summary: entry.summaryOverride ?? calendar.summary ?? calendar.id ?? '',
    timeZone: calendar.timeZone ?? 'UTC',
    primary,
    accessRole,
  };
  if (present(calendar.description)) {
    info.description = calendar.description;
  }
  return info;
}

export function accessRoleOf(value: string | null | undefined): CalendarInfo['accessRole'] | undefined {
  return member(ACCESS_ROLES, value);
}

function colorMap(
  entries: Record<string, calendar_v3.Schema$ColorDefinition> | null | undefined,
): Record<string, ColorDefinition> {
  const out: Record<string, ColorDefinition> = {};
  for (const [id, color] of Object.entries(entries ?? {})) {
    if (present(color.background) && present(color.foreground)) {
      out[id] = { background: color.background, foreground: color.foreground };
    }
  }
  return out;
}

export function toColorPalette(colors: calendar_v3.Schema$Colors): ColorPalette {
  return { event: colorMap(colors.event), calendar: colorMap(colors.calendar) };
}

/** The request body for calendars.insert, after checking what Google would refuse. */
export function toGoogleCalendar(input: NewCalendar): calendar_v3.Schema$Calendar {
  if (input.summary.trim() === '') {
    throw new CalgateError('invalid_argument', 'summary is empty; give the new calendar a name.');
  }
  if (input.timeZone !== undefined && !isValidTimeZone(input.timeZone)) {
    throw new CalgateError(
      'invalid_argument',
      `timeZone '${input.timeZone}' is not an IANA time zone (e.g. Europe/Berlin).`,
    );
  }
  const body: calendar_v3.Schema$Calendar = { summary: input.summary };
  if (input.description !== undefined) {
    body.description = input.description;
  }
  if (input.timeZone !== undefined) {
    body.timeZone = input.timeZone;
  }
  return body;
}
