import { CalgateError } from '@calgate/core';
import { z } from 'zod';
import type { CalendarAccess, CalendarHandle } from '../../access.ts';
import { explainedOnce } from '../../listed.ts';
import { windowIn } from '../../range.ts';

export { DAY_MS } from '../../range.ts';

/** An optional calendar filter: ids from list_calendars; omitted means every readable calendar. */
export const calendarIds = explainedOnce(
  z.array(z.string().min(1).max(1024)).min(1).max(50).optional(),
  'Default: all readable.',
);

export interface Window {
  min: number;
  max: number;
  /** The bounds as RFC 3339 in UTC, for upstream queries. */
  timeMin: string;
  timeMax: string;
}

/**
 * A checked [timeMin, timeMax) window, local forms read in `zone`; absent bounds are `now`
 * plus the given day offsets.
 */
export function resolveWindow(
  args: { timeMin?: string | undefined; timeMax?: string | undefined },
  zone: string,
  now: Date,
  defaults: { beforeDays: number; afterDays: number },
  maxDays: number,
): Window {
  const { start, end } = windowIn(args, zone, { now, ...defaults, maxDays });
  return {
    min: start,
    max: end,
    timeMin: new Date(start).toISOString(),
    timeMax: new Date(end).toISOString(),
  };
}

/**
 * The calendars a read fans out over: the named ones, or every readable calendar. A name the key
 * cannot read fails the call (like a calendar that does not exist); a readable calendar that
 * cannot be used right now (its account needs reconnecting, is disabled) is set apart with the
 * reason. A calendar named twice is read once.
 */
export function readableHandles(
  access: CalendarAccess,
  ids: readonly string[] | undefined,
): { handles: CalendarHandle[]; unavailable: { calendarId: string; error: CalgateError }[] } {
  if (ids === undefined) {
    return access.allReadable();
  }
  const handles = new Map<string, CalendarHandle>();
  const unavailable: { calendarId: string; error: CalgateError }[] = [];
  for (const id of ids) {
    try {
      const handle = access.readable(id);
      handles.set(handle.calendar.id, handle);
    } catch (error) {
      if (
        !(error instanceof CalgateError) ||
        error.code === 'not_found' ||
        error.code === 'invalid_argument'
      ) {
        throw error;
      }
      const named = typeof error.context.calendarId === 'string' ? error.context.calendarId : id;
      if (!unavailable.some((entry) => entry.calendarId === named)) {
        unavailable.push({ calendarId: named, error });
      }
    }
  }
  return { handles: [...handles.values()], unavailable };
}

/** Per-calendar failures in the shape every read tool reports them. */
export function errorsOut(failures: readonly { calendarId: string; error: CalgateError }[]) {
  return failures.map(({ calendarId: id, error }) => ({
    calendarId: id,
    code: error.code,
    message: error.message,
  }));
}
