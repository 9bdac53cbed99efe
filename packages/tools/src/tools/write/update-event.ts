import { z } from 'zod';
import type { CalendarAccess } from '../../access.ts';
import { type BookingServices, defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { noticeWarnings, timeZoneArg, timeZoneOut, withExactTimes } from '../../local-time.ts';
import { toEventOut } from '../../shape.ts';
import {
  eventCalendarIdIn,
  eventFieldsIn,
  eventIdIn,
  sanitizedOut,
  scopeIn,
  sendUpdatesIn,
  warningsOut,
  writtenEvent,
} from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import { followBookings } from '../bookings/follow.ts';
import { onEventCalendar } from '../read/locate.ts';
import { attendeesFrom, checkedRange, type EventFieldsArgs, patchFromArgs } from './common.ts';
import { applyScoped, type Scope } from './scoped.ts';

/** The fields one update may change; shared with batch_update_events. */
export const updateFields = {
  ...eventFieldsIn,
  status: z.enum(['confirmed', 'tentative', 'cancelled']).optional(),
  scope: scopeIn,
};

export const updateOut = z.object({
  timeZone: timeZoneOut,
  eventId: z
    .string()
    .describe('The event written: the series for scope all, the new series for thisAndFollowing.'),
  calendarId: z.string(),
  scope: z.enum(['thisEvent', 'thisAndFollowing', 'all']).optional(),
  changed: z.boolean().describe('False when the event already had these values.'),
  event: writtenEvent,
  warnings: warningsOut,
  sanitized: sanitizedOut,
});

export interface UpdateArgs extends EventFieldsArgs {
  /** Left out: the calendar among those the key can write that holds `eventId`. */
  calendarId?: string | undefined;
  eventId: string;
  scope?: Scope | undefined;
  sendUpdates?: 'all' | 'externalOnly' | 'none' | undefined;
  /** Reads local start/end and writes the answer; default the calendar's zone. */
  timeZone?: string | undefined;
}

/**
 * One guarded, scoped update of the event, on the calendar named or else the one found by
 * `eventId`; a not-found names where it looked. Used by update_event and each item of
 * batch_update_events, so both find events alike.
 */
export function runUpdate(
  access: CalendarAccess,
  args: UpdateArgs,
  signal: AbortSignal,
  prefix = '',
  booking?: BookingServices,
): Promise<z.output<typeof updateOut>> {
  return onEventCalendar(access, args.calendarId, args.eventId, signal, (calendarId) =>
    updateOn(access, { ...args, calendarId }, signal, prefix, booking),
  );
}

async function updateOn(
  access: CalendarAccess,
  given: UpdateArgs & { calendarId: string },
  signal: AbortSignal,
  prefix = '',
  booking?: BookingServices,
): Promise<z.output<typeof updateOut>> {
  const handle = access.writable(given.calendarId);
  const zone = callZone(access, given.timeZone, [handle]);
  const notices: string[] = [];
  const args = withExactTimes(given, zone, notices);
  const screen = new TextScreen();
  // Screen before any read: a refused text must leave the calendar untouched.
  const fields = patchFromArgs(args, screen, prefix);
  if (args.start !== undefined && args.end !== undefined) {
    checkedRange(args.start, args.end, handle.ref.timeZone);
  }
  const result = await applyScoped(
    handle,
    args.eventId,
    args.scope,
    (base) =>
      args.attendees === undefined
        ? fields
        : { ...fields, attendees: attendeesFrom(args.attendees, base.attendees) },
    { sendUpdates: args.sendUpdates, signal },
  );
  const warnings = [
    ...noticeWarnings(notices),
    ...(result.retried
      ? [
          {
            kind: 'note' as const,
            message:
              'The event changed meanwhile in other fields; this update was applied on top of that change.',
          },
        ]
      : []),
    ...result.notes.map((message) => ({ kind: 'note' as const, message })),
    ...(await followBookings(booking, handle, result.event)).map((message) => ({
      kind: 'note' as const,
      message,
    })),
  ];
  return {
    timeZone: zone,
    eventId: result.event.id,
    calendarId: handle.calendar.id,
    ...(result.scope ? { scope: result.scope } : {}),
    changed: result.written,
    event: toEventOut(handle.calendar.id, result.event, zone),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(screen.sanitized.length > 0 ? { sanitized: screen.sanitized } : {}),
  };
}

export const updateEvent = defineTool({
  name: 'update_event',
  toolset: 'calendar',
  title: 'Update event',
  description:
    'To change an existing event: move it, rename it, replace its attendees or recurrence; other fields stay.',
  notes:
    'Change some fields of an event (PATCH: omitted fields stay). Safe against concurrent edits: if someone else changed the same fields meanwhile, nothing is overwritten and the result says so. attendees replaces the list (use manage_attendees to add/remove).',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: eventCalendarIdIn,
    eventId: eventIdIn,
    ...updateFields,
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: updateOut,
  exampleIntent: 'Move my 3 pm meeting to 4 pm and rename it.',
  example: {
    eventId: 'abc123def456',
    reminders: { useDefault: false, overrides: [] },
    transparency: 'transparent',
  },
  exampleResult: { changed: true, event: { transparency: 'transparent', reminders: { useDefault: false } } },
  run(args, { access, booking, signal }) {
    return runUpdate(access, args, signal, '', booking);
  },
});
