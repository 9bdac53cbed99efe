import { mergeIntervals } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { calendarId, instant } from '../../schemas.ts';
import { busyOrThrow } from './busy.ts';
import { READ_ONLY, range, rangeOut, windowOf } from './window.ts';

export const checkAvailability = defineTool({
  name: 'check_availability',
  title: 'Check availability',
  description:
    "Whether [start, end) of one calendar is free of opaque non-declined events and booking holds. Fails if free/busy can't be read.",
  access: 'read',
  annotations: READ_ONLY,
  input: z.strictObject({ calendarId, start: instant, end: instant }),
  output: z.object({
    available: z.boolean(),
    conflicts: z
      .array(range.extend({ kind: z.enum(['event', 'hold']) }))
      .optional()
      .describe('UTC; hold = booking in progress.'),
  }),
  example: { calendarId: 'primary', start: '2026-04-21T15:00:00-04:00', end: '2026-04-21T15:30:00-04:00' },
  async run(args, context) {
    const window = windowOf(args);
    const handle = context.access.readable(args.calendarId);
    const { events, holds } = await busyOrThrow(handle, window, context);
    const conflicts = [
      ...mergeIntervals(events).map((s) => ({ ...rangeOut(s), kind: 'event' as const })),
      ...mergeIntervals(holds).map((s) => ({ ...rangeOut(s), kind: 'hold' as const })),
    ].sort((a, b) => a.start.localeCompare(b.start));
    return conflicts.length === 0 ? { available: true } : { available: false, conflicts };
  },
});
