/**
 * Keeps a confirmed booking true to its event: an event deleted, cancelled or made free releases
 * the booking; an event moved moves it. Calgate's own writes do this at once (follow.ts); changes
 * made elsewhere (in Google, in the local store) are caught when a read meets the booking.
 */
import { isCalgateError } from '@calgate/core';
import type { CalendarEvent } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import type { BookingLedger, LedgerBooking } from '../../catalogue.ts';
import { instantOut } from '../../range.ts';
import { instantOf, isCode } from '../write/common.ts';
import { blocks } from './blocks.ts';

/** What became of a confirmed booking: still as it was, moved with its event, or released. */
export type Settled =
  | { kind: 'kept'; booking: LedgerBooking }
  | { kind: 'moved'; booking: LedgerBooking }
  | { kind: 'released'; booking: LedgerBooking; reason: string };

function released(booking: LedgerBooking, reason: string): Settled {
  return { kind: 'released', booking: { ...booking, status: 'cancelled' }, reason };
}

/** Brings one confirmed booking in line with its event as it is now (`null`: the event is gone). */
export async function settle(
  ledger: BookingLedger,
  handle: CalendarHandle,
  booking: LedgerBooking,
  event: CalendarEvent | null,
): Promise<Settled> {
  if (event === null || !blocks(event)) {
    await ledger.cancel(booking.id);
    const why =
      event === null || event.status === 'cancelled'
        ? `its event ${booking.eventId} was deleted`
        : `its event ${booking.eventId} no longer blocks time (free/transparent or declined)`;
    return released(booking, `Booking ${booking.id} was released: ${why}.`);
  }
  const start = instantOf(event.start, handle.ref.timeZone);
  const end = instantOf(event.end, handle.ref.timeZone);
  if (start === booking.start.getTime() && end === booking.end.getTime()) {
    return { kind: 'kept', booking };
  }
  try {
    const moved = await ledger.move(booking.id, new Date(start), new Date(end));
    if (!moved) {
      return released(booking, `Booking ${booking.id} is no longer confirmed.`);
    }
  } catch (error) {
    if (!isCode(error, 'conflict')) {
      throw error;
    }
    // The event itself stays where it was put (free/busy shows it); only the ledger cannot hold
    // two confirmed bookings over one range, and the one already there keeps its claim.
    await ledger.cancel(booking.id);
    const other = typeof error.context.bookingId === 'string' ? ` ${error.context.bookingId}` : '';
    return released(
      booking,
      `Booking ${booking.id} was released: its event ${booking.eventId} now runs ${instantOut(start, handle.calendar.timeZone)}–${instantOut(end, handle.calendar.timeZone)}, which overlaps confirmed booking${other}. The event itself was kept.`,
    );
  }
  return { kind: 'moved', booking: { ...booking, start: new Date(start), end: new Date(end) } };
}

/**
 * Reads the booking's event and settles the booking. An event that cannot be read right now
 * (upstream down, no access) keeps the booking: unknown is never free.
 */
export async function reconcile(
  ledger: BookingLedger,
  handle: CalendarHandle,
  booking: LedgerBooking,
  signal: AbortSignal,
): Promise<Settled> {
  let event: CalendarEvent | null;
  try {
    event = await handle.provider.getEvent(handle.ref, booking.eventId, signal);
  } catch (error) {
    if (!isCalgateError(error)) {
      throw error;
    }
    if (error.code !== 'not_found') {
      return { kind: 'kept', booking };
    }
    event = null;
  }
  return settle(ledger, handle, booking, event);
}
