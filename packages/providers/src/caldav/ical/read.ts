/**
 * Reading iCalendar text (ical.js parses it) into VEVENT resources grouped by UID, and one
 * VEVENT's properties into Calgate's event fields.
 */
import { CalgateError, epochDay, formatDate, isoInstant, localFromNaiveMs, MS_PER_DAY } from '@calgate/core';
import ICAL from 'ical.js';
import type {
  CalendarEvent,
  EventAttendee,
  EventDateTime,
  EventReminders,
  EventStatus,
  Visibility,
} from '../../types.ts';
import { formatInZone, UTC_ZONE, type Zone, ZoneTable } from './zones.ts';

/** One calendar object resource's events: a master and its RECURRENCE-ID overrides (one UID). */
export interface IcsResource {
  uid: string;
  /** The VEVENT without RECURRENCE-ID (absent when a resource holds only overrides). */
  master: ICAL.Component | undefined;
  overrides: ICAL.Component[];
  zones: ZoneTable;
}

export interface ParsedCalendar {
  calendar: ICAL.Component;
  zones: ZoneTable;
  /** VEVENTs grouped by UID, in the order their UIDs first appear. */
  resources: IcsResource[];
  /** X-WR-TIMEZONE, when the calendar names its zone that way (feeds do). */
  declaredZone: string | undefined;
}

/** VEVENTs past which times are read against the VTIMEZONEs alone (see parseCalendarText). */
const LARGE_CALENDAR = 50;

/** Parses a VCALENDAR; text that is not iCalendar is `invalid_argument`. */
export function parseCalendarText(text: string, calendarZone: string): ParsedCalendar {
  let calendar: ICAL.Component;
  try {
    const parsed = ICAL.parse(text.replace(/^\uFEFF/, ''));
    // Several VCALENDARs in one text (some feeds concatenate them) are read as one.
    const roots = (Array.isArray(parsed[0]) ? parsed : [parsed]) as unknown[][];
    calendar = new ICAL.Component(roots[0] ?? []);
    for (const extra of roots.slice(1)) {
      for (const component of new ICAL.Component(extra).getAllSubcomponents()) {
        calendar.addSubcomponent(component);
      }
    }
  } catch (cause) {
    throw new CalgateError(
      'invalid_argument',
      `The iCalendar text could not be read (${cause instanceof Error ? cause.message : 'malformed'}); expected a VCALENDAR as RFC 5545 writes it.`,
      { cause },
    );
  }
  if (calendar.name !== 'vcalendar') {
    throw new CalgateError(
      'invalid_argument',
      `The iCalendar text holds a ${calendar.name.toUpperCase()} where a VCALENDAR was expected.`,
    );
  }
  const declared = calendar.getFirstPropertyValue('x-wr-timezone');
  const zones = new ZoneTable(calendar, calendarZone);
  const byUid = new Map<string, IcsResource>();
  const vevents = calendar.getAllSubcomponents('vevent');
  if (vevents.length > LARGE_CALENDAR) {
    // ical.js looks a TZID up among the VCALENDAR's subcomponents on every time it reads, and
    // one without a VTIMEZONE is looked up again each time: over a feed's thousands of VEVENTs
    // that is quadratic. Their times are read against a calendar holding the VTIMEZONEs alone.
    const zoneRoot = new ICAL.Component('vcalendar');
    for (const vtimezone of calendar.getAllSubcomponents('vtimezone')) {
      zoneRoot.addSubcomponent(new ICAL.Component(vtimezone.toJSON()));
    }
    for (const vevent of vevents) {
      vevent.parent = zoneRoot;
    }
  }
  for (const vevent of vevents) {
    const uidValue = vevent.getFirstPropertyValue('uid');
    const uid = typeof uidValue === 'string' && uidValue !== '' ? uidValue : '';
    let resource = byUid.get(uid);
    if (resource === undefined) {
      resource = { uid, master: undefined, overrides: [], zones };
      byUid.set(uid, resource);
    }
    if (vevent.hasProperty('recurrence-id')) {
      resource.overrides.push(vevent);
    } else if (resource.master === undefined) {
      resource.master = vevent;
    } else {
      // A second master with the same UID: a separate event (feeds sometimes repeat UIDs).
      const extra: IcsResource = { uid, master: vevent, overrides: [], zones };
      byUid.set(`${uid}\u0000${byUid.size}`, extra);
    }
  }
  return {
    calendar,
    zones,
    resources: [...byUid.values()],
    declaredZone: typeof declared === 'string' ? declared : undefined,
  };
}

/**
 * A DATE or DATE-TIME as written: `naive` is the wall-clock reading as if UTC (midnight for
 * dates); `zone` the zone it is read in (the calendar's for dates and floating times).
 */
export interface IcsTime {
  allDay: boolean;
  naive: number;
  zone: Zone;
  /** Written without TZID and without `Z`. */
  floating: boolean;
}

export function naiveOfTime(time: ICAL.Time): number {
  return Date.UTC(
    time.year,
    time.month - 1,
    time.day,
    time.isDate ? 0 : time.hour,
    time.isDate ? 0 : time.minute,
    time.isDate ? 0 : time.second,
  );
}

/** An ICAL.Time value of a property (DTSTART, RDATE, …) with the property's TZID. */
export function readTimeValue(value: ICAL.Time, tzid: string | undefined, zones: ZoneTable): IcsTime {
  const naive = naiveOfTime(value);
  if (value.isDate) {
    return { allDay: true, naive, zone: zones.calendarZone, floating: false };
  }
  if (value.zone?.tzid === 'UTC') {
    return { allDay: false, naive, zone: UTC_ZONE, floating: false };
  }
  if (tzid === undefined) {
    return { allDay: false, naive, zone: zones.calendarZone, floating: true };
  }
  return { allDay: false, naive, zone: zones.zoneOf(tzid), floating: false };
}

function tzidOf(property: ICAL.Property): string | undefined {
  const tzid = property.getParameter('tzid');
  return typeof tzid === 'string' ? tzid : undefined;
}

/** Every value of every property `name` (RDATE, EXDATE: several lines, several values each). */
export function readTimeList(component: ICAL.Component, name: string, zones: ZoneTable): IcsTime[] {
  const out: IcsTime[] = [];
  for (const property of component.getAllProperties(name)) {
    const tzid = tzidOf(property);
    for (const value of property.getValues()) {
      if (value instanceof ICAL.Time) {
        out.push(readTimeValue(value, tzid, zones));
      } else if (value instanceof ICAL.Period) {
        out.push(readTimeValue(value.start, tzid, zones));
      }
    }
  }
  return out;
}

export function readTime(component: ICAL.Component, name: string, zones: ZoneTable): IcsTime | undefined {
  const property = component.getFirstProperty(name);
  const value = property?.getFirstValue();
  if (property === null || !(value instanceof ICAL.Time)) {
    return undefined;
  }
  return readTimeValue(value, tzidOf(property), zones);
}

/** The instant an IcsTime stands for (a date: its midnight in the calendar's zone). */
export function instantOf(time: IcsTime): number {
  return time.zone.toInstant(time.naive);
}

/** Calgate's `{dateTime, timeZone}` / `{date}` of an instant in the time's zone. */
export function eventDateTime(instant: number, zone: Zone, allDay: boolean, naive?: number): EventDateTime {
  if (allDay) {
    const local = localFromNaiveMs(naive ?? zone.toNaive(instant));
    return { date: formatDate(local) };
  }
  const dateTime = formatInZone(instant, zone);
  return zone.iana === undefined ? { dateTime } : { dateTime, timeZone: zone.iana };
}

/** An event's length: whole days (all-day; nominal days of a DURATION) and exact milliseconds. */
export interface EventLength {
  days: number;
  exactMs: number;
}

/** DTEND − DTSTART, or DURATION, or RFC 5545's defaults (one day for dates, none for date-times). */
export function readLength(component: ICAL.Component, start: IcsTime, zones: ZoneTable): EventLength {
  const end = readTime(component, 'dtend', zones);
  if (end !== undefined) {
    if (start.allDay) {
      return { days: Math.max(0, Math.round((end.naive - start.naive) / MS_PER_DAY)), exactMs: 0 };
    }
    return { days: 0, exactMs: Math.max(0, instantOf(end) - instantOf(start)) };
  }
  const duration = component.getFirstPropertyValue('duration');
  if (duration instanceof ICAL.Duration) {
    const sign = duration.isNegative ? -1 : 1;
    const days = sign * (duration.weeks * 7 + duration.days);
    const exactMs = sign * ((duration.hours * 60 + duration.minutes) * 60 + duration.seconds) * 1000;
    if (start.allDay) {
      return { days: Math.max(1, days), exactMs: 0 };
    }
    return { days: Math.max(0, days), exactMs: Math.max(0, exactMs) };
  }
  return start.allDay ? { days: 1, exactMs: 0 } : { days: 0, exactMs: 0 };
}

/** The end instant of an occurrence starting at `startInstant` in `zone`. */
export function endOf(startInstant: number, zone: Zone, allDay: boolean, length: EventLength): number {
  if (allDay) {
    return zone.toInstant(zone.toNaive(startInstant) + length.days * MS_PER_DAY);
  }
  if (length.days === 0) {
    return startInstant + length.exactMs;
  }
  return zone.toInstant(zone.toNaive(startInstant) + length.days * MS_PER_DAY) + length.exactMs;
}

const STATUS: Record<string, EventStatus> = {
  CONFIRMED: 'confirmed',
  TENTATIVE: 'tentative',
  CANCELLED: 'cancelled',
};

const VISIBILITY: Record<string, Visibility> = {
  PUBLIC: 'public',
  PRIVATE: 'private',
  CONFIDENTIAL: 'confidential',
};

const PARTSTAT: Record<string, NonNullable<EventAttendee['responseStatus']>> = {
  ACCEPTED: 'accepted',
  DECLINED: 'declined',
  TENTATIVE: 'tentative',
  'NEEDS-ACTION': 'needsAction',
};

function text(component: ICAL.Component, name: string): string | undefined {
  const value = component.getFirstPropertyValue(name);
  return typeof value === 'string' ? value : undefined;
}

function mailAddress(value: unknown): string | undefined {
  if (typeof value !== 'string') {
    return undefined;
  }
  return value.replace(/^mailto:/i, '');
}

function param(property: ICAL.Property, name: string): string | undefined {
  const value = property.getParameter(name);
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(',') : undefined;
}

export function statusOf(component: ICAL.Component): EventStatus {
  return STATUS[(text(component, 'status') ?? '').toUpperCase()] ?? 'confirmed';
}

function timeText(component: ICAL.Component, name: string): string | undefined {
  const value = component.getFirstPropertyValue(name);
  if (value instanceof ICAL.Time) {
    return isoInstant(value.toUnixTime() * 1000);
  }
  return undefined;
}

function remindersOf(component: ICAL.Component): EventReminders | undefined {
  const alarms = component.getAllSubcomponents('valarm');
  if (alarms.length === 0) {
    return undefined;
  }
  const overrides: { method: 'email' | 'popup'; minutes: number }[] = [];
  for (const alarm of alarms) {
    const trigger = alarm.getFirstPropertyValue('trigger');
    if (!(trigger instanceof ICAL.Duration)) {
      continue;
    }
    const related = alarm.getFirstProperty('trigger')?.getParameter('related');
    if (typeof related === 'string' && related.toUpperCase() === 'END') {
      continue;
    }
    const seconds = trigger.toSeconds();
    if (seconds > 0) {
      continue;
    }
    const action = (text(alarm, 'action') ?? '').toUpperCase();
    overrides.push({ method: action === 'EMAIL' ? 'email' : 'popup', minutes: Math.round(-seconds / 60) });
  }
  return { useDefault: false, overrides };
}

/** Every field of a VEVENT except its times, ids and recurrence. */
export function eventFields(component: ICAL.Component): Omit<CalendarEvent, 'id' | 'start' | 'end'> {
  const out: Omit<CalendarEvent, 'id' | 'start' | 'end'> = { status: statusOf(component) };
  const summary = text(component, 'summary');
  if (summary !== undefined) {
    out.summary = summary;
  }
  const description = text(component, 'description');
  if (description !== undefined) {
    out.description = description;
  }
  const location = text(component, 'location');
  if (location !== undefined) {
    out.location = location;
  }
  const organizerProperty = component.getFirstProperty('organizer');
  const organizerEmail = mailAddress(organizerProperty?.getFirstValue());
  if (organizerProperty !== null && organizerEmail !== undefined) {
    const cn = param(organizerProperty, 'cn');
    out.organizer = { email: organizerEmail, ...(cn !== undefined ? { displayName: cn } : {}) };
  }
  const attendees: EventAttendee[] = [];
  for (const property of component.getAllProperties('attendee')) {
    const email = mailAddress(property.getFirstValue());
    if (email === undefined) {
      continue;
    }
    const attendee: EventAttendee = { email };
    const cn = param(property, 'cn');
    if (cn !== undefined) {
      attendee.displayName = cn;
    }
    if ((param(property, 'role') ?? '').toUpperCase() === 'OPT-PARTICIPANT') {
      attendee.optional = true;
    }
    const partstat = PARTSTAT[(param(property, 'partstat') ?? 'NEEDS-ACTION').toUpperCase()];
    if (partstat !== undefined) {
      attendee.responseStatus = partstat;
    }
    if (organizerEmail !== undefined && email.toLowerCase() === organizerEmail.toLowerCase()) {
      attendee.organizer = true;
    }
    attendees.push(attendee);
  }
  if (attendees.length > 0) {
    out.attendees = attendees;
  }
  const transp = (text(component, 'transp') ?? '').toUpperCase();
  if (transp === 'TRANSPARENT' || transp === 'OPAQUE') {
    out.transparency = transp === 'TRANSPARENT' ? 'transparent' : 'opaque';
  }
  const visibility = VISIBILITY[(text(component, 'class') ?? '').toUpperCase()];
  if (visibility !== undefined) {
    out.visibility = visibility;
  }
  const reminders = remindersOf(component);
  if (reminders !== undefined) {
    out.reminders = reminders;
  }
  const uid = text(component, 'uid');
  if (uid !== undefined) {
    out.iCalUID = uid;
  }
  const sequence = component.getFirstPropertyValue('sequence');
  if (typeof sequence === 'number') {
    out.sequence = sequence;
  }
  const created = timeText(component, 'created');
  if (created !== undefined) {
    out.created = created;
  }
  const updated = timeText(component, 'last-modified') ?? timeText(component, 'dtstamp');
  if (updated !== undefined) {
    out.updated = updated;
  }
  return out;
}

/** Epoch day of a naive reading. */
export function dayOfNaive(naive: number): number {
  const local = localFromNaiveMs(naive);
  return epochDay(local.year, local.month, local.day);
}
