import { CalgateError, isCalgateError } from '@calgate/core';
import type { CalendarEvent } from '@calgate/providers';
import type { CalendarAccess, CalendarHandle } from '../../access.ts';
import { FAN_OUT_PER_ACCOUNT, FAN_OUT_TOTAL, forEachLimited } from '../../merge.ts';

/**
 * The calendar holding `eventId` when the caller did not say which: every calendar the key can
 * read (or write, for changes) is asked, within the fan-out limits. One match is the answer;
 * several are refused with the candidates; none names every calendar searched.
 */
export async function locateEvent(
  access: CalendarAccess,
  eventId: string,
  need: 'read' | 'write',
  signal: AbortSignal,
): Promise<{ handle: CalendarHandle; event: CalendarEvent }> {
  const { handles } = access.allReadable();
  const candidates = need === 'write' ? handles.filter((handle) => handle.calendar.canWrite) : handles;
  const found: { handle: CalendarHandle; event: CalendarEvent }[] = [];
  const cancelled: { handle: CalendarHandle; event: CalendarEvent }[] = [];
  await forEachLimited(
    candidates,
    (handle) => handle.calendar.connectionId,
    { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
    async (handle) => {
      try {
        const event = await handle.provider.getEvent(handle.ref, eventId, signal);
        (event.status === 'cancelled' ? cancelled : found).push({ handle, event });
      } catch (error) {
        if (!isCalgateError(error) || !['not_found', 'invalid_argument'].includes(error.code)) {
          throw error;
        }
      }
    },
  );
  // A change to an event already deleted reports that (idempotently) when only one calendar has it.
  const [first, ...rest] =
    found.length === 0 && need === 'write' && cancelled.length === 1 ? cancelled : found;
  if (first === undefined) {
    const searched = candidates.map((handle) => `'${handle.calendar.summary}' (${handle.calendar.id})`);
    throw new CalgateError(
      'not_found',
      `Event '${eventId}' was not found in any calendar this key can ${need}: searched ${searched.join(', ') || 'none'}.`,
      { context: { eventId } },
    );
  }
  if (rest.length > 0) {
    const choices = found.map(({ handle }) => `${handle.calendar.id} ('${handle.calendar.summary}')`);
    throw new CalgateError(
      'invalid_argument',
      `Event '${eventId}' exists in several calendars; pass calendarId, one of: ${choices.join(', ')}.`,
    );
  }
  return first;
}

/** A provider's "not found" that names the calendar searched. */
export function inCalendar(
  error: unknown,
  summary: string,
  calendarId: string,
  need: 'read' | 'write' = 'read',
): unknown {
  if (isCalgateError(error) && error.code === 'not_found' && error.context.alreadyDeleted !== true) {
    const readable = need === 'read' ? 'readable' : 'writable';
    return new CalgateError(
      'not_found',
      `Event not found in calendar '${summary}' (${calendarId}): ${error.message} Leave calendarId out to search every ${readable} calendar.`,
      { context: error.context },
    );
  }
  return error;
}

/**
 * Runs a change of one event on the calendar that holds it: the one named, or (calendarId left
 * out) the one found among the calendars the key can write. A not-found names the calendar.
 */
export async function onEventCalendar<T>(
  access: CalendarAccess,
  calendarId: string | undefined,
  eventId: string,
  signal: AbortSignal,
  change: (calendarId: string) => Promise<T>,
): Promise<T> {
  if (calendarId === undefined) {
    const { handle } = await locateEvent(access, eventId, 'write', signal);
    return change(handle.calendar.id);
  }
  try {
    return await change(calendarId);
  } catch (error) {
    let named: CalendarHandle;
    try {
      named = access.writable(calendarId);
    } catch {
      throw error;
    }
    throw inCalendar(error, named.calendar.summary, named.calendar.id, 'write');
  }
}
