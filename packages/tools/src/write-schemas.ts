/**
 * Zod schemas shared by the tools that write: Google-style start/end objects, attendees,
 * reminders, recurrence, and the compact result shapes. Descriptions stay short: every word
 * here is sent to every agent in tools/list.
 */
import { formatInstant, isValidTimeZone, parseDate, parseDateTime, suggestTimeZone } from '@calgate/core';
import { z } from 'zod';
import { explainedOnce, LISTED, listedAsDescription } from './listed.ts';
import { instantProblem } from './local-time.ts';
import { parseRfc3339 } from './schemas.ts';

const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;
const EMAIL = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+\.[^\s@<>(),;:"[\]\\]{2,}$/;

/** Whether `value` is a plain email address (no display name, no brackets). */
export function isEmail(value: string): boolean {
  return value.length <= 320 && EMAIL.test(value) && !value.includes('..');
}

// Formats are checked by refinements, which tools/list does not spell out: fewer tokens per call.
export const timeZoneIn = z.string().superRefine((value, context) => {
  if (value.length > 64 || !isValidTimeZone(value)) {
    const suggestion = suggestTimeZone(value);
    context.addIssue({
      code: 'custom',
      message:
        suggestion === undefined
          ? 'must be an IANA time zone such as Europe/Berlin'
          : `must be an IANA time zone such as Europe/Berlin: did you mean '${suggestion}'?`,
    });
  }
});

/** A calendar id, described briefly: write tools repeat it in every schema. */
export const writeCalendarId = explainedOnce(
  z.string().min(1).max(1024),
  "From list_calendars; default 'primary'.",
);

/** The calendarId of a tool that finds an event by its id when no calendar is named. */
export const eventCalendarIdIn = explainedOnce(writeCalendarId.optional(), 'Default: found by eventId.');

export const eventTimeIn = z
  .strictObject({
    dateTime: z.string().optional(),
    date: z.string().optional(),
    timeZone: timeZoneIn.optional(),
  })
  .superRefine((value, ctx) => {
    if ((value.dateTime === undefined) === (value.date === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'give exactly one of dateTime (timed) or date (all-day, YYYY-MM-DD)',
      });
      return;
    }
    if (value.date !== undefined && (value.date.length !== 10 || !parseDate(value.date).ok)) {
      ctx.addIssue({ code: 'custom', path: ['date'], message: `'${value.date}' is not a YYYY-MM-DD date` });
    }
    const dateTime = value.dateTime;
    const disagreement =
      dateTime !== undefined && value.timeZone !== undefined
        ? offsetDisagreement(dateTime, value.timeZone)
        : undefined;
    if (disagreement !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['dateTime'], message: disagreement });
    }
    // A local date-time (no offset) is read in timeZone, else the call's zone (see local-time.ts).
    if (dateTime !== undefined && (dateTime.length > 64 || parseRfc3339(dateTime) === undefined)) {
      if (!LOCAL_DATE_TIME.test(dateTime) || instantProblem(dateTime) !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['dateTime'],
          message: `'${dateTime}' is not an RFC 3339 date-time such as 2026-04-20T09:00:00-07:00 or a local date-time such as 2026-04-20T09:00:00`,
        });
      }
    }
  })
  .meta({ description: '{dateTime, timeZone?} or {date}', [LISTED]: 'description' });

/** An event's end: described once as start is, in fewer words. */
export const eventEndIn = eventTimeIn.meta({
  description: 'Like start; an all-day end is exclusive.',
  [LISTED]: 'description',
});

/**
 * Why a date-time's own offset and its timeZone name different moments, if they do: Google
 * silently keeps the offset, so 09:00-07:00 "in America/Denver" in April lands at 10:00 local.
 */
export function offsetDisagreement(dateTime: string, timeZone: string): string | undefined {
  const instantMs = parseRfc3339(dateTime);
  if (instantMs === undefined || !isValidTimeZone(timeZone)) {
    return undefined;
  }
  const wallClock = dateTime.slice(0, 19);
  // Compared as wall-clock text, so either reading of a repeated hour (DST ends) is accepted.
  const local = parseDateTime(wallClock, timeZone);
  if (!local.ok || formatInstant(instantMs, timeZone).slice(0, 19) === wallClock) {
    return undefined;
  }
  return `'${dateTime}' and timeZone ${timeZone} disagree: the offset means ${formatInstant(instantMs, timeZone)} in ${timeZone}, while ${wallClock.slice(11, 16)} in ${timeZone} is ${formatInstant(local.value, timeZone)}. Give the offset ${timeZone} has then, or leave the offset out`;
}

export const emailIn = z
  .string()
  .max(320)
  .superRefine((value, ctx) => {
    if (!isEmail(value.trim())) {
      ctx.addIssue({ code: 'custom', message: `'${value}' is not a valid email address` });
    }
  });

export const attendeesIn = explainedOnce(z.array(emailIn).max(200), 'Email addresses.');

export const remindersIn = listedAsDescription(
  z.strictObject({
    useDefault: z.boolean(),
    overrides: z
      .array(
        z.strictObject({
          method: z.enum(['email', 'popup']),
          minutes: z.number().int().min(0).max(40320),
        }),
      )
      .max(5)
      .optional(),
  }),
  '{useDefault, overrides?: [{method: email|popup, minutes}]}',
);

export const recurrenceIn = z
  .array(
    z
      .string()
      .max(2000)
      .refine((line) => /^(RRULE|EXRULE|RDATE|EXDATE)[:;]/i.test(line), {
        message: 'must start with RRULE:, EXDATE:, RDATE: or EXRULE:',
      }),
  )
  .max(20)
  .describe('e.g. ["RRULE:FREQ=WEEKLY;COUNT=10"]');

export const eventIdIn = z.string().min(1).max(1100);

export const sendUpdatesIn = explainedOnce(
  z.enum(['all', 'externalOnly', 'none']).optional(),
  'Invitation emails; default none.',
);

export const scopeIn = explainedOnce(
  z.enum(['thisEvent', 'thisAndFollowing', 'all']).optional(),
  'Default: thisEvent for an occurrence id, all for a series id.',
);

/** Fields an event can be given on create and changed on update (PATCH: absent = unchanged). */
export const eventFieldsIn = {
  summary: z.string().max(1024).optional(),
  description: z.string().max(8192).optional(),
  location: z.string().max(1024).optional(),
  start: eventTimeIn.optional(),
  end: eventEndIn.optional(),
  attendees: attendeesIn.optional(),
  reminders: remindersIn.optional(),
  recurrence: recurrenceIn.optional(),
  transparency: explainedOnce(z.enum(['opaque', 'transparent']).optional(), 'opaque = busy (default).'),
  visibility: z.enum(['default', 'public', 'private', 'confidential']).optional(),
  colorId: z
    .string()
    .refine((id) => /^([1-9]|1[01])$/.test(id), { message: 'must be a color id from 1 to 11' })
    .optional()
    .describe('1-11'),
};

/** The event as stored; every field list_events returns may be present. */
export const writtenEvent = z
  .looseObject({ id: z.string(), calendarId: z.string() })
  .describe('As list_events returns events.');

export const sanitizedOut = z.array(z.object({ field: z.string(), removed: z.array(z.string()) })).optional();

export const warningsOut = z
  .array(
    z.object({
      kind: z.enum(['conflict', 'duplicate', 'differs', 'note']),
      message: z.string(),
      eventId: z.string().optional(),
    }),
  )
  .optional();

export type Warning = NonNullable<z.infer<typeof warningsOut>>[number];
