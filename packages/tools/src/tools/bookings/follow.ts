/**
 * Calgate's own writes carry their bookings along at once: delete_event releases the booking of
 * the deleted event, update_event and batch_update_events move it or release it. Best effort: a
 * ledger that cannot be written right now is put right by the next read that meets the booking
 * (reconcile.ts), so a failure here never fails a write that already happened upstream.
 */
import type { CalendarEvent } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import type { BookingServices } from '../../catalogue.ts';
import { settle } from './reconcile.ts';

/** After an event was deleted (or found already deleted): its bookings are released. */
export async function releaseBookings(
  booking: BookingServices | undefined,
  handle: CalendarHandle,
  eventId: string,
): Promise<void> {
  if (booking === undefined) {
    return;
  }
  try {
    const booked = await booking.ledger.byEvent(handle.calendar.id, eventId);
    await Promise.all(booked.map((row) => booking.ledger.cancel(row.id)));
  } catch {
    // See the file comment: the next read reconciles.
  }
}

/**
 * After an event was written: its bookings follow it (moved, or released when it was cancelled
 * or made free). Returns what the caller should tell the user, e.g. a booking released because
 * the new time overlaps another booking.
 */
export async function followBookings(
  booking: BookingServices | undefined,
  handle: CalendarHandle,
  event: CalendarEvent,
): Promise<string[]> {
  if (booking === undefined) {
    return [];
  }
  try {
    const booked = await booking.ledger.byEvent(handle.calendar.id, event.id);
    const settled = await Promise.all(booked.map((row) => settle(booking.ledger, handle, row, event)));
    return settled.flatMap((result) =>
      result.kind === 'released'
        ? [result.reason]
        : result.kind === 'moved'
          ? [`Booking ${result.booking.id} moved with the event.`]
          : [],
    );
  } catch {
    return [];
  }
}
