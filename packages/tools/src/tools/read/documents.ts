/**
 * Text of the documents that `search` and `fetch` answer: titles that say when an event recurs,
 * and a body with attendees and the all-day end rule spelled out, so a connector that only reads
 * text does not misread a calendar.
 */
import { type Frequency, parseRRule } from '@calgate/core';
import type { CalendarEvent, EventAttendee, EventDateTime } from '@calgate/providers';
import type { CalendarHandle, KeyCalendar } from '../../access.ts';
import { DAY_MS } from './common.ts';

const UNITS: Record<Frequency, [once: string, unit: string]> = {
  YEARLY: ['yearly', 'year'],
  MONTHLY: ['monthly', 'month'],
  WEEKLY: ['weekly', 'week'],
  DAILY: ['daily', 'day'],
  HOURLY: ['hourly', 'hour'],
  MINUTELY: ['every minute', 'minute'],
  SECONDLY: ['every second', 'second'],
};

/** "repeats weekly", "repeats every 2 weeks", or "repeats" when the rule says no more. */
export function describeRepeat(recurrence: readonly string[] | undefined): string {
  const line = recurrence?.find((entry) => /^RRULE[:;]/i.test(entry));
  const parsed = line === undefined ? undefined : parseRRule(line.replace(/^RRULE[:;]/i, ''));
  if (parsed === undefined || !parsed.ok) {
    return 'repeats';
  }
  const [once, unit] = UNITS[parsed.value.freq];
  return parsed.value.interval > 1 ? `repeats every ${parsed.value.interval} ${unit}s` : `repeats ${once}`;
}

/**
 * How an occurrence's series repeats, read from its master; "repeats" when the master cannot be
 * read (the occurrence is still worth returning).
 */
export async function seriesRepeat(
  handle: CalendarHandle | undefined,
  event: CalendarEvent,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (event.recurringEventId === undefined) {
    return undefined;
  }
  if (handle === undefined) {
    return 'repeats';
  }
  try {
    const master = await handle.provider.getEvent(handle.ref, event.recurringEventId, signal);
    return describeRepeat(master.recurrence);
  } catch {
    return 'repeats';
  }
}

export function documentTitle(event: CalendarEvent, repeat?: string): string {
  const start = event.start.dateTime ?? event.start.date ?? '';
  return `${event.summary?.trim() || '(no title)'} (${start}${repeat === undefined ? '' : `, ${repeat}`})`;
}

function when(time: EventDateTime): string {
  if (time.dateTime !== undefined) {
    return time.timeZone === undefined ? time.dateTime : `${time.dateTime} (${time.timeZone})`;
  }
  return time.date === undefined ? '' : `${time.date} (all day)`;
}

/** Google's all-day end date is the day after the last one; say so, with the last day. */
function allDayEnd(date: string): string {
  const last = new Date(Date.parse(`${date}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
  return `${date} (all-day; the end date ${date} is exclusive: last day ${last})`;
}

const RESPONSES: Record<NonNullable<EventAttendee['responseStatus']>, string> = {
  accepted: 'accepted',
  declined: 'declined',
  tentative: 'tentative',
  needsAction: 'no answer yet',
};

function attendeeLine(attendee: EventAttendee, organizerEmail: string | undefined): string {
  const notes = [
    RESPONSES[attendee.responseStatus ?? 'needsAction'],
    attendee.organizer === true || attendee.email === organizerEmail ? 'organizer' : '',
    attendee.optional === true ? 'optional' : '',
  ].filter((note) => note !== '');
  const name = attendee.displayName === undefined ? '' : ` (${attendee.displayName})`;
  return `- ${attendee.email}${name}: ${notes.join(', ')}`;
}

/** Attendee lines, with the organizer named apart when no attendee is marked as such. */
function attendeeLines(event: CalendarEvent): string[] {
  const attendees = event.attendees ?? [];
  if (attendees.length === 0) {
    return [];
  }
  const organizer = event.organizer?.email;
  const marked = attendees.some((attendee) => attendee.organizer === true || attendee.email === organizer);
  const lines =
    organizer !== undefined && !marked
      ? [
          `Organizer: ${organizer}${event.organizer?.displayName === undefined ? '' : ` (${event.organizer.displayName})`}`,
        ]
      : [];
  return [...lines, 'Attendees:', ...attendees.map((attendee) => attendeeLine(attendee, organizer))];
}

export function documentText(calendar: Pick<KeyCalendar, 'summary'>, event: CalendarEvent): string {
  const end =
    event.end.date !== undefined && event.end.dateTime === undefined
      ? allDayEnd(event.end.date)
      : when(event.end);
  return [
    `Title: ${event.summary ?? ''}`,
    `Calendar: ${calendar.summary}`,
    `Start: ${when(event.start)}`,
    `End: ${end}`,
    `Location: ${event.location ?? ''}`,
    ...attendeeLines(event),
    `Description: ${event.description ?? ''}`,
  ].join('\n');
}
