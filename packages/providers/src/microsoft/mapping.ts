/**
 * Graph events and calendars ↔ Calgate's shapes. Reads carry over what Calgate's vocabulary
 * has (Google-shaped); writes send Graph's own properties only (`subject`, `body`, `showAs` …),
 * and refuse what Outlook cannot store rather than dropping it.
 */
import {
  CalgateError,
  dateInZone,
  err,
  formatInstant,
  naiveMs,
  ok,
  parseDate,
  parseDateTimeFields,
  type Result,
  toLocal,
} from '@calgate/core';
import type {
  CalendarEvent,
  CalendarInfo,
  EventAttendee,
  EventDateTime,
  EventInput,
  EventPatch,
  Visibility,
} from '../types.ts';
import type {
  GraphAttendee,
  GraphCalendar,
  GraphCalendarColor,
  GraphEvent,
  GraphEventType,
  GraphMailboxSettings,
  GraphResponse,
  GraphSensitivity,
  GraphShowAs,
  GraphUser,
} from './graph-types.ts';
import {
  type GraphPatternedRecurrence,
  type SeriesStart,
  toPatternedRecurrence,
  toRecurrenceLines,
} from './recurrence.ts';
import {
  type GraphDateTimeTimeZone,
  readGraphTime,
  toEventDate,
  toEventDateTime,
  toGraphTime,
  toTimestamp,
} from './times.ts';
import { ianaZoneFor } from './zones.ts';

/** Ask Graph for bodies as plain text (the `Prefer` header every event read sends). */
export const PREFER_TEXT_BODY = 'outlook.body-content-type="text"';

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

const SENSITIVITY_OF: Record<Visibility, GraphSensitivity> = {
  default: 'normal',
  public: 'normal',
  private: 'private',
  confidential: 'confidential',
};

/** Outlook's preset calendar colours (the `color` names), for calendars without a `hexColor`. */
const PRESET_COLORS: Partial<Record<GraphCalendarColor, string>> = {
  lightBlue: '#a6d1f5',
  lightGreen: '#87d28e',
  lightOrange: '#fcab73',
  lightGray: '#c0c0c0',
  lightYellow: '#f4d07a',
  lightTeal: '#6cd6dd',
  lightPink: '#f8a1d2',
  lightBrown: '#cda66a',
  lightRed: '#f88c9b',
};

const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;
const text = (value: string | null | undefined): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** A numeric character reference's character; U+FFFD for one that names no character. */
const fromCode = (code: number): string =>
  Number.isSafeInteger(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
    ? String.fromCodePoint(code)
    : '\ufffd';

/** What an HTML body says as text (Graph answers HTML when the text preference was not honoured). */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6])>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, code: string) => fromCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => fromCode(Number.parseInt(code, 16)))
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The account's address: `/me.mail`, else its `userPrincipalName` (accounts without a mailbox address). */
export function accountEmailOf(user: GraphUser): string | undefined {
  return text(user.mail?.trim()) ?? text(user.userPrincipalName?.trim());
}

/** The account's zone from `/me/mailboxSettings` (calendars carry none); UTC when it has none Calgate can read. */
export function mailboxZoneOf(settings: GraphMailboxSettings | null | undefined): string {
  const zone = settings?.timeZone ? ianaZoneFor(settings.timeZone) : undefined;
  return zone?.ok ? zone.value : 'UTC';
}

/** A calendar's role for Calgate: `canEdit: false` is read-only whatever the key's grant says. */
function accessRoleOf(calendar: GraphCalendar, accountEmail: string | undefined): CalendarInfo['accessRole'] {
  if (calendar.canEdit !== true) {
    return 'reader';
  }
  const owner = calendar.owner?.address?.toLowerCase();
  return owner === undefined || accountEmail === undefined || owner === accountEmail.toLowerCase()
    ? 'owner'
    : 'writer';
}

/** A calendar as discovered on a Microsoft connection, with Outlook's colour when it has one. */
export interface MicrosoftCalendarInfo extends CalendarInfo {
  backgroundColor?: string;
}

export function toCalendarInfo(
  calendar: GraphCalendar,
  mailboxZone: string,
  accountEmail: string | undefined,
): MicrosoftCalendarInfo {
  const info: MicrosoftCalendarInfo = {
    externalId: calendar.id ?? '',
    summary: text(calendar.name) ?? calendar.id ?? '',
    timeZone: mailboxZone,
    primary: calendar.isDefaultCalendar === true,
    accessRole: accessRoleOf(calendar, accountEmail),
  };
  const hex = text(calendar.hexColor);
  const color = hex ?? (present(calendar.color) ? PRESET_COLORS[calendar.color] : undefined);
  if (color !== undefined) {
    info.backgroundColor = color.toLowerCase();
  }
  return info;
}

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
  if (event.attendees) {
    out.attendees = event.attendees.map((attendee) => attendeeOf(attendee, accountEmail));
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

/** The body of a Graph create or update: Graph's own properties, only those the caller gave. */
export interface GraphEventBody {
  subject?: string;
  body?: { contentType: 'text'; content: string };
  location?: { displayName: string };
  start?: GraphDateTimeTimeZone;
  end?: GraphDateTimeTimeZone;
  isAllDay?: boolean;
  recurrence?: GraphPatternedRecurrence | null;
  attendees?: { emailAddress: { address: string; name?: string }; type: 'required' | 'optional' }[];
  isReminderOn?: boolean;
  reminderMinutesBeforeStart?: number;
  showAs?: GraphShowAs;
  sensitivity?: GraphSensitivity;
  /** Makes a create idempotent: Graph answers the first event again for a repeated id. */
  transactionId?: string;
}

export interface WriteContext {
  /** The calendar's zone (the mailbox's): local times and all-day dates are read in it. */
  calendarZone: string;
  /**
   * The event's current start, for a patch that sets `recurrence` without a new start (the
   * series' pattern is read from its start).
   */
  currentStart?: EventDateTime;
}

function refusal(message: string): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message));
}

function seriesStartOf(value: EventDateTime, calendarZone: string): Result<SeriesStart, CalgateError> {
  const time = toGraphTime(value, calendarZone);
  if (!time.ok) {
    return time;
  }
  const fields = parseDateTimeFields(time.value.value.dateTime, true);
  if (!fields.ok) {
    return fields;
  }
  return ok({ local: fields.value.local, timeZone: time.value.zone, allDay: time.value.allDay });
}

/**
 * The Graph body for a create (`EventInput`) or an update (`EventPatch`). A client-chosen id
 * becomes Graph's `transactionId` (Graph has no client ids); `colorId` and statuses other than
 * `confirmed` are refused (Outlook colours events by category, and cancels through its own call).
 */
export function toGraphEvent(
  input: EventInput | EventPatch,
  context: WriteContext,
): Result<GraphEventBody, CalgateError> {
  const body: GraphEventBody = {};
  if (input.colorId !== undefined) {
    return refusal(
      'Outlook calendars do not take colorId (Outlook colours events by category); leave colorId out.',
    );
  }
  if (input.status !== undefined && input.status !== 'confirmed') {
    return refusal(
      input.status === 'cancelled'
        ? "Outlook events are not cancelled by setting status; delete the event (Outlook tells its attendees) instead of setting status 'cancelled'."
        : `Outlook events have no status '${input.status}'; leave status out (or 'confirmed').`,
    );
  }
  if (input.summary !== undefined) {
    body.subject = input.summary;
  }
  if (input.description !== undefined) {
    body.body = { contentType: 'text', content: input.description };
  }
  if (input.location !== undefined) {
    body.location = { displayName: input.location };
  }
  const times = [input.start, input.end].filter(present);
  const kinds = new Set(times.map((time) => time.date !== undefined));
  if (kinds.size > 1) {
    return refusal(
      "start and end must both be dates (an all-day event) or both date-times; give 'date' for both or 'dateTime' for both.",
    );
  }
  for (const key of ['start', 'end'] as const) {
    const value = input[key];
    if (value === undefined) {
      continue;
    }
    const time = toGraphTime(value, context.calendarZone);
    if (!time.ok) {
      return time;
    }
    body[key] = time.value.value;
    body.isAllDay = time.value.allDay;
  }
  if (input.recurrence !== undefined) {
    if (input.recurrence.length === 0) {
      body.recurrence = null;
    } else {
      const from = input.start ?? context.currentStart;
      if (from === undefined) {
        return refusal('A recurrence needs the series start; give start with recurrence.');
      }
      const start = seriesStartOf(from, context.calendarZone);
      if (!start.ok) {
        return start;
      }
      const recurrence = toPatternedRecurrence(input.recurrence, start.value);
      if (!recurrence.ok) {
        return recurrence;
      }
      body.recurrence = recurrence.value;
    }
  }
  if (input.attendees !== undefined) {
    body.attendees = input.attendees.map((attendee) => ({
      emailAddress: {
        address: attendee.email,
        ...(attendee.displayName === undefined ? {} : { name: attendee.displayName }),
      },
      type: attendee.optional === true ? 'optional' : 'required',
    }));
  }
  if (input.reminders !== undefined) {
    const [first, ...rest] = input.reminders.overrides ?? [];
    if (rest.length > 0) {
      return refusal('Outlook keeps one reminder per event; give at most one reminder override.');
    }
    if (first !== undefined) {
      body.isReminderOn = true;
      body.reminderMinutesBeforeStart = first.minutes;
    } else if (!input.reminders.useDefault) {
      body.isReminderOn = false;
    }
  }
  if (input.transparency !== undefined) {
    body.showAs = input.transparency === 'transparent' ? 'free' : 'busy';
  }
  if (input.visibility !== undefined) {
    body.sensitivity = SENSITIVITY_OF[input.visibility];
  }
  if ('id' in input && input.id !== undefined) {
    body.transactionId = input.id;
  }
  return ok(body);
}
