import { type DayName, findFreeSlots as freeSlotsOf } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { calendarId, instant } from '../../schemas.ts';
import { busyOrThrow } from './busy.ts';
import { READ_ONLY, range, rangeOut, windowOf } from './window.ts';

const MINUTE = 60_000;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const satisfies readonly DayName[];

const workingHours = z
  .strictObject({
    days: z.array(z.enum(DAYS)).max(7),
    start: z.string().max(5).describe('HH:MM'),
    end: z.string().max(5),
    timeZone: z.string().max(64),
  })
  .describe('Local working hours (DST-aware).');

export const findFreeSlots = defineTool({
  name: 'find_free_slots',
  title: 'Find free slots',
  description:
    "Free slots of one calendar, ≤ 92 days. Busy: opaque non-declined events and booking holds, padded by bufferMinutes. Times in workingHours.timeZone, else UTC. Fails if free/busy can't be read.",
  access: 'read',
  annotations: READ_ONLY,
  input: z.strictObject({
    calendarId,
    start: instant,
    end: instant,
    minDurationMinutes: z.number().int().min(1).max(1440).default(30),
    workingHours: workingHours.optional(),
    bufferMinutes: z.number().int().min(0).max(240).optional(),
  }),
  output: z.object({
    slots: z.array(range.extend({ durationMinutes: z.number() })),
  }),
  example: {
    calendarId: 'primary',
    start: '2026-04-20T00:00:00+02:00',
    end: '2026-04-25T00:00:00+02:00',
    minDurationMinutes: 60,
    workingHours: {
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      start: '09:00',
      end: '17:00',
      timeZone: 'Europe/Berlin',
    },
    bufferMinutes: 10,
  },
  async run(args, context) {
    const window = windowOf(args);
    const handle = context.access.readable(args.calendarId);
    const buffer = (args.bufferMinutes ?? 0) * MINUTE;
    // Busy time just outside the window still claims its buffer inside it.
    const { events, holds } = await busyOrThrow(
      handle,
      { start: window.start - buffer, end: window.end + buffer },
      context,
    );
    const slots = freeSlotsOf(window, [...events, ...holds], {
      minDurationMinutes: args.minDurationMinutes,
      ...(args.workingHours === undefined ? {} : { workingHours: args.workingHours }),
      ...(args.bufferMinutes === undefined ? {} : { bufferMinutes: args.bufferMinutes }),
    });
    if (!slots.ok) {
      throw slots.error;
    }
    const zone = args.workingHours?.timeZone;
    return {
      slots: slots.value.map((slot) => ({ ...rangeOut(slot, zone), durationMinutes: slot.durationMinutes })),
    };
  },
});
