import { complement, type Interval, mergeAvailability, mergeIntervals } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { rangeOut } from '../../range.ts';
import { calendarErrors } from '../../schemas.ts';
import { calendarIds, errorsOut } from '../read/common.ts';
import { type BusyAnswer, readBusy, syncedAtOf } from './busy.ts';
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

const MINUTE = 60_000;

export const getAvailability = defineTool({
  name: 'get_availability',
  toolset: 'booking',
  title: 'Get availability',
  description:
    'To share availability: busy and free time merged across calendars, without what the events are unless privacy is full.',
  notes:
    'Busy blocks and free slots merged across calendars, ≤ 92 days. full: sourceCount = calendars busy in the block, events = what, named as in check_availability; opaque: 0, no events. If a calendar is unavailable, free is empty: unknown is never free.',
  access: 'read',
  annotations: READ_ONLY,
  input: z.strictObject({
    calendarIds,
    ...windowInput,
    privacy: z.enum(['opaque', 'full']).default('opaque'),
    minDurationMinutes: z.number().int().min(1).max(1440).default(30),
  }),
  output: z.object({
    timeZone: z.string(),
    busy: z.array(
      range.extend({
        sourceCount: z.number(),
        events: z
          .array(
            z.object({
              calendarId: z.string(),
              kind: z.enum(['event', 'busy', 'hold']),
              eventId: z.string().optional(),
              summary: z.string().optional(),
            }),
          )
          .optional(),
      }),
    ),
    free: z.array(range.extend({ durationMinutes: z.number() })),
    calendarsMerged: z.number(),
    privacy: z.enum(['opaque', 'full']),
    unavailableCalendars: calendarErrors,
    syncedAt: syncedAtOut,
  }),
  exampleIntent: 'Share my availability for next week without showing what my events are.',
  example: {
    calendarIds: ['primary', 'Team Berlin'],
    timeMin: '2026-04-20T00:00:00-04:00',
    timeMax: '2026-04-27T00:00:00-04:00',
    privacy: 'full',
    minDurationMinutes: 60,
  },
  exampleResult: {
    timeZone: 'America/New_York',
    free: [{ start: '2026-04-20T00:00:00-04:00', end: '2026-04-27T00:00:00-04:00', durationMinutes: 10080 }],
    calendarsMerged: 2,
    privacy: 'full',
  },
  async run(args, context) {
    const { handles, unavailable } = calendarsToRead(context.access, args.calendarIds);
    const zone = callZone(context.access, args.timeZone, handles);
    const window = availabilityWindow(args, zone, context.now());
    const answers = await readBusy(handles, window, context, { withEvents: args.privacy === 'full' });
    const failures = [...unavailable];
    const known: Interval[][] = [];
    const answered: BusyAnswer[] = [];
    for (const answer of answers) {
      if (answer.ok) {
        answered.push(answer);
        known.push(mergeIntervals([...answer.events, ...answer.holds]));
      } else {
        failures.push({ calendarId: answer.calendarId, error: answer.error });
      }
    }
    const busy = mergeAvailability(known, args.privacy);
    const syncedAt = syncedAtOf(answered);
    // Opaque hides which calendars are busy, so only full names what is busy.
    const named = args.privacy === 'full' ? await nameAllBusy(handles, answered, window, context.signal) : [];
    const eventsIn = (block: Interval) =>
      named
        .filter((item) => item.start < block.end && item.end > block.start)
        .map(({ start: _start, end: _end, ...item }) => item);
    // A calendar that did not answer may be busy anywhere: only time free on all of them is free.
    const free =
      failures.length > 0
        ? []
        : complement(window, mergeIntervals(busy))
            .filter((slot) => slot.end - slot.start >= args.minDurationMinutes * MINUTE)
            .map((slot) => ({
              ...rangeOut(slot, zone),
              durationMinutes: Math.floor((slot.end - slot.start) / MINUTE),
            }));
    return {
      timeZone: zone,
      busy: busy.map((block) => ({
        ...rangeOut(block, zone),
        sourceCount: block.sourceCount,
        ...(args.privacy === 'full' ? { events: eventsIn(block) } : {}),
      })),
      free,
      calendarsMerged: known.length,
      privacy: args.privacy,
      ...(failures.length === 0 ? {} : { unavailableCalendars: errorsOut(failures) }),
      ...(syncedAt === undefined ? {} : { syncedAt }),
    };
  },
});
