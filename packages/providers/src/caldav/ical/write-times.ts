/**
 * Times written into iCalendar: Calgate's `{dateTime, timeZone}` / `{date}` resolved to a naive
 * time and a form (date, UTC, floating, TZID), DTSTART/DTEND written with the zone's VTIMEZONE,
 * and a patch's new start and/or end (a new start alone keeps the event's length).
 */
import { CalgateError, localFromNaiveMs, parseDate, parseDateTime, validateTimeZone } from '@calgate/core';
import ICAL from 'ical.js';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import type { EventDateTime, EventPatch } from '../../types.ts';
import { type IcsResource, type IcsTime, instantOf, readTime } from './read.ts';
import type { WriteContext } from './write.ts';
import { ianaZone, type Zone } from './zones.ts';

export function invalid(message: string): CalgateError {
  return new CalgateError('invalid_argument', message);
}

export function icalTime(naive: number, isDate: boolean, zone?: ICAL.Timezone): ICAL.Time {
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
export type TimeForm =
  | { kind: 'date' }
  | { kind: 'utc' }
  | { kind: 'floating' }
  | { kind: 'zoned'; tzid: string; zone: Zone };

export function setTime(component: ICAL.Component, name: string, naive: number, form: TimeForm): void {
  component.removeAllProperties(name);
  component.addProperty(timeProperty(name, naive, form));
}

/** A date or time property (`dtstart`, `exdate`, …) of `naive` written in `form`. */
export function timeProperty(name: string, naive: number, form: TimeForm): ICAL.Property {
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
  return property;
}

/** The form DTSTART is written in, so RECURRENCE-ID and EXDATE can match it. */
export function formOf(component: ICAL.Component, time: IcsTime): TimeForm {
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

export function ensureVtimezone(calendar: ICAL.Component, tzid: string): void {
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

export interface ResolvedTime {
  naive: number;
  form: TimeForm;
  instant: number;
}

/** Calgate's `{dateTime, timeZone}` / `{date}` → what to write. */
export function resolveInput(value: EventDateTime, context: WriteContext, what: string): ResolvedTime {
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

export function writeTimes(
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

/** New start and/or end; a new start alone keeps the event's length. */
export function patchTimes(
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
