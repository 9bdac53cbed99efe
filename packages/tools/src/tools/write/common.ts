/** Helpers shared by the write tools: times, attendees, ids and the text firewall on inputs. */
import { createHash } from 'node:crypto';
import { CalgateError, formatInstant, isCalgateError, parseDateTime } from '@calgate/core';
import type { CalendarEvent, EventAttendee, EventDateTime, EventPatch } from '@calgate/providers';
import type { TextScreen } from '../../firewall.ts';

/** Calendar used when a write tool gets no calendarId, as in Google's API. */
export const DEFAULT_CALENDAR = 'primary';

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * An event id (Google's base32hex alphabet) derived from its parts, so the same request always
 * names the same event: a retried create finds the first one instead of making a second.
 */
export function derivedEventId(...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

/** The instant an event time starts (all-day dates at midnight in `timeZone`), in epoch ms. */
export function instantOf(time: EventDateTime, timeZone: string): number {
  const text = time.dateTime ?? `${time.date}T00:00:00`;
  const parsed = parseDateTime(text, time.date === undefined ? (time.timeZone ?? timeZone) : timeZone);
  if (!parsed.ok) {
    throw new CalgateError('invalid_argument', parsed.error.message);
  }
  return parsed.value;
}

/** Start and end in epoch ms, checked: same kind (timed or all-day) and end after start. */
export function checkedRange(
  start: EventDateTime,
  end: EventDateTime,
  timeZone: string,
): { start: number; end: number } {
  if ((start.date === undefined) !== (end.date === undefined)) {
    throw new CalgateError(
      'invalid_argument',
      'start and end must both be timed ({dateTime}) or both all-day ({date}).',
    );
  }
  const range = { start: instantOf(start, timeZone), end: instantOf(end, timeZone) };
  if (range.end <= range.start) {
    throw new CalgateError(
      'invalid_argument',
      start.date === undefined
        ? 'end must be later than start.'
        : 'end.date must be after start.date: all-day end dates are exclusive (a one-day event on 2026-04-20 ends on 2026-04-21).',
    );
  }
  return range;
}

/**
 * The patch for `base` with a new start alone moving the event and keeping its length (days for
 * all-day events); a new end alone must still come after the start, checked as create_event
 * checks it. `base` is what the patch applies to: one event, one occurrence, a series' master
 * (its first occurrence) or the first occurrence of a series split off.
 */
export function keepDuration(patch: EventPatch, base: CalendarEvent, timeZone: string): EventPatch {
  if (patch.start === undefined && patch.end === undefined) {
    return patch;
  }
  if (patch.start !== undefined && patch.end === undefined) {
    const allDay = patch.start.date !== undefined;
    if (allDay !== (base.start.date !== undefined)) {
      throw new CalgateError(
        'invalid_argument',
        'The new start switches between timed and all-day: pass end as well.',
      );
    }
    if (allDay) {
      const days = Date.parse(`${base.end.date}T00:00:00Z`) - Date.parse(`${base.start.date}T00:00:00Z`);
      const end = new Date(Date.parse(`${patch.start.date}T00:00:00Z`) + days).toISOString().slice(0, 10);
      return { ...patch, end: { date: end } };
    }
    const length = instantOf(base.end, timeZone) - instantOf(base.start, timeZone);
    const zone = patch.start.timeZone ?? base.end.timeZone;
    const end = instantOf(patch.start, timeZone) + length;
    return {
      ...patch,
      end: {
        dateTime: formatInstant(end, zone ?? timeZone),
        ...(zone === undefined ? {} : { timeZone: zone }),
      },
    };
  }
  checkedRange(patch.start ?? base.start, patch.end ?? base.end, timeZone);
  return patch;
}

/** Lowercased, trimmed: attendee emails compare case-insensitively. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/** Emails de-duplicated case-insensitively, first spelling kept. */
export function uniqueEmails(emails: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of emails) {
    const email = raw.trim();
    if (!seen.has(emailKey(email))) {
      seen.add(emailKey(email));
      out.push(email);
    }
  }
  return out;
}

/** An attendee list from emails, keeping what the event already knows about each person. */
export function attendeesFrom(emails: readonly string[], existing: readonly EventAttendee[] = []) {
  const known = new Map(existing.map((attendee) => [emailKey(attendee.email), attendee]));
  return uniqueEmails(emails).map((email) => known.get(emailKey(email)) ?? { email });
}

export interface EventFieldsArgs {
  summary?: string | undefined;
  description?: string | undefined;
  location?: string | undefined;
  start?: EventDateTime | undefined;
  end?: EventDateTime | undefined;
  attendees?: string[] | undefined;
  reminders?: EventPatch['reminders'] | undefined;
  recurrence?: string[] | undefined;
  transparency?: EventPatch['transparency'] | undefined;
  visibility?: EventPatch['visibility'] | undefined;
  colorId?: string | undefined;
  status?: EventPatch['status'] | undefined;
}

/**
 * The PATCH an agent's fields describe, with text screened by the firewall (`prefix` names the
 * place in the arguments for messages, e.g. `updates.3.`). Attendees keep their stored details.
 */
export function patchFromArgs(
  args: EventFieldsArgs,
  screen: TextScreen,
  prefix = '',
  current?: CalendarEvent,
): EventPatch {
  const patch: EventPatch = {};
  const summary = screen.text(`${prefix}summary`, args.summary);
  const description = screen.text(`${prefix}description`, args.description);
  const location = screen.text(`${prefix}location`, args.location);
  if (summary !== undefined) {
    patch.summary = summary;
  }
  if (description !== undefined) {
    patch.description = description;
  }
  if (location !== undefined) {
    patch.location = location;
  }
  if (args.start !== undefined) {
    patch.start = args.start;
  }
  if (args.end !== undefined) {
    patch.end = args.end;
  }
  if (args.attendees !== undefined) {
    patch.attendees = attendeesFrom(args.attendees, current?.attendees);
  }
  for (const key of ['reminders', 'recurrence', 'transparency', 'visibility', 'colorId', 'status'] as const) {
    if (args[key] !== undefined) {
      (patch as Record<string, unknown>)[key] = args[key];
    }
  }
  return patch;
}

/** Whether a provider error says the event is already gone (Google's 410, a local tombstone). */
export function isAlreadyDeleted(error: unknown): boolean {
  return isCalgateError(error) && error.code === 'not_found' && error.context.alreadyDeleted === true;
}

export function isCode(error: unknown, code: CalgateError['code']): error is CalgateError {
  return isCalgateError(error) && error.code === code;
}

/** `09:00–09:30 'Standup'` style label for messages. */
export function describeEvent(event: CalendarEvent): string {
  const when = event.start.dateTime ?? event.start.date ?? '?';
  return `'${event.summary ?? '(no title)'}' (${event.id}, ${when})`;
}

/**
 * Recurring timed events need a time zone to expand in (Google refuses them without one): a
 * start or end without one gets the calendar's. The instant does not change.
 */
export function withSeriesZone<
  T extends { start?: EventDateTime; end?: EventDateTime; recurrence?: string[] },
>(fields: T, timeZone: string, recurring = (fields.recurrence?.length ?? 0) > 0): T {
  if (!recurring) {
    return fields;
  }
  const zoned = (time: EventDateTime | undefined) =>
    time?.dateTime !== undefined && time.timeZone === undefined ? { ...time, timeZone } : time;
  const out = { ...fields };
  if (fields.start !== undefined) {
    out.start = zoned(fields.start);
  }
  if (fields.end !== undefined) {
    out.end = zoned(fields.end);
  }
  return out;
}
