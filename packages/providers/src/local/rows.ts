/** Stored rows to Google-shaped events, and the small rules about ids and ETags. */
import { createHash, randomInt } from 'node:crypto';
import { CalgateError, isoInstant, parseDateTime } from '@calgate/core';
import type { LocalEventRow } from '@calgate/store';
import type { CalendarEvent, CalendarRef, EventDateTime } from '../types.ts';
import { toEventDateTime } from './times.ts';

export const EVENT_ID = /^[a-v0-9]{5,1024}$/;
/** Rows one list request reads at most; windows are bounded by the tools, this bounds the rest. */
export const MAX_ROWS = 20_000;
export const MAX_INSTANCES = 10_000;
/** `<masterId>_<20260105T080000Z>` or `<masterId>_<20260105>` (all-day series). */
const INSTANCE_ID = /^([a-v0-9]{5,1024})_(\d{8}(?:T\d{6}Z)?)$/;

export function newEtag(): string {
  return `"${Date.now()}${String(randomInt(0, 1_000_000)).padStart(6, '0')}"`;
}

export function notFound(eventId: string): CalgateError {
  return new CalgateError('not_found', `Event '${eventId}' was not found in this calendar.`, {
    context: { eventId },
  });
}

export function parseBound(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) {
    return undefined;
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new CalgateError('invalid_argument', `${name} '${value}' is not an RFC 3339 date-time.`);
  }
  return new Date(ms);
}

export function toEvent(row: LocalEventRow, calendar: CalendarRef): CalendarEvent {
  const event: CalendarEvent = {
    id: row.id,
    status: row.status as CalendarEvent['status'],
    start: toEventDateTime(row.allDay, row.startDate, row.startAt, row.startTimeZone, calendar.timeZone),
    end: toEventDateTime(row.allDay, row.endDate, row.endAt, row.endTimeZone, calendar.timeZone),
    iCalUID: row.iCalUid,
    etag: row.etag,
    sequence: row.sequence,
    created: isoInstant(row.createdAt.getTime()),
    updated: isoInstant(row.updatedAt.getTime()),
    transparency: row.transparency as CalendarEvent['transparency'],
    visibility: row.visibility as CalendarEvent['visibility'],
  };
  if (row.summary !== null) {
    event.summary = row.summary;
  }
  if (row.description !== null) {
    event.description = row.description;
  }
  if (row.location !== null) {
    event.location = row.location;
  }
  if (row.recurrence.length > 0) {
    event.recurrence = row.recurrence;
  }
  if (row.recurringEventId !== null && row.originalStartTime !== null) {
    event.recurringEventId = row.recurringEventId;
    event.originalStartTime = toEventDateTime(
      row.allDay,
      null,
      row.originalStartTime,
      row.startTimeZone,
      calendar.timeZone,
    );
  }
  if (Array.isArray(row.attendees)) {
    event.attendees = row.attendees as CalendarEvent['attendees'];
  }
  if (row.reminders !== null && typeof row.reminders === 'object') {
    event.reminders = row.reminders as CalendarEvent['reminders'];
  }
  if (row.colorId !== null) {
    event.colorId = row.colorId;
  }
  return event;
}

/** The start instant an instance-id suffix names: `20260105T080000Z`, or a date in the calendar's zone. */
export function instantOfKey(key: string, calendarZone: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z)?$/.exec(key);
  if (m === null) {
    return null;
  }
  const text = `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${m[4] === undefined ? '' : 'Z'}`;
  const parsed = parseDateTime(text, calendarZone);
  return parsed.ok ? parsed.value : null;
}

export function startKey(event: CalendarEvent): number {
  return Date.parse(event.start.dateTime ?? `${event.start.date}T00:00:00Z`);
}

/**
 * startKey of an event made from a row or series instance starting at `startMs`: a timed start's
 * text is that instant written out (formatInstant round-trips), so only all-day dates are parsed.
 */
export function startKeyAt(event: CalendarEvent, startMs: number): number {
  return event.start.dateTime === undefined ? startKey(event) : startMs;
}

/**
 * An unmodified instance's ETag: stable while the series is unchanged, different for every
 * instance, and new whenever the master changes (its ETag does).
 */
export function instanceEtag(masterEtag: string, key: string): string {
  return `"${createHash('sha256').update(`${masterEtag}/${key}`).digest('hex').slice(0, 20)}"`;
}

export function parseInstanceId(eventId: string): { masterId: string; key: string } | null {
  const match = INSTANCE_ID.exec(eventId);
  return match === null ? null : { masterId: match[1] ?? '', key: match[2] ?? '' };
}

/** Single events and exceptions by their own times: Google's window semantics. */
export function rowInWindow(
  row: LocalEventRow,
  timeMin: Date | undefined,
  timeMax: Date | undefined,
): boolean {
  const start = row.startAt.getTime();
  const end = row.endAt.getTime();
  return (
    (timeMax === undefined || start < timeMax.getTime()) &&
    (timeMin === undefined || end > timeMin.getTime() || (end === start && start >= timeMin.getTime()))
  );
}

/** The instant a start or end stands for: all-day dates are midnights in the calendar's zone. */
export function instantOf(value: EventDateTime, calendarZone: string): number {
  const parsed =
    value.date !== undefined
      ? parseDateTime(`${value.date}T00:00:00`, calendarZone)
      : parseDateTime(value.dateTime ?? '', value.timeZone ?? calendarZone);
  return parsed.ok ? parsed.value : Number.NaN;
}
