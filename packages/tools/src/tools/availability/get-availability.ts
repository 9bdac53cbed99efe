import { complement, type Interval, mergeAvailability, mergeIntervals } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { calendarErrors, instant } from '../../schemas.ts';
import { errorsOut, readableHandles } from '../read/common.ts';
import { readBusy } from './busy.ts';
import { READ_ONLY, range, rangeOut, windowOf } from './window.ts';

const MINUTE = 60_000;

export const getAvailability = defineTool({
  name: 'get_availability',
  title: 'Get availability',
  description:
    'Busy blocks and free slots merged across calendars, ≤ 92 days, UTC. sourceCount: calendars busy in the block (full), always 0 (opaque). If a calendar is unavailable, free is empty: unknown is never free.',
  access: 'read',
  annotations: READ_ONLY,
  input: z.strictObject({
    start: instant,
    end: instant,
    calendarIds: z.array(z.string().min(1).max(1024)).min(1).max(50).default(['primary']),
    privacy: z.enum(['opaque', 'full']).default('opaque'),
    minFreeSlotMinutes: z.number().int().min(1).max(1440).default(30),
  }),
  output: z.object({
    busy: z.array(range.extend({ sourceCount: z.number() })),
    free: z.array(range.extend({ durationMinutes: z.number() })),
    calendarsMerged: z.number(),
    privacy: z.enum(['opaque', 'full']),
    unavailableCalendars: calendarErrors,
  }),
  example: {
    start: '2026-04-20T00:00:00-04:00',
    end: '2026-04-27T00:00:00-04:00',
    calendarIds: ['primary', 'cal_2f9c…'],
    privacy: 'full',
    minFreeSlotMinutes: 60,
  },
  async run(args, context) {
    const window = windowOf(args);
    const { handles, unavailable } = readableHandles(context.access, args.calendarIds);
    const answers = await readBusy(handles, window, context);
    const failures = [...unavailable];
    const known: Interval[][] = [];
    for (const answer of answers) {
      if (answer.ok) {
        known.push(mergeIntervals([...answer.events, ...answer.holds]));
      } else {
        failures.push({ calendarId: answer.calendarId, error: answer.error });
      }
    }
    const busy = mergeAvailability(known, args.privacy);
    // A calendar that did not answer may be busy anywhere: only time free on all of them is free.
    const free =
      failures.length > 0
        ? []
        : complement(window, mergeIntervals(busy))
            .filter((slot) => slot.end - slot.start >= args.minFreeSlotMinutes * MINUTE)
            .map((slot) => ({
              ...rangeOut(slot),
              durationMinutes: Math.floor((slot.end - slot.start) / MINUTE),
            }));
    return {
      busy: busy.map((block) => ({ ...rangeOut(block), sourceCount: block.sourceCount })),
      free,
      calendarsMerged: known.length,
      privacy: args.privacy,
      ...(failures.length === 0 ? {} : { unavailableCalendars: errorsOut(failures) }),
    };
  },
});
