/** Writing a booking's event with a derived id, and taking it back when the booking fails. */
import { CalgateError, isCalgateError } from '@calgate/core';
import type { CalendarEvent, EventInput, WriteOptions } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import { instantOf, isAlreadyDeleted, isCode } from '../write/common.ts';
import { conflictError, type Slot } from './book-slot-checks.ts';

/**
 * How a booking writes: without emailing anyone. Outlook sends invitations and cancellations to
 * attendees itself and refuses to be asked not to, so there the write asks nothing (book_slot's
 * answer says Outlook invited them: see `sendsInvitationsItself`).
 */
function quietly(handle: CalendarHandle): WriteOptions {
  return sendsInvitationsItself(handle) ? {} : { sendUpdates: 'none' };
}

/** Whether the calendar's service emails attendees on every write, whatever Calgate asks (Outlook). */
export function sendsInvitationsItself(handle: CalendarHandle): boolean {
  return handle.calendar.provider === 'microsoft';
}

/** Deleted ids stay taken upstream (Google answers 409); a booking moves to the next generation. */
export const MAX_GENERATIONS = 5;

function isSameBooking(event: CalendarEvent, input: EventInput, slot: Slot, timeZone: string): boolean {
  return (
    event.status !== 'cancelled' &&
    (event.summary ?? '') === (input.summary ?? '') &&
    instantOf(event.start, timeZone) === slot.start &&
    instantOf(event.end, timeZone) === slot.end
  );
}

/**
 * Inserts the event under the id `idFor(generation)`. The provider retries a lost answer with the
 * same id and reads the event back; an id that already exists is read back here and accepted
 * only when it is this booking (same start, end and summary).
 */
export async function writeBookingEvent(
  handle: CalendarHandle,
  input: EventInput,
  slot: Slot,
  signal: AbortSignal,
  idFor: (generation: number) => string,
): Promise<CalendarEvent> {
  const { provider, ref } = handle;
  for (let generation = 0; generation < MAX_GENERATIONS; generation++) {
    const id = idFor(generation);
    try {
      return await provider.insertEvent(ref, { ...input, id }, quietly(handle));
    } catch (error) {
      if (!isCode(error, 'already_exists')) {
        throw error;
      }
      const existing = await provider.getEvent(ref, id, signal).catch((readError: unknown) => {
        if (isCode(readError, 'not_found')) {
          return undefined;
        }
        throw readError;
      });
      if (existing !== undefined && isSameBooking(existing, input, slot, ref.timeZone)) {
        return existing;
      }
      if (existing !== undefined && existing.status !== 'cancelled') {
        throw new CalgateError(
          'conflict',
          `Not booked: event ${id} already exists on calendar ${handle.calendar.id} with other details.`,
        );
      }
    }
  }
  throw new CalgateError('internal', 'Not booked: no free event id for this booking.');
}

/** Deletes the booking's event and returns the error to report, saying whether the event is gone. */
export async function rollBack(
  handle: CalendarHandle,
  eventId: string,
  cause: unknown,
  slot: Slot,
): Promise<unknown> {
  let leftover = '';
  try {
    await handle.provider.deleteEvent(handle.ref, eventId, quietly(handle));
  } catch (error) {
    if (!isAlreadyDeleted(error) && !isCode(error, 'not_found')) {
      leftover = ` The event ${eventId} written for it could not be removed (${error instanceof Error ? error.message : String(error)}); delete it with delete_event.`;
    }
  }
  if (!isCalgateError(cause)) {
    return leftover === '' ? cause : new CalgateError('internal', `Not booked.${leftover}`, { cause });
  }
  if (cause.code === 'conflict' && cause.context.bookingId !== undefined) {
    // The ledger's exclusion constraint: the lease lapsed and another booking got the range.
    const start = Date.parse(String(cause.context.start ?? ''));
    const end = Date.parse(String(cause.context.end ?? ''));
    return conflictError(
      handle,
      {
        start: Number.isNaN(start) ? slot.start : start,
        end: Number.isNaN(end) ? slot.end : end,
        kind: 'booking',
      },
      ` The event written for it was removed.${leftover}`,
    );
  }
  if (leftover === '') {
    return cause;
  }
  return new CalgateError(cause.code, `${cause.message}${leftover}`, { context: cause.context });
}
