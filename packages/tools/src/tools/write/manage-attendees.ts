import { CalgateError } from '@calgate/core';
import type { EventAttendee } from '@calgate/providers';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { toEventOut } from '../../shape.ts';
import {
  attendeesIn,
  eventCalendarIdIn,
  eventIdIn,
  scopeIn,
  sendUpdatesIn,
  writtenEvent,
} from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import { onEventCalendar } from '../read/locate.ts';
import { emailKey, uniqueEmails } from './common.ts';
import { applyScoped } from './scoped.ts';

export interface AttendeeChange {
  attendees: EventAttendee[];
  added: string[];
  removed: string[];
  /** Requested but already so: added ones already invited, removed ones not on the list. */
  unchanged: string[];
}

/** The attendee list after adding and removing, compared case-insensitively. */
export function changeAttendees(
  current: readonly EventAttendee[],
  add: readonly string[],
  remove: readonly string[],
): AttendeeChange {
  const removing = new Set(remove.map(emailKey));
  const present = new Set(current.map((attendee) => emailKey(attendee.email)));
  const kept = current.filter((attendee) => !removing.has(emailKey(attendee.email)));
  const removed = current.filter((attendee) => removing.has(emailKey(attendee.email))).map((a) => a.email);
  const unchanged = uniqueEmails(remove).filter((email) => !present.has(emailKey(email)));
  const added: string[] = [];
  for (const email of uniqueEmails(add)) {
    if (present.has(emailKey(email))) {
      unchanged.push(email);
    } else {
      added.push(email);
    }
  }
  return { attendees: [...kept, ...added.map((email) => ({ email }))], added, removed, unchanged };
}

export const manageAttendees = defineTool({
  name: 'manage_attendees',
  toolset: 'calendar',
  title: 'Add or remove attendees',
  description:
    'To invite people to a meeting or take them off it, without resending the whole attendee list.',
  notes:
    'Add or remove attendees by email without replacing the rest of the list. Emails compare case-insensitively; duplicates are ignored.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: eventCalendarIdIn,
    eventId: eventIdIn,
    addAttendees: attendeesIn.optional(),
    removeAttendees: attendeesIn.optional(),
    scope: scopeIn,
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    eventId: z.string(),
    calendarId: z.string(),
    added: z.array(z.string()),
    removed: z.array(z.string()),
    unchanged: z.array(z.string()).describe('Already invited (add) or not invited (remove).'),
    attendees: z.array(z.string()),
    event: writtenEvent,
  }),
  exampleIntent: 'Invite bob@example.com to the planning meeting, and take Carol off it.',
  example: {
    eventId: 'abc123def456',
    addAttendees: ['charlie@example.com'],
    removeAttendees: ['dave@example.com'],
  },
  exampleResult: { added: ['charlie@example.com'], removed: ['dave@example.com'] },
  async run(args, { access, signal }) {
    const add = (args.addAttendees ?? []).map((email) => email.trim());
    const remove = (args.removeAttendees ?? []).map((email) => email.trim());
    if (add.length === 0 && remove.length === 0) {
      throw new CalgateError('invalid_argument', 'Give addAttendees, removeAttendees or both.');
    }
    const both = add.filter((email) => remove.some((other) => emailKey(other) === emailKey(email)));
    if (both.length > 0) {
      throw new CalgateError('invalid_argument', `'${both[0]}' is in both addAttendees and removeAttendees.`);
    }
    return onEventCalendar(access, args.calendarId, args.eventId, signal, async (calendarId) => {
      const handle = access.writable(calendarId);
      // Checked before anything is written: a bad zone changes nothing.
      const zone = callZone(access, args.timeZone, [handle]);
      let change: AttendeeChange = { attendees: [], added: [], removed: [], unchanged: [] };
      const result = await applyScoped(
        handle,
        args.eventId,
        args.scope,
        (base) => {
          change = changeAttendees(base.attendees ?? [], add, remove);
          return change.added.length + change.removed.length === 0 ? {} : { attendees: change.attendees };
        },
        { sendUpdates: args.sendUpdates, signal, rebase: true },
      );
      return {
        timeZone: zone,
        eventId: result.event.id,
        calendarId: handle.calendar.id,
        added: change.added,
        removed: change.removed,
        unchanged: change.unchanged,
        attendees: (result.event.attendees ?? []).map((attendee) => attendee.email),
        event: toEventOut(handle.calendar.id, result.event, zone),
      };
    });
  },
});
