import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { eventCalendarIdIn, eventIdIn, scopeIn, sendUpdatesIn } from '../../write-schemas.ts';
import { releaseBookings } from '../bookings/follow.ts';
import { onEventCalendar } from '../read/locate.ts';
import { deleteScoped } from './scoped.ts';

export const deleteEvent = defineTool({
  name: 'delete_event',
  toolset: 'calendar',
  title: 'Delete event',
  description: 'To remove an event or appointment, one occurrence, or a series from an occurrence on.',
  notes:
    'Delete an event, one occurrence, or a recurring series from an occurrence on (scope). An event that was already deleted is reported with alreadyDeleted: true and nothing is changed.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: eventCalendarIdIn,
    eventId: eventIdIn,
    scope: scopeIn,
    sendUpdates: sendUpdatesIn,
  }),
  output: z.object({
    eventId: z.string(),
    calendarId: z.string(),
    deleted: z.boolean().describe('True only when this call deleted something.'),
    alreadyDeleted: z.boolean(),
    scope: z.enum(['thisEvent', 'thisAndFollowing', 'all']).optional(),
    seriesId: z.string().optional().describe('The series deleted or ended, for scope all/thisAndFollowing.'),
  }),
  exampleIntent: 'Remove the dentist appointment from my calendar.',
  example: { eventId: 'abc123def456' },
  exampleResult: { deleted: true, alreadyDeleted: false },
  async run(args, { access, booking, signal }) {
    return onEventCalendar(access, args.calendarId, args.eventId, signal, async (calendarId) => {
      const handle = access.writable(calendarId);
      const result = await deleteScoped(handle, args.eventId, args.scope, {
        sendUpdates: args.sendUpdates,
        signal,
      });
      if (result.scope !== 'thisAndFollowing') {
        await releaseBookings(booking, handle, result.affectedId);
      }
      return {
        eventId: args.eventId,
        calendarId: handle.calendar.id,
        deleted: result.deleted,
        alreadyDeleted: result.alreadyDeleted,
        ...(result.scope ? { scope: result.scope } : {}),
        ...(result.affectedId !== args.eventId ? { seriesId: result.affectedId } : {}),
      };
    });
  },
  text(result) {
    const what =
      result.scope === 'thisAndFollowing'
        ? `Ended series ${result.seriesId} before occurrence ${result.eventId}.`
        : result.scope === 'all' && result.seriesId
          ? `Deleted the whole series ${result.seriesId}.`
          : `Deleted event ${result.eventId}.`;
    const text = result.alreadyDeleted
      ? `Event ${result.seriesId ?? result.eventId} was already deleted; nothing was changed.`
      : what;
    return `${text}\n${JSON.stringify(result)}`;
  },
});
