/** How the booking tools find a booking the key may see, and how they write one out. */
import { CalgateError, formatInstant } from '@calgate/core';
import { z } from 'zod';
import type { CalendarAccess } from '../../access.ts';
import type { BookingLedger, BookingServices, LedgerBooking } from '../../catalogue.ts';

export const bookingOut = z.object({
  bookingId: z.string(),
  calendarId: z.string(),
  eventId: z.string(),
  start: z.string(),
  end: z.string(),
  status: z.enum(['confirmed', 'cancelled']),
  summary: z.string().optional(),
  idempotencyKey: z.string().optional(),
});

/** The zone of returned times; the key's, else the calendar's, when omitted (see callZone). */
export const zoneIn = z.string().min(1).max(64).optional();

export type BookingOut = z.output<typeof bookingOut>;

export function ledgerOf(booking: BookingServices | undefined): BookingLedger {
  if (booking === undefined) {
    throw new CalgateError('unavailable', 'Bookings are not available on this gateway (no ledger).');
  }
  return booking.ledger;
}

/** A booking as the tools return it, instants in `zone` (the call's, see callZone). */
export function toBookingOut(booking: LedgerBooking, zone: string): BookingOut {
  const summary = (booking.result as { summary?: unknown } | null)?.summary;
  return {
    bookingId: booking.id,
    calendarId: booking.calendarId,
    eventId: booking.eventId,
    start: formatInstant(booking.start.getTime(), zone),
    end: formatInstant(booking.end.getTime(), zone),
    status: booking.status,
    ...(typeof summary === 'string' ? { summary } : {}),
    ...(booking.idempotencyKey === null ? {} : { idempotencyKey: booking.idempotencyKey }),
  };
}

/**
 * The booking named by id or by this key's idempotency key, if the key may read its calendar.
 * Unknown ids, other tenants' bookings and bookings on calendars the key may not read all answer
 * the same `not_found`: a booking id must not reveal that a calendar exists.
 */
export async function visibleBooking(
  access: CalendarAccess,
  ledger: BookingLedger,
  which: { bookingId?: string | undefined; idempotencyKey?: string | undefined },
): Promise<LedgerBooking> {
  if ((which.bookingId === undefined) === (which.idempotencyKey === undefined)) {
    throw new CalgateError('invalid_argument', 'Pass exactly one of bookingId or idempotencyKey.');
  }
  const found =
    which.bookingId === undefined
      ? await ledger.byIdempotencyKey(which.idempotencyKey ?? '')
      : await ledger.byId(which.bookingId);
  const readable = access.list().some((calendar) => calendar.id === found?.calendarId && calendar.canRead);
  if (found === null || !readable) {
    throw new CalgateError(
      'not_found',
      which.bookingId === undefined
        ? `No booking made by this key has idempotencyKey '${which.idempotencyKey}'. list_bookings shows the bookings this key can see.`
        : `Booking '${which.bookingId}' was not found. list_bookings shows the bookings this key can see.`,
    );
  }
  return found;
}
