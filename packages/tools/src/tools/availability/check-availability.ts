import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { rangeOut } from '../../range.ts';
import { calendarIds } from '../read/common.ts';
import { busyOrThrow, syncedAtOf } from './busy.ts';
import { nameAllBusy } from './named-busy.ts';
import {
  availabilityWindow,
  calendarsToRead,
  callZone,
  READ_ONLY,
  range,
  syncedAtOut,
  windowInput,
} from './window.ts';

export const checkAvailability = defineTool({
  name: 'check_availability',
  toolset: 'booking',
  title: 'Check availability',
  description:
    'To check whether one proposed time is free on all calendars, before you book it; names what is in the way.',
  notes:
    "Whether [timeMin, timeMax) is free on all calendarIds: no opaque non-declined events, bookings or holds. Fails if free/busy can't be read.",
  access: 'read',
  annotations: READ_ONLY,
  input: z.strictObject({ calendarIds, ...windowInput }),
  output: z.object({
    available: z.boolean(),
    timeZone: z.string(),
    conflicts: z
      .array(
        range.extend({
          calendarId: z.string(),
          kind: z.enum(['event', 'busy', 'hold']),
          eventId: z.string().optional(),
          summary: z.string().optional(),
        }),
      )
      .optional()
      .describe('busy: details hidden; hold: booking in progress.'),
    syncedAt: syncedAtOut,
  }),
  exampleIntent: 'Is Tuesday from 2 to 3 pm free, before I book it?',
  example: {
    calendarIds: ['primary'],
    timeMin: '2026-04-21T15:00:00-04:00',
    timeMax: '2026-04-21T15:30:00-04:00',
  },
  exampleResult: { available: true, timeZone: 'America/New_York' },
  async run(args, context) {
    const { handles, unavailable } = calendarsToRead(context.access, args.calendarIds);
    const zone = callZone(context.access, args.timeZone, handles);
    const window = availabilityWindow(args, zone, context.now());
    const answers = await busyOrThrow(handles, unavailable, window, context, { withEvents: true });
    const syncedAt = syncedAtOf(answers);
    const synced = syncedAt === undefined ? {} : { syncedAt };
    const conflicts = (await nameAllBusy(handles, answers, window, context.signal)).map(
      ({ start, end, ...rest }) => ({ ...rangeOut({ start, end }, zone), ...rest }),
    );
    return conflicts.length === 0
      ? { available: true, timeZone: zone, ...synced }
      : { available: false, timeZone: zone, conflicts, ...synced };
  },
});
