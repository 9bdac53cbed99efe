import { CalgateError, validateTimeZone } from '@calgate/core';
import { z } from 'zod';
import type { CalendarAccess, CalendarHandle } from '../../access.ts';
import { rangeBound, type Window, windowIn } from '../../range.ts';
import { readableHandles } from '../read/common.ts';

/** The widest window the availability tools search. */
export const MAX_WINDOW_DAYS = 92;

/** The parameters every availability tool shares, spelled as everywhere in the catalogue. */
export const windowInput = {
  timeMin: rangeBound,
  timeMax: rangeBound,
  timeZone: z.string().min(1).max(64).optional(),
};

export const range = z.object({ start: z.string(), end: z.string() });

/** Set when busy time was read from Calgate's mirror of some calendars (as list_events says it). */
export const syncedAtOut = z
  .string()
  .optional()
  .describe(
    "Set when busy time was read from Calgate's mirror: the oldest sync the answer reflects (changes made upstream after it may be missing).",
  );

/**
 * The zone a call reads local times in and writes its answer in: the request's `timeZone`
 * (checked), else the key's own, else the zone the calendars share, else the key's default
 * calendar's (CalendarAccess.zoneFor).
 */
export function callZone(
  access: CalendarAccess,
  requested: string | undefined,
  handles: readonly Pick<CalendarHandle, 'calendar'>[],
): string {
  if (requested !== undefined) {
    const checked = validateTimeZone(requested);
    if (!checked.ok) {
      throw checked.error;
    }
    return checked.value;
  }
  return access.zoneFor(
    undefined,
    handles.map((handle) => handle.calendar),
  );
}

/** The window of an availability call, read in `zone`: timeMax after timeMin, ≤ 92 days. */
export function availabilityWindow(
  args: { timeMin: string; timeMax: string },
  zone: string,
  now: Date,
): Window {
  return windowIn(args, zone, { now, maxDays: MAX_WINDOW_DAYS });
}

export const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;

/** The calendars an availability call reads: the named ones, or every readable one (at least one). */
export function calendarsToRead(access: CalendarAccess, ids: readonly string[] | undefined) {
  const found = readableHandles(access, ids);
  if (found.handles.length === 0 && found.unavailable.length === 0) {
    throw new CalgateError('not_found', 'No enabled calendar this key can read; see list_calendars.');
  }
  return found;
}
