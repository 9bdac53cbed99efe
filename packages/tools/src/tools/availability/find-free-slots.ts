import { type DayName, findFreeSlots as freeSlotsOf } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { listedAsDescription } from '../../listed.ts';
import { rangeOut } from '../../range.ts';
import { calendarIds } from '../read/common.ts';
import { busyOrThrow, syncedAtOf } from './busy.ts';
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
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const satisfies readonly DayName[];

const workingHours = listedAsDescription(
  z.strictObject({
    days: z.array(z.enum(DAYS)).max(7),
    start: z.string().max(5).describe('HH:MM'),
    end: z.string().max(5),
    timeZone: z.string().max(64),
  }),
  '{days: [mon…sun], start: HH:MM, end: HH:MM, timeZone}: local working hours (DST-aware).',
);

export const findFreeSlots = defineTool({
  name: 'find_free_slots',
  toolset: 'booking',
  title: 'Find free slots',
  description:
    'To offer meeting times: free slots of a given length common to all calendars, within working hours.',
  notes:
    "Slots free on all calendarIds, ≤ 92 days, outside opaque non-declined events, bookings and holds (padded by bufferMinutes). Zone default: workingHours'. Fails if free/busy can't be read.",
  access: 'read',
  annotations: READ_ONLY,
  input: z.strictObject({
    calendarIds,
    ...windowInput,
    minDurationMinutes: z.number().int().min(1).max(1440).default(30),
    workingHours: workingHours.optional(),
    bufferMinutes: z.number().int().min(0).max(240).optional(),
  }),
  output: z.object({
    timeZone: z.string(),
    slots: z.array(range.extend({ durationMinutes: z.number() })),
    syncedAt: syncedAtOut,
  }),
  exampleIntent: 'Suggest one-hour meeting times during working hours next week.',
  example: {
    calendarIds: ['primary'],
    timeMin: '2026-04-20',
    timeMax: '2026-04-24',
    minDurationMinutes: 60,
    workingHours: {
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      start: '09:00',
      end: '17:00',
      timeZone: 'Europe/Berlin',
    },
    bufferMinutes: 10,
  },
  exampleResult: {
    timeZone: 'Europe/Berlin',
    slots: [{ start: '2026-04-20T09:00:00+02:00', end: '2026-04-20T17:00:00+02:00', durationMinutes: 480 }],
  },
  async run(args, context) {
    const { handles, unavailable } = calendarsToRead(context.access, args.calendarIds);
    const zone = callZone(context.access, args.timeZone ?? args.workingHours?.timeZone, handles);
    const window = availabilityWindow(args, zone, context.now());
    const buffer = (args.bufferMinutes ?? 0) * MINUTE;
    // Busy time just outside the window still claims its buffer inside it.
    const answers = await busyOrThrow(
      handles,
      unavailable,
      { start: window.start - buffer, end: window.end + buffer },
      context,
    );
    const syncedAt = syncedAtOf(answers);
    const busy = answers.flatMap(({ events, holds }) => [...events, ...holds]);
    const slots = freeSlotsOf(window, busy, {
      minDurationMinutes: args.minDurationMinutes,
      ...(args.workingHours === undefined ? {} : { workingHours: args.workingHours }),
      ...(args.bufferMinutes === undefined ? {} : { bufferMinutes: args.bufferMinutes }),
    });
    if (!slots.ok) {
      throw slots.error;
    }
    return {
      timeZone: zone,
      slots: slots.value.map((slot) => ({ ...rangeOut(slot, zone), durationMinutes: slot.durationMinutes })),
      ...(syncedAt === undefined ? {} : { syncedAt }),
    };
  },
});
