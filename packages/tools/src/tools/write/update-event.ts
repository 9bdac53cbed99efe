import { CalgateError, formatInstant } from '@calgate/core';
import type { CalendarEvent, EventPatch } from '@calgate/providers';
import { z } from 'zod';
import type { CalendarAccess } from '../../access.ts';
import { type BookingServices, defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { noticeWarnings, timeZoneArg, timeZoneOut, withExactTimes } from '../../local-time.ts';
import { toEventOut } from '../../shape.ts';
import {
  eventFieldsIn,
  eventIdIn,
  sanitizedOut,
  scopeIn,
  sendUpdatesIn,
  warningsOut,
  writeCalendarId,
  writtenEvent,
} from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import { followBookings } from '../bookings/follow.ts';
import { onEventCalendar } from '../read/locate.ts';
import { attendeesFrom, checkedRange, type EventFieldsArgs, instantOf, patchFromArgs } from './common.ts';
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
  calendarId: string;
  eventId: string;
  scope?: Scope | undefined;
  sendUpdates?: 'all' | 'externalOnly' | 'none' | undefined;
  /** Reads local start/end and writes the answer; default the calendar's zone. */
  timeZone?: string | undefined;
}

/**
 * A new start alone moves the event and keeps its length; a new end alone must still come after
 * the start, checked as create_event checks it. A series master's patch is left to seriesPatch,
 * which moves start and end together already.
 */
export function keepDuration(patch: EventPatch, base: CalendarEvent, timeZone: string): EventPatch {
  if ((base.recurrence?.length ?? 0) > 0 || (patch.start === undefined && patch.end === undefined)) {
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

/** One guarded, scoped update: used by update_event and each item of batch_update_events. */
export async function runUpdate(
  access: CalendarAccess,
  given: UpdateArgs,
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
    (base) => {
      const timed = keepDuration(fields, base, handle.ref.timeZone);
      return args.attendees === undefined
        ? timed
        : { ...timed, attendees: attendeesFrom(args.attendees, base.attendees) };
    },
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
    'Change some fields of an event (PATCH: omitted fields stay). Safe against concurrent edits: if someone else changed the same fields meanwhile, nothing is overwritten and the result says so. attendees replaces the list (use manage_attendees to add/remove).',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: writeCalendarId.optional().describe('Default: found by eventId.'),
    eventId: eventIdIn,
    ...updateFields,
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: updateOut,
  example: {
    eventId: 'abc123def456',
    reminders: { useDefault: false, overrides: [] },
    transparency: 'transparent',
  },
  exampleResult: { changed: true, event: { transparency: 'transparent', reminders: { useDefault: false } } },
  run(args, { access, booking, signal }) {
    return onEventCalendar(access, args.calendarId, args.eventId, signal, (calendarId) =>
      runUpdate(access, { ...args, calendarId }, signal, '', booking),
    );
  },
});
