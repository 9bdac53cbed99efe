/**
 * Event writes as Graph takes them: Graph property names only, times as `{dateTime, timeZone}`
 * in a zone Graph accepts, all-day events at midnight, patterned recurrence checked, and
 * "this occurrence" changes (PATCH/DELETE on an occurrence id) kept as exceptions and deletions.
 */
import { graphErrors } from './errors.ts';
import { applyExtended } from './extended.ts';
import { type Instance, instantOfWhen, occurrenceId, seriesZone } from './instances.ts';
import { type PatternedRecurrence, recurrenceProblem } from './recurrence.ts';
import { EVENT_PROPERTIES } from './render.ts';
import { type CalendarRecord, changeKey, type EventRecord, graphId, type WhenRecord } from './state.ts';
import { localPartsAt, parseLocal } from './time.ts';
import { acceptZone } from './zones.ts';

const SHOW_AS = ['free', 'tentative', 'busy', 'oof', 'workingElsewhere', 'unknown'];
const SENSITIVITY = ['normal', 'personal', 'private', 'confidential'];
const IMPORTANCE = ['low', 'normal', 'high'];
const READ_ONLY = new Set(['@odata.etag', '@odata.type', '@odata.context']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function whenOf(value: unknown, name: string): WhenRecord {
  if (!isObject(value) || typeof value.dateTime !== 'string') {
    throw graphErrors.invalidRequest(`The ${name} property needs a dateTime and a timeZone.`);
  }
  const zoneName = typeof value.timeZone === 'string' ? value.timeZone : 'UTC';
  const zone = acceptZone(zoneName);
  if (!zone) {
    throw graphErrors.zoneNotSupported(zoneName);
  }
  const local = parseLocal(value.dateTime.replace(/Z$/i, ''));
  if (!local) {
    throw graphErrors.badRequest(
      `Cannot convert the literal '${value.dateTime}' to the expected type 'Edm.DateTime'.`,
    );
  }
  const { fractionMs: _f, ...parts } = local;
  return { local: parts, zone };
}

const isMidnight = (w: WhenRecord) => w.local.hour === 0 && w.local.minute === 0 && w.local.second === 0;

/** Applies a create/update body to `event`; unknown properties are refused, as Graph's OData layer does. */
export function applyInput(event: EventRecord, body: Record<string, unknown>, creating: boolean): void {
  for (const key of Object.keys(body)) {
    if (
      !EVENT_PROPERTIES.has(key) &&
      !READ_ONLY.has(key) &&
      key !== 'responseRequested' &&
      key !== 'singleValueExtendedProperties'
    ) {
      throw graphErrors.badRequest(
        `The property '${key}' does not exist on type 'microsoft.graph.event'. Make sure to only use property names that are defined by the type.`,
      );
    }
  }
  if (creating && (body.start === undefined || body.end === undefined)) {
    throw graphErrors.invalidRequest("Your request can't be completed. An event needs a start and an end.");
  }
  applyExtended(event, body.singleValueExtendedProperties);
  if (body.subject !== undefined) {
    event.subject = String(body.subject ?? '');
  }
  if (body.body !== undefined) {
    const b = isObject(body.body) ? body.body : {};
    const type = String(b.contentType ?? 'text').toLowerCase();
    event.body = { contentType: type === 'html' ? 'html' : 'text', content: String(b.content ?? '') };
  }
  if (body.start !== undefined) {
    event.start = whenOf(body.start, 'start');
  }
  if (body.end !== undefined) {
    event.end = whenOf(body.end, 'end');
  }
  if (body.isAllDay !== undefined) {
    event.isAllDay = body.isAllDay === true;
  }
  if (body.location !== undefined) {
    event.location = isObject(body.location) ? String(body.location.displayName ?? '') : '';
  }
  if (body.attendees !== undefined) {
    if (!Array.isArray(body.attendees)) {
      throw graphErrors.badRequest('The attendees property must be a collection.');
    }
    event.attendees = body.attendees.map((a) => {
      const email = isObject(a) && isObject(a.emailAddress) ? a.emailAddress : {};
      const address = String(email.address ?? '');
      if (!/^[^@\s]+@[^@\s]+$/.test(address)) {
        throw graphErrors.invalidRequest(`Attendee address '${address}' is not a valid email address.`);
      }
      const previous = event.attendees.find(
        (p) => p.emailAddress.address.toLowerCase() === address.toLowerCase(),
      );
      const type = isObject(a) ? String(a.type ?? 'required') : 'required';
      return {
        emailAddress: { name: String(email.name ?? address), address },
        type: (['required', 'optional', 'resource'].includes(type) ? type : 'required') as 'required',
        status: previous?.status ?? { response: 'none', time: '0001-01-01T00:00:00Z' },
      };
    });
  }
  const pick = (name: string, allowed: string[]) => {
    if (body[name] === undefined) {
      return undefined;
    }
    const value = String(body[name]);
    if (!allowed.includes(value)) {
      throw graphErrors.badRequest(`Requested value '${value}' was not found in the ${name} enumeration.`);
    }
    return value;
  };
  event.showAs = pick('showAs', SHOW_AS) ?? event.showAs;
  event.sensitivity = pick('sensitivity', SENSITIVITY) ?? event.sensitivity;
  event.importance = pick('importance', IMPORTANCE) ?? event.importance;
  if (Array.isArray(body.categories)) {
    event.categories = body.categories.map(String);
  }
  if (body.isReminderOn !== undefined) {
    event.isReminderOn = body.isReminderOn === true;
  }
  if (typeof body.reminderMinutesBeforeStart === 'number') {
    event.reminderMinutesBeforeStart = body.reminderMinutesBeforeStart;
  }
  if (body.recurrence !== undefined) {
    if (event.kind === 'exception') {
      throw graphErrors.invalidRequest('An occurrence of a series cannot have its own recurrence.');
    }
    if (body.recurrence === null) {
      delete event.recurrence;
      event.kind = 'singleInstance';
    } else {
      const rec = body.recurrence as PatternedRecurrence;
      if (!isObject(rec) || !isObject(rec.pattern) || !isObject(rec.range)) {
        throw graphErrors.invalidRequest('The recurrence property needs a pattern and a range.');
      }
      rec.pattern.interval = rec.pattern.interval ?? 1;
      const problem = recurrenceProblem(rec);
      if (problem) {
        throw graphErrors.invalidRequest(problem);
      }
      if (rec.range.recurrenceTimeZone !== undefined && !acceptZone(rec.range.recurrenceTimeZone)) {
        throw graphErrors.zoneNotSupported(rec.range.recurrenceTimeZone);
      }
      event.recurrence = structuredClone(rec);
      event.kind = 'seriesMaster';
    }
  }
  const start = instantOfWhen(event.start);
  const end = instantOfWhen(event.end);
  if (end < start) {
    throw graphErrors.invalidRequest(
      "Your request can't be completed. The end time must be at or after the start time.",
    );
  }
  if (event.isAllDay && (!isMidnight(event.start) || !isMidnight(event.end) || end === start)) {
    throw graphErrors.invalidRequest(
      "Your request can't be completed. If you're trying to make an all-day event, the start and end times need to be at midnight and at least one day apart.",
    );
  }
}

export function newEvent(calendar: CalendarRecord, now: number): EventRecord {
  const utc = acceptZone('UTC') as { name: string; iana: string };
  const midnight = { local: { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0 }, zone: utc };
  return {
    id: `AAMkAGI${graphId('')}`,
    calendarId: calendar.id,
    kind: 'singleInstance',
    subject: '',
    body: { contentType: 'text', content: '' },
    start: midnight,
    end: midnight,
    isAllDay: false,
    location: '',
    attendees: [],
    organizer: { ...calendar.owner },
    showAs: 'busy',
    sensitivity: 'normal',
    importance: 'normal',
    categories: [],
    isCancelled: false,
    isReminderOn: true,
    reminderMinutesBeforeStart: 15,
    response: 'none',
    responseTime: '0001-01-01T00:00:00Z',
    iCalUId: `040000008200E00074C5B7101A82E008${graphId('')
      .slice(0, 64)
      .replace(/[^A-Z0-9]/gi, '0')
      .toUpperCase()}`,
    created: now,
    modified: now,
    changeKey: changeKey(),
  };
}

export function touch(event: EventRecord, now: number): void {
  event.modified = now;
  event.changeKey = changeKey();
}

/** The stored record an occurrence becomes when it is changed on its own. */
export function exceptionFrom(calendar: CalendarRecord, occurrence: Instance, now: number): EventRecord {
  const master = occurrence.record;
  const zone = seriesZone(master);
  const startParts = localPartsAt(occurrence.start, zone.iana);
  const endParts = localPartsAt(occurrence.end, zone.iana);
  const exception: EventRecord = {
    ...structuredClone({ ...master, deleted: undefined, recurrence: undefined }),
    id: occurrenceId(master.id, occurrence.originalStart as number),
    calendarId: calendar.id,
    kind: 'exception',
    start: { local: startParts, zone: master.isAllDay ? master.start.zone : zone },
    end: { local: endParts, zone: master.isAllDay ? master.end.zone : zone },
    seriesMasterId: master.id,
    originalStart: occurrence.originalStart as number,
    created: now,
    modified: now,
    changeKey: changeKey(),
  };
  delete exception.recurrence;
  delete exception.deleted;
  delete exception.transactionId;
  if (master.isAllDay) {
    exception.start = {
      local: localPartsAt(occurrence.start, master.start.zone.iana),
      zone: master.start.zone,
    };
    exception.end = { local: localPartsAt(occurrence.end, master.end.zone.iana), zone: master.end.zone };
  }
  return exception;
}

/** Drops a series' exceptions and deletions (Outlook does so when the series' pattern or times change). */
export function resetSeries(calendar: CalendarRecord, master: EventRecord): void {
  for (const event of [...calendar.events.values()]) {
    if (event.kind === 'exception' && event.seriesMasterId === master.id) {
      calendar.events.delete(event.id);
    }
  }
  master.deleted = new Set();
}
