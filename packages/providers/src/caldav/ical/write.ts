/**
 * Writing events into iCalendar: new resources carry `DTSTART;TZID=…` with the zone's VTIMEZONE;
 * edits patch the existing component and keep every property and parameter they were not asked
 * to change (ORGANIZER, attendee parameters, VALARMs, X- properties); one instance's edit is a
 * RECURRENCE-ID override in the same resource, one instance's deletion an EXDATE.
 */
import { CalgateError, MS_PER_DAY } from '@calgate/core';
import ICAL from 'ical.js';
import type { EventInput, EventPatch } from '../../types.ts';
import { instanceKey, isOccurrence, parseInstanceKey, readSeries } from './expand.ts';
import { type IcsResource, instantOf, parseCalendarText, readTime } from './read.ts';
import { applyFields, setRecurrence, stamp } from './write-fields.ts';
import {
  formOf,
  invalid,
  patchTimes,
  resolveInput,
  setTime,
  timeProperty,
  writeTimes,
} from './write-times.ts';

export { vtimezoneFor } from './write-times.ts';

export const PRODID = '-//Calgate//Calgate CalDAV//EN';

export interface WriteContext {
  /** The calendar's IANA zone: floating and zone-less input is read there. */
  calendarZone: string;
  /** Now (epoch ms), for DTSTAMP and LAST-MODIFIED. */
  now?: number;
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
  master.addProperty(timeProperty('exdate', naive, form));
  const sequence = master.getFirstPropertyValue('sequence');
  master.updatePropertyWithValue('sequence', (typeof sequence === 'number' ? sequence : 0) + 1);
  stamp(master, context.now ?? Date.now());
  return calendar.toString();
}

export { instanceKey };
