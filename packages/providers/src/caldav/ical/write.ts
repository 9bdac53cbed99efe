/**
 * Writing events into iCalendar: new resources carry `DTSTART;TZID=…` with the zone's VTIMEZONE;
 * edits patch the existing component and keep every property and parameter they were not asked
 * to change (ORGANIZER, attendee parameters, VALARMs, X- properties); one instance's edit is a
 * RECURRENCE-ID override in the same resource, one instance's deletion an EXDATE.
 */
import {
  CalgateError,
  localFromNaiveMs,
  MS_PER_DAY,
  parseDate,
  parseDateTime,
  validateTimeZone,
} from '@calgate/core';
import ICAL from 'ical.js';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import type { EventAttendee, EventDateTime, EventInput, EventPatch } from '../../types.ts';
import { instanceKey, isOccurrence, parseInstanceKey, readSeries } from './expand.ts';
import { type IcsResource, type IcsTime, instantOf, parseCalendarText, readTime } from './read.ts';
import { ianaZone, type Zone } from './zones.ts';

export const PRODID = '-//Calgate//Calgate CalDAV//EN';

export interface WriteContext {
  /** The calendar's IANA zone: floating and zone-less input is read there. */
  calendarZone: string;
  /** Now (epoch ms), for DTSTAMP and LAST-MODIFIED. */
  now?: number;
}

function invalid(message: string): CalgateError {
  return new CalgateError('invalid_argument', message);
}

function icalTime(naive: number, isDate: boolean, zone?: ICAL.Timezone): ICAL.Time {
  const local = localFromNaiveMs(naive);
  return ICAL.Time.fromData(
    {
      year: local.year,
      month: local.month,
      day: local.day,
      hour: isDate ? 0 : local.hour,
      minute: isDate ? 0 : local.minute,
      second: isDate ? 0 : local.second,
      isDate,
    },
    zone as ICAL.Timezone,
  );
}

/** How a time is written: a date, a UTC time, a floating time, or a time with this TZID. */
type TimeForm =
  | { kind: 'date' }
  | { kind: 'utc' }
  | { kind: 'floating' }
  | { kind: 'zoned'; tzid: string; zone: Zone };

function setTime(component: ICAL.Component, name: string, naive: number, form: TimeForm): void {
  component.removeAllProperties(name);
  const property = new ICAL.Property(name);
  if (form.kind === 'date') {
    property.resetType('date');
    property.setValue(icalTime(naive, true));
  } else if (form.kind === 'utc') {
    property.setValue(icalTime(naive, false, ICAL.Timezone.utcTimezone));
  } else {
    property.setValue(icalTime(naive, false));
    if (form.kind === 'zoned') {
      property.setParameter('tzid', form.tzid);
    }
  }
  component.addProperty(property);
}

/** The form DTSTART is written in, so RECURRENCE-ID and EXDATE can match it. */
function formOf(component: ICAL.Component, time: IcsTime): TimeForm {
  if (time.allDay) {
    return { kind: 'date' };
  }
  if (time.floating) {
    return { kind: 'floating' };
  }
  const tzid = component.getFirstProperty('dtstart')?.getParameter('tzid');
  if (typeof tzid === 'string') {
    return { kind: 'zoned', tzid, zone: time.zone };
  }
  return { kind: 'utc' };
}

/** The VTIMEZONE of an IANA zone (none for UTC). */
export function vtimezoneFor(zone: string): ICAL.Component | undefined {
  if (zone === 'UTC' || zone === 'Etc/UTC') {
    return undefined;
  }
  const block = tzlib_get_ical_block(zone);
  const text = Array.isArray(block) ? block[0] : undefined;
  if (text === undefined || !text.startsWith('BEGIN:VTIMEZONE')) {
    return undefined;
  }
  return ICAL.Component.fromString(text);
}

function ensureVtimezone(calendar: ICAL.Component, tzid: string): void {
  const present = calendar
    .getAllSubcomponents('vtimezone')
    .some((vtimezone) => vtimezone.getFirstPropertyValue('tzid') === tzid);
  if (present) {
    return;
  }
  const vtimezone = vtimezoneFor(tzid);
  if (vtimezone === undefined) {
    return;
  }
  // VTIMEZONEs first, as clients expect them.
  const events = calendar.getAllSubcomponents().filter((c) => c.name !== 'vtimezone');
  for (const component of events) {
    calendar.removeSubcomponent(component);
  }
  calendar.addSubcomponent(vtimezone);
  for (const component of events) {
    calendar.addSubcomponent(component);
  }
}

interface ResolvedTime {
  naive: number;
  form: TimeForm;
  instant: number;
}

/** Calgate's `{dateTime, timeZone}` / `{date}` → what to write. */
function resolveInput(value: EventDateTime, context: WriteContext, what: string): ResolvedTime {
  if (value.date !== undefined) {
    const date = parseDate(value.date);
    if (!date.ok) {
      throw invalid(`${what}.date '${value.date}' is not a date; write YYYY-MM-DD.`);
    }
    const naive = Date.UTC(date.value.year, date.value.month - 1, date.value.day);
    return { naive, form: { kind: 'date' }, instant: naive };
  }
  if (value.dateTime === undefined) {
    throw invalid(`${what} needs dateTime or date.`);
  }
  const zoneName = value.timeZone ?? context.calendarZone;
  const checked = validateTimeZone(zoneName);
  if (!checked.ok) {
    throw invalid(`${what}.timeZone '${zoneName}' is not an IANA time zone (for example Europe/Berlin).`);
  }
  const instant = parseDateTime(value.dateTime, checked.value);
  if (!instant.ok) {
    throw invalid(`${what}.dateTime '${value.dateTime}' is not a date-time: ${instant.error.message}`);
  }
  if (checked.value === 'UTC' || checked.value === 'Etc/UTC') {
    return { naive: instant.value, form: { kind: 'utc' }, instant: instant.value };
  }
  const zone = ianaZone(checked.value);
  return {
    naive: zone.toNaive(instant.value),
    form: { kind: 'zoned', tzid: checked.value, zone },
    instant: instant.value,
  };
}

const PARTSTAT: Record<NonNullable<EventAttendee['responseStatus']>, string> = {
  accepted: 'ACCEPTED',
  declined: 'DECLINED',
  tentative: 'TENTATIVE',
  needsAction: 'NEEDS-ACTION',
};

function setText(component: ICAL.Component, name: string, value: string | undefined): void {
  if (value === undefined) {
    return;
  }
  if (value === '') {
    component.removeAllProperties(name);
  } else {
    component.updatePropertyWithValue(name, value);
  }
}

/** Attendees as asked, each keeping the parameters it already had (RSVP, X-…, ROLE). */
function setAttendees(component: ICAL.Component, attendees: EventAttendee[]): void {
  const existing = new Map<string, ICAL.Property>();
  for (const property of component.getAllProperties('attendee')) {
    const value = property.getFirstValue();
    if (typeof value === 'string') {
      existing.set(value.replace(/^mailto:/i, '').toLowerCase(), property);
    }
  }
  component.removeAllProperties('attendee');
  for (const attendee of attendees) {
    const property = existing.get(attendee.email.toLowerCase()) ?? new ICAL.Property('attendee');
    if (!existing.has(attendee.email.toLowerCase())) {
      property.setValue(`mailto:${attendee.email}`);
      property.setParameter('partstat', 'NEEDS-ACTION');
      property.setParameter('role', 'REQ-PARTICIPANT');
    }
    if (attendee.displayName !== undefined) {
      property.setParameter('cn', attendee.displayName);
    }
    if (attendee.optional !== undefined) {
      property.setParameter('role', attendee.optional ? 'OPT-PARTICIPANT' : 'REQ-PARTICIPANT');
    }
    if (attendee.responseStatus !== undefined) {
      property.setParameter('partstat', PARTSTAT[attendee.responseStatus]);
    }
    component.addProperty(property);
  }
}

function setReminders(component: ICAL.Component, reminders: NonNullable<EventInput['reminders']>): void {
  for (const alarm of component.getAllSubcomponents('valarm')) {
    component.removeSubcomponent(alarm);
  }
  for (const override of reminders.useDefault ? [] : (reminders.overrides ?? [])) {
    const alarm = new ICAL.Component('valarm');
    alarm.addPropertyWithValue('action', override.method === 'email' ? 'EMAIL' : 'DISPLAY');
    const trigger = new ICAL.Property('trigger');
    trigger.setValue(ICAL.Duration.fromSeconds(-override.minutes * 60));
    alarm.addProperty(trigger);
    alarm.addPropertyWithValue('description', component.getFirstPropertyValue('summary') ?? 'Reminder');
    component.addSubcomponent(alarm);
  }
}

function setRecurrence(component: ICAL.Component, lines: string[]): void {
  for (const name of ['rrule', 'exrule', 'rdate', 'exdate']) {
    component.removeAllProperties(name);
  }
  if (lines.length === 0) {
    return;
  }
  let holder: ICAL.Component;
  try {
    holder = ICAL.Component.fromString(`BEGIN:VEVENT\r\n${lines.join('\r\n')}\r\nEND:VEVENT`);
  } catch {
    throw invalid(
      `recurrence lines ${JSON.stringify(lines)} are not iCalendar; write e.g. 'RRULE:FREQ=WEEKLY;COUNT=5'.`,
    );
  }
  // A copy: adding a property to the event takes it out of the holder's list.
  for (const property of [...holder.getAllProperties()]) {
    if (!['rrule', 'exrule', 'rdate', 'exdate'].includes(property.name)) {
      throw invalid(`recurrence line '${property.toICALString()}' is not RRULE, EXRULE, RDATE or EXDATE.`);
    }
    component.addProperty(property);
  }
}

function stamp(component: ICAL.Component, now: number): void {
  const at = ICAL.Time.fromJSDate(new Date(Math.floor(now / 1000) * 1000), true);
  component.updatePropertyWithValue('dtstamp', at);
  component.updatePropertyWithValue('last-modified', at);
}

/** Applies a patch's fields to a VEVENT; times are handled by the caller. */
function applyFields(component: ICAL.Component, patch: EventPatch): void {
  setText(component, 'summary', patch.summary);
  setText(component, 'description', patch.description);
  setText(component, 'location', patch.location);
  if (patch.attendees !== undefined) {
    setAttendees(component, patch.attendees);
  }
  if (patch.reminders !== undefined) {
    setReminders(component, patch.reminders);
  }
  if (patch.transparency !== undefined) {
    component.updatePropertyWithValue(
      'transp',
      patch.transparency === 'transparent' ? 'TRANSPARENT' : 'OPAQUE',
    );
  }
  if (patch.visibility !== undefined) {
    if (patch.visibility === 'default') {
      component.removeAllProperties('class');
    } else {
      component.updatePropertyWithValue('class', patch.visibility.toUpperCase());
    }
  }
  if (patch.status !== undefined) {
    component.updatePropertyWithValue('status', patch.status.toUpperCase());
  }
}

function writeTimes(
  calendar: ICAL.Component,
  component: ICAL.Component,
  start: ResolvedTime,
  end: ResolvedTime,
): void {
  if ((start.form.kind === 'date') !== (end.form.kind === 'date')) {
    throw invalid('start and end must both be dates (all-day) or both be date-times.');
  }
  if (end.instant < start.instant) {
    throw invalid('end must not be before start.');
  }
  component.removeAllProperties('duration');
  setTime(component, 'dtstart', start.naive, start.form);
  setTime(component, 'dtend', end.naive, end.form);
  for (const form of [start.form, end.form]) {
    if (form.kind === 'zoned') {
      ensureVtimezone(calendar, form.tzid);
    }
  }
}

/** A new calendar object resource holding one event. */
export function newEventIcs(input: EventInput, uid: string, context: WriteContext): string {
  const calendar = new ICAL.Component('vcalendar');
  calendar.addPropertyWithValue('version', '2.0');
  calendar.addPropertyWithValue('prodid', PRODID);
  const event = new ICAL.Component('vevent');
  event.addPropertyWithValue('uid', uid);
  calendar.addSubcomponent(event);
  stamp(event, context.now ?? Date.now());
  event.updatePropertyWithValue('created', event.getFirstPropertyValue('dtstamp'));
  event.addPropertyWithValue('sequence', 0);
  writeTimes(
    calendar,
    event,
    resolveInput(input.start, context, 'start'),
    resolveInput(input.end, context, 'end'),
  );
  if (input.recurrence !== undefined) {
    setRecurrence(event, input.recurrence);
  }
  const { id: _id, start: _start, end: _end, recurrence: _recurrence, ...fields } = input;
  applyFields(event, fields);
  return calendar.toString();
}

function findOverride(resource: IcsResource, key: number, allDay: boolean): ICAL.Component | undefined {
  return resource.overrides.find((override) => {
    const rid = readTime(override, 'recurrence-id', resource.zones);
    if (rid === undefined) {
      return false;
    }
    return allDay ? rid.naive === key : instantOf(rid) === key;
  });
}

function onlyResource(
  text: string,
  context: WriteContext,
): { calendar: ICAL.Component; resource: IcsResource } {
  const parsed = parseCalendarText(text, context.calendarZone);
  const resource = parsed.resources[0];
  if (resource === undefined || parsed.resources.length > 1) {
    throw invalid('A calendar object resource must hold exactly one event (one UID).');
  }
  return { calendar: parsed.calendar, resource };
}

function notAnInstance(uid: string, key: string): CalgateError {
  return new CalgateError('not_found', `The event ${uid} has no occurrence ${key}.`);
}

/**
 * The resource text with `patch` applied: to the master (or single event) when `instance` is
 * undefined, else to the occurrence whose instance key (`20260105T080000Z`, `20260105`) it
 * names, through a RECURRENCE-ID override (made from the master if there is none yet).
 */
export function patchEventIcs(
  text: string,
  instance: string | undefined,
  patch: EventPatch,
  context: WriteContext,
): string {
  const { calendar, resource } = onlyResource(text, context);
  const master = resource.master;
  let target: ICAL.Component;
  if (instance === undefined) {
    if (master === undefined) {
      throw new CalgateError('not_found', `The event ${resource.uid} has no master component to edit.`);
    }
    target = master;
    if (patch.recurrence !== undefined) {
      setRecurrence(target, patch.recurrence);
    }
  } else {
    const parsedKey = parseInstanceKey(instance);
    if (parsedKey === undefined || master === undefined) {
      throw notAnInstance(resource.uid, instance);
    }
    const series = readSeries(master, resource);
    if (parsedKey.allDay !== series.allDay) {
      throw notAnInstance(resource.uid, instance);
    }
    const existing = findOverride(resource, parsedKey.key, series.allDay);
    if (existing === undefined && !isOccurrence(series, parsedKey.key)) {
      throw notAnInstance(resource.uid, instance);
    }
    if (patch.recurrence !== undefined) {
      throw invalid('recurrence can be changed on the whole series only, not on one occurrence.');
    }
    if (existing !== undefined) {
      target = existing;
    } else {
      target = new ICAL.Component(JSON.parse(JSON.stringify(master.toJSON())));
      for (const name of ['rrule', 'exrule', 'rdate', 'exdate']) {
        target.removeAllProperties(name);
      }
      const form = formOf(master, series.start);
      const naive = series.allDay
        ? parsedKey.key
        : form.kind === 'utc'
          ? parsedKey.key
          : series.zone.toNaive(parsedKey.key);
      setTime(target, 'recurrence-id', naive, form);
      const startInstant = series.allDay ? series.zone.toInstant(parsedKey.key) : parsedKey.key;
      setTime(target, 'dtstart', naive, form);
      if (target.hasProperty('dtend')) {
        const endNaive = series.allDay
          ? naive + series.length.days * MS_PER_DAY
          : (form.kind === 'utc' ? (n: number) => n : series.zone.toNaive)(
              startInstant + series.length.exactMs + series.length.days * MS_PER_DAY,
            );
        const endProperty = master.getFirstProperty('dtend');
        const endTzid = endProperty?.getParameter('tzid');
        setTime(
          target,
          'dtend',
          endNaive,
          form.kind === 'zoned' && typeof endTzid === 'string' ? { ...form, tzid: endTzid } : form,
        );
      }
      calendar.addSubcomponent(target);
    }
  }
  patchTimes(calendar, target, resource, patch, context);
  applyFields(target, patch);
  const sequence = target.getFirstPropertyValue('sequence');
  target.updatePropertyWithValue('sequence', (typeof sequence === 'number' ? sequence : 0) + 1);
  stamp(target, context.now ?? Date.now());
  return calendar.toString();
}

/** New start and/or end; a new start alone keeps the event's length. */
function patchTimes(
  calendar: ICAL.Component,
  component: ICAL.Component,
  resource: IcsResource,
  patch: EventPatch,
  context: WriteContext,
): void {
  if (patch.start === undefined && patch.end === undefined) {
    return;
  }
  const currentStart = readTime(component, 'dtstart', resource.zones);
  if (currentStart === undefined) {
    throw invalid(`The event ${resource.uid} has no DTSTART.`);
  }
  const currentEnd = readTime(component, 'dtend', resource.zones);
  const start = patch.start !== undefined ? resolveInput(patch.start, context, 'start') : undefined;
  const end = patch.end !== undefined ? resolveInput(patch.end, context, 'end') : undefined;
  if (start !== undefined && end !== undefined) {
    writeTimes(calendar, component, start, end);
    return;
  }
  if (start !== undefined) {
    const hasDuration = component.hasProperty('duration') && currentEnd === undefined;
    const lengthMs =
      currentEnd !== undefined
        ? currentStart.allDay
          ? currentEnd.naive - currentStart.naive
          : instantOf(currentEnd) - instantOf(currentStart)
        : 0;
    if (hasDuration || currentEnd === undefined) {
      if ((start.form.kind === 'date') !== currentStart.allDay && component.hasProperty('duration')) {
        throw invalid('changing between all-day and timed needs both start and end.');
      }
      setTime(component, 'dtstart', start.naive, start.form);
      if (start.form.kind === 'zoned') {
        ensureVtimezone(calendar, start.form.tzid);
      }
      return;
    }
    if ((start.form.kind === 'date') !== currentStart.allDay) {
      throw invalid('changing between all-day and timed needs both start and end.');
    }
    const newEnd: ResolvedTime =
      start.form.kind === 'date'
        ? { naive: start.naive + lengthMs, form: start.form, instant: start.instant + lengthMs }
        : {
            naive:
              start.form.kind === 'zoned'
                ? start.form.zone.toNaive(start.instant + lengthMs)
                : start.instant + lengthMs,
            form: start.form,
            instant: start.instant + lengthMs,
          };
    writeTimes(calendar, component, start, newEnd);
    return;
  }
  if (end !== undefined) {
    const startForm = formOf(component, currentStart);
    writeTimes(
      calendar,
      component,
      { naive: currentStart.naive, form: startForm, instant: instantOf(currentStart) },
      end,
    );
  }
}

/**
 * The resource text without one occurrence: an EXDATE on the master in DTSTART's own form, and
 * the occurrence's override (if any) removed.
 */
export function deleteInstanceIcs(text: string, instance: string, context: WriteContext): string {
  const { calendar, resource } = onlyResource(text, context);
  const master = resource.master;
  const parsedKey = parseInstanceKey(instance);
  if (parsedKey === undefined || master === undefined) {
    throw notAnInstance(resource.uid, instance);
  }
  const series = readSeries(master, resource);
  const existing = findOverride(resource, parsedKey.key, series.allDay);
  if (
    parsedKey.allDay !== series.allDay ||
    (existing === undefined && !isOccurrence(series, parsedKey.key))
  ) {
    throw notAnInstance(resource.uid, instance);
  }
  if (existing !== undefined) {
    calendar.removeSubcomponent(existing);
  }
  const form = formOf(master, series.start);
  const naive = series.allDay || form.kind === 'utc' ? parsedKey.key : series.zone.toNaive(parsedKey.key);
  const property = new ICAL.Property('exdate');
  if (form.kind === 'date') {
    property.resetType('date');
    property.setValue(icalTime(naive, true));
  } else if (form.kind === 'utc') {
    property.setValue(icalTime(naive, false, ICAL.Timezone.utcTimezone));
  } else {
    property.setValue(icalTime(naive, false));
    if (form.kind === 'zoned') {
      property.setParameter('tzid', form.tzid);
    }
  }
  master.addProperty(property);
  const sequence = master.getFirstPropertyValue('sequence');
  master.updatePropertyWithValue('sequence', (typeof sequence === 'number' ? sequence : 0) + 1);
  stamp(master, context.now ?? Date.now());
  return calendar.toString();
}

export { instanceKey };
