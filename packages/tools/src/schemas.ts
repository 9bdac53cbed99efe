import { z } from 'zod';

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

export const calendarId = z
  .string()
  .min(1)
  .max(1024)
  .describe(
    "A calendar id from list_calendars (cal_…), or the account's own calendar id when unique; 'primary' is the primary calendar of the key's first-connected account.",
  );

export const eventDateTimeOut = z.object({
  dateTime: z.string().optional(),
  date: z.string().optional(),
  timeZone: z.string().optional(),
});

export const attendeeOut = z.object({
  email: z.string(),
  displayName: z.string().optional(),
  optional: z.boolean().optional(),
  organizer: z.boolean().optional(),
  self: z.boolean().optional(),
  responseStatus: z.string().optional(),
  comment: z.string().optional(),
});

/** An event as every read tool returns it. Text fields come from calendars: untrusted data. */
export const eventOut = z.object({
  id: z.string(),
  calendarId: z.string(),
  status: z.string(),
  summary: z.string().optional(),
  description: z.string().optional(),
  location: z.string().optional(),
  start: eventDateTimeOut,
  end: eventDateTimeOut,
  recurrence: z.array(z.string()).optional(),
  recurringEventId: z.string().optional(),
  originalStartTime: eventDateTimeOut.optional(),
  attendees: z.array(attendeeOut).optional(),
  organizer: z
    .object({
      email: z.string().optional(),
      displayName: z.string().optional(),
      self: z.boolean().optional(),
    })
    .optional(),
  reminders: z
    .object({
      useDefault: z.boolean(),
      overrides: z.array(z.object({ method: z.string(), minutes: z.number() })).optional(),
    })
    .optional(),
  transparency: z.string().optional().describe("Absent means 'opaque' (busy)."),
  visibility: z.string().optional().describe("Absent means 'default'."),
  colorId: z.string().optional(),
  htmlLink: z.string().optional(),
  updated: z.string().optional(),
});

export type EventOut = z.infer<typeof eventOut>;

/** Per-calendar failures of a fan-out, reported beside the results that did arrive. */
export const calendarErrors = z
  .array(z.object({ calendarId: z.string(), code: z.string(), message: z.string() }))
  .optional();
