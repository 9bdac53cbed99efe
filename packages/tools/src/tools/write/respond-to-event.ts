import { CalgateError } from '@calgate/core';
import type { CalendarEvent, EventAttendee } from '@calgate/providers';
import { z } from 'zod';
import type { KeyCalendar } from '../../access.ts';
import { defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { toEventOut } from '../../shape.ts';
import {
  eventCalendarIdIn,
  eventIdIn,
  sanitizedOut,
  scopeIn,
  sendUpdatesIn,
  writtenEvent,
} from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import { onEventCalendar } from '../read/locate.ts';
import { emailKey } from './common.ts';
import { applyScoped } from './scoped.ts';

/** The attendee entry that is the calendar's own account, if it is invited. */
export function selfAttendee(
  attendees: readonly EventAttendee[],
  calendar: Pick<KeyCalendar, 'accountEmail' | 'externalId'>,
): EventAttendee | undefined {
  const mine = new Set([emailKey(calendar.accountEmail), emailKey(calendar.externalId)]);
  return (
    attendees.find((attendee) => attendee.self === true) ??
    attendees.find((attendee) => mine.has(emailKey(attendee.email)))
  );
}

export const respondToEvent = defineTool({
  name: 'respond_to_event',
  toolset: 'calendar',
  title: 'Respond to invitation',
  description:
    'To accept, decline or tentatively accept an invitation, optionally with a note to the organizer.',
  notes:
    "Accept, decline or tentatively accept an event as the calendar's own account, with an optional comment to the organizer.",
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: eventCalendarIdIn,
    eventId: eventIdIn,
    response: z.enum(['accepted', 'declined', 'tentative']),
    comment: z.string().max(1024).optional(),
    scope: scopeIn,
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    eventId: z.string(),
    calendarId: z.string(),
    attendee: z.string().describe('The email that responded.'),
    response: z.string(),
    event: writtenEvent,
    sanitized: sanitizedOut,
  }),
  exampleIntent: "Decline the invitation to Friday's review and tell the organizer I'm travelling.",
  example: { eventId: 'abc123def456', response: 'accepted', comment: 'See you there' },
  exampleResult: { response: 'accepted' },
  async run(args, { access, signal }) {
    const screen = new TextScreen();
    const comment = screen.text('comment', args.comment);
    return onEventCalendar(access, args.calendarId, args.eventId, signal, async (calendarId) => {
      const handle = access.writable(calendarId);
      // Checked before anything is written: a bad zone changes nothing.
      const zone = callZone(access, args.timeZone, [handle]);
      let email = '';
      const respond = (base: CalendarEvent) => {
        const attendees = base.attendees ?? [];
        const self = selfAttendee(attendees, handle.calendar);
        if (self === undefined) {
          throw new CalgateError(
            'invalid_argument',
            `The account of calendar '${handle.calendar.summary}' (${handle.calendar.accountEmail}) is not an attendee of event '${base.id}', so it cannot respond. Use manage_attendees to invite it first if that is intended.`,
          );
        }
        email = self.email;
        return {
          attendees: attendees.map((attendee) =>
            attendee === self
              ? {
                  ...attendee,
                  responseStatus: args.response,
                  ...(comment === undefined ? {} : { comment }),
                }
              : attendee,
          ),
        };
      };
      const result = await applyScoped(handle, args.eventId, args.scope, respond, {
        sendUpdates: args.sendUpdates,
        signal,
        rebase: true,
      });
      return {
        timeZone: zone,
        eventId: result.event.id,
        calendarId: handle.calendar.id,
        attendee: email,
        response: args.response,
        event: toEventOut(handle.calendar.id, result.event, zone),
        ...(screen.sanitized.length > 0 ? { sanitized: screen.sanitized } : {}),
      };
    });
  },
  text(result) {
    // Outlook deletes a declined invitation from the calendar unless the mailbox saves declined
    // events; the event then comes back cancelled (deleted), and the answer says so.
    const removed =
      result.response === 'declined' && result.event.status === 'cancelled'
        ? 'Declined; the calendar took the invitation off (Outlook does unless the mailbox saves declined events): it is no longer listed, and get_event no longer finds it.\n'
        : '';
    return `${removed}${JSON.stringify(result)}`;
  },
});
