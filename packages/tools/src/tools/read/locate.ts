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
  await forEachLimited(
    candidates,
    (handle) => handle.calendar.connectionId,
    { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
    async (handle) => {
      try {
        const event = await handle.provider.getEvent(handle.ref, eventId, signal);
        if (event.status !== 'cancelled') {
          found.push({ handle, event });
        }
      } catch (error) {
        if (!isCalgateError(error) || !['not_found', 'invalid_argument'].includes(error.code)) {
          throw error;
        }
      }
    },
  );
  const [first, ...rest] = found;
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
export function inCalendar(error: unknown, summary: string, calendarId: string): unknown {
  if (isCalgateError(error) && error.code === 'not_found' && error.context.alreadyDeleted !== true) {
    return new CalgateError(
      'not_found',
      `Event not found in calendar '${summary}' (${calendarId}): ${error.message} Leave calendarId out to search every readable calendar.`,
      { context: error.context },
    );
  }
  return error;
}
