/**
 * Turning a request body into stored event data: Google's patch and update semantics, its
 * checks on every writable field, and the read-only fields it ignores or keeps.
 */
import { apiErrors } from '../errors.ts';
import type { CalendarRecord, EventDateTime } from '../state.ts';
import { validateRecurrence } from './series.ts';
import { checkEventTime, resolveTime } from './times.ts';

/** Fields a client may not set (Google ignores them, or keeps the stored value). */
const READ_ONLY = new Set([
  'kind',
  'etag',
  'id',
  'htmlLink',
  'created',
  'updated',
  'creator',
  'organizer',
  'recurringEventId',
  'hangoutLink',
  'iCalUID',
  'locked',
  'attendeesOmitted',
  'eventType',
]);

const STATUSES = new Set(['confirmed', 'tentative', 'cancelled']);
const TRANSPARENCIES = new Set(['opaque', 'transparent']);
const VISIBILITIES = new Set(['default', 'public', 'private', 'confidential']);
export const EVENT_TYPES = new Set(['default', 'outOfOffice', 'focusTime', 'workingLocation', 'birthday']);
const RESPONSES = new Set(['needsAction', 'declined', 'tentative', 'accepted']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON merge for PATCH: objects merge recursively, arrays and scalars replace, null clears. */
export function mergePatch(
  target: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete out[key];
    } else if (isObject(value) && isObject(out[key])) {
      out[key] = mergePatch(out[key] as Record<string, unknown>, value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** The client-writable part of stored data (what a PATCH merges into). */
export function writableOf(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!READ_ONLY.has(key)) {
      out[key] = structuredClone(value);
    }
  }
  return out;
}

function checkString(body: Record<string, unknown>, field: string): void {
  const v = body[field];
  if (v !== undefined && typeof v !== 'string') {
    throw apiErrors.invalid(`Invalid value for field '${field}'.`);
  }
}

function checkEnum(body: Record<string, unknown>, field: string, allowed: Set<string>): void {
  const v = body[field];
  if (v !== undefined && (typeof v !== 'string' || !allowed.has(v))) {
    throw apiErrors.invalid(`Invalid value for field '${field}': ${String(v)}`);
  }
}

function checkAttendees(value: unknown): Record<string, unknown>[] | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (!Array.isArray(value)) {
    throw apiErrors.invalid('Invalid attendees.');
  }
  return value.map((a: unknown) => {
    if (!isObject(a) || a.email === undefined) {
      throw apiErrors.required('Missing attendee email.');
    }
    if (typeof a.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(a.email)) {
      throw apiErrors.invalid('Invalid attendee email.');
    }
    const status = a.responseStatus ?? 'needsAction';
    if (typeof status !== 'string' || !RESPONSES.has(status)) {
      throw apiErrors.invalid('Invalid attendee response status.');
    }
    const out: Record<string, unknown> = { ...a, email: a.email.toLowerCase(), responseStatus: status };
    delete out.self;
    delete out.organizer;
    return out;
  });
}

function checkReminders(value: unknown): Record<string, unknown> {
  if (value === undefined) {
    return { useDefault: true };
  }
  if (!isObject(value)) {
    throw apiErrors.invalid('Invalid reminders.');
  }
  const overrides = value.overrides;
  if (overrides !== undefined) {
    if (!Array.isArray(overrides) || overrides.length > 5) {
      throw apiErrors.invalid('Invalid reminder overrides.');
    }
    for (const o of overrides) {
      const ok =
        isObject(o) &&
        (o.method === 'email' || o.method === 'popup') &&
        Number.isInteger(o.minutes) &&
        (o.minutes as number) >= 0 &&
        (o.minutes as number) <= 40320;
      if (!ok) {
        throw apiErrors.invalid('Invalid reminder override.');
      }
    }
    if (value.useDefault === true && overrides.length > 0) {
      throw apiErrors.badRequest(
        'cannotUseDefaultRemindersAndSpecifyOverride',
        'Cannot specify both default reminders and overrides at the same time.',
      );
    }
  }
  return { useDefault: value.useDefault === true, ...(overrides === undefined ? {} : { overrides }) };
}

export interface NormalizeOptions {
  calendar: CalendarRecord;
  /** Instances of a series carry no recurrence of their own. */
  instance?: boolean;
}

/** Validates and normalises the writable fields of a candidate event. */
export function normalizeWritable(
  candidate: Record<string, unknown>,
  options: NormalizeOptions,
): Record<string, unknown> {
  const { calendar } = options;
  const body = writableOf(candidate);
  for (const field of ['summary', 'description', 'location', 'colorId']) {
    checkString(body, field);
  }
  if (body.colorId !== undefined && !/^(?:[1-9]|1[01])$/.test(body.colorId as string)) {
    throw apiErrors.invalid('Invalid color ID.');
  }
  checkEnum(body, 'status', STATUSES);
  checkEnum(body, 'transparency', TRANSPARENCIES);
  checkEnum(body, 'visibility', VISIBILITIES);
  const start = checkEventTime(body.start, 'start');
  const end = checkEventTime(body.end, 'end');
  if ((start.date === undefined) !== (end.date === undefined)) {
    throw apiErrors.badRequest(
      'invalid',
      'Start and end times must either both be date or both be dateTime.',
    );
  }
  if (resolveTime(end, calendar.timeZone).ms < resolveTime(start, calendar.timeZone).ms) {
    throw apiErrors.timeRangeEmpty();
  }
  if (start.date !== undefined && end.date !== undefined && end.date <= start.date) {
    throw apiErrors.timeRangeEmpty();
  }
  body.start = start;
  body.end = end;
  if (body.recurrence !== undefined && !(Array.isArray(body.recurrence) && body.recurrence.length === 0)) {
    if (options.instance) {
      throw apiErrors.invalid('Invalid recurrence rule.');
    }
    if (start.dateTime !== undefined && start.timeZone === undefined) {
      throw apiErrors.required('Missing time zone definition for start time.');
    }
    if (end.dateTime !== undefined && end.timeZone === undefined) {
      throw apiErrors.required('Missing time zone definition for end time.');
    }
    body.recurrence = validateRecurrence(body.recurrence, start, end, calendar.timeZone);
  } else {
    delete body.recurrence;
  }
  const attendees = checkAttendees(body.attendees);
  if (attendees === undefined || attendees.length === 0) {
    delete body.attendees;
  } else {
    body.attendees = attendees;
  }
  body.reminders = checkReminders(body.reminders);
  if (body.sequence !== undefined && (!Number.isInteger(body.sequence) || (body.sequence as number) < 0)) {
    throw apiErrors.invalid('Invalid sequence value.');
  }
  body.status ??= 'confirmed';
  return body;
}

/** Whether a change is "significant" in RFC 5545's sense and so bumps `sequence`. */
export function isSignificantChange(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): boolean {
  return ['start', 'end', 'recurrence', 'status'].some(
    (field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]),
  );
}

/** The sequence after a change; a client-supplied one may not go backwards. */
export function nextSequence(current: number, requested: unknown, significant: boolean): number {
  if (typeof requested === 'number') {
    if (requested < current) {
      throw apiErrors.invalid(
        'Invalid sequence value. The specified sequence number is below the current sequence number of the resource.',
      );
    }
    return requested;
  }
  return significant ? current + 1 : current;
}

/** Fields only the organizer may change (unless guests can modify). */
const ORGANIZER_ONLY = ['summary', 'description', 'location', 'start', 'end', 'recurrence'];

export function changesOrganizerFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): boolean {
  const emails = (d: Record<string, unknown>) =>
    JSON.stringify(((d.attendees as { email: string }[] | undefined) ?? []).map((a) => a.email).sort());
  return (
    ORGANIZER_ONLY.some((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f])) ||
    emails(before) !== emails(after)
  );
}

export function startOf(data: Record<string, unknown>): EventDateTime {
  return data.start as EventDateTime;
}

export function endOf(data: Record<string, unknown>): EventDateTime {
  return data.end as EventDateTime;
}
