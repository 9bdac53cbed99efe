import {
  CalgateError,
  formatInstant,
  toLocal,
  utcOffsetMinutes,
  validateTimeZone,
  weekdayOf,
} from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { explainedOnce } from '../../listed.ts';
import { calendarId } from '../../schemas.ts';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** `+05:45`, `-03:00`, `+00:00`. */
export function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export const getCurrentTime = defineTool({
  name: 'get_current_time',
  toolset: 'calendar',
  title: 'Current time',
  description: "For today's date and the time now, before working out a relative date such as 'tomorrow'.",
  notes:
    "Now in an IANA zone or a calendar's zone (default: the key's zone, else the workspace's, else its default calendar's, else UTC): date-time with offset, UTC offset, weekday.",
  access: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({
    timeZone: explainedOnce(z.string().min(1).max(64).optional(), 'IANA zone, e.g. Asia/Kathmandu.'),
    calendarId: calendarId.optional().describe("Use this calendar's zone."),
  }),
  output: z.object({
    dateTime: z.string(),
    utc: z.string(),
    timeZone: z.string(),
    utcOffset: z.string(),
    weekday: z.string(),
  }),
  exampleIntent: "What's the date and time right now in Tokyo?",
  example: { timeZone: 'Asia/Kathmandu' },
  exampleResult: { timeZone: 'Asia/Kathmandu', utcOffset: '+05:45' },
  async run(args, { access, now }) {
    if (args.timeZone !== undefined && args.calendarId !== undefined) {
      throw new CalgateError('invalid_argument', 'Pass timeZone or calendarId, not both.');
    }
    let zone: string;
    if (args.timeZone !== undefined) {
      const checked = validateTimeZone(args.timeZone);
      if (!checked.ok) {
        throw checked.error;
      }
      zone = checked.value;
    } else if (args.calendarId !== undefined) {
      zone = access.readable(args.calendarId).calendar.timeZone;
    } else {
      zone = access.timeZone();
    }
    const instant = Math.floor(now().getTime() / 1000) * 1000;
    const local = toLocal(instant, zone);
    return {
      dateTime: formatInstant(instant, zone),
      utc: formatInstant(instant),
      timeZone: zone,
      utcOffset: formatOffset(utcOffsetMinutes(instant, zone)),
      weekday: WEEKDAYS[weekdayOf(local)] ?? '',
    };
  },
});
