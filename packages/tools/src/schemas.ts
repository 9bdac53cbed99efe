import { z } from 'zod';
import { explainedOnce } from './listed.ts';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch for a valid RFC 3339 date-time with an offset, else undefined. */
export function parseRfc3339(value: string): number | undefined {
  const match = RFC3339.exec(value);
  if (match === null) {
    return undefined;
  }
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const ms = Date.parse(value.toUpperCase());
  if (Number.isNaN(ms)) {
    return undefined;
  }
  // Date.parse rolls 2026-02-30 over to March; a calendar must not.
  const check = new Date(Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1));
  if (check.getUTCMonth() !== (mo ?? 1) - 1 || (h ?? 0) > 23 || (mi ?? 0) > 59 || (s ?? 0) > 60) {
    return undefined;
  }
  return ms;
}

const MIN_YEAR = 1900;
const MAX_YEAR = 2200;

/** An RFC 3339 date-time with an explicit offset, within years Calgate supports. */
export const instant = z
  .string()
  .max(64)
  .refine((value) => parseRfc3339(value) !== undefined, {
    message:
      'must be an RFC 3339 date-time with an offset, e.g. 2026-04-01T09:00:00Z or 2026-04-01T09:00:00-07:00',
  })
  .refine(
    (value) => {
      const year = new Date(parseRfc3339(value) ?? 0).getUTCFullYear();
      return year >= MIN_YEAR && year <= MAX_YEAR;
    },
    { message: `must fall between the years ${MIN_YEAR} and ${MAX_YEAR}` },
  );

export const calendarId = explainedOnce(
  z.string().min(1).max(1024),
  "Id from list_calendars; 'primary' = first account's primary.",
);

export const eventDateTimeOut = z.object({
  dateTime: z.string().optional(),
  date: z.string().optional(),
  timeZone: z.string().optional(),
});

/**
 * Fields of an event beyond those `eventOut` types, in the order results carry them. Spelled
 * out once in the schema's description rather than typed: the full nested schema repeated in
 * every tool that returns events cost agents ~450 tokens per tool on each tools/list.
 */
export const EVENT_EXTRA_FIELDS = [
  'description',
  'location',
  'recurrence',
  'recurringEventId',
  'originalStartTime',
  'attendees',
  'organizer',
  'reminders',
  'transparency',
  'visibility',
  'colorId',
  'htmlLink',
  'updated',
] as const;

/**
 * An event as every read tool returns it, Google Calendar's shape. Text fields come from
 * calendars: untrusted data, screened by the tool wrapper (firewall/answers.ts), which adds
 * `flagged` and `organizerOutside` (described, not typed, like the fields above).
 */
export const eventOut = z
  .looseObject({
    id: z.string(),
    calendarId: z.string(),
    status: z.string(),
    summary: z.string().optional(),
    start: eventDateTimeOut,
    end: eventDateTimeOut,
  })
  .describe(
    'Also when set: description, location, recurrence[], recurringEventId, originalStartTime, attendees[{email,displayName,optional,organizer,self,responseStatus,comment}], organizer{email,displayName,self}, reminders, transparency (absent: opaque), visibility, colorId, htmlLink, updated, flagged[{field,reason}], organizerOutside.',
  );

export type EventOut = z.infer<typeof eventOut>;

/** When an answer was read from Calgate's mirror of some calendars: the oldest sync it reflects. */
export const syncedAtOut = z
  .string()
  .optional()
  .describe('Oldest mirror sync reflected, when read from the mirror.');

/** Per-calendar failures of a fan-out, reported beside the results that did arrive. */
export const calendarErrors = z
  .array(z.object({ calendarId: z.string(), code: z.string(), message: z.string() }))
  .optional();
