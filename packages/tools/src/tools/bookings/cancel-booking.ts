import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { timeZoneOut } from '../../local-time.ts';
import { callZone } from '../availability/window.ts';
import { isCode } from '../write/common.ts';
import { deleteScoped } from '../write/scoped.ts';
import { bookingOut, ledgerOf, toBookingOut, visibleBooking, zoneIn } from './shape.ts';

export const cancelBooking = defineTool({
  name: 'cancel_booking',
  toolset: 'booking',
  title: 'Cancel booking',
  description: 'To cancel a booking made with book_slot, deleting its event.',
  notes:
    "Cancel a book_slot booking (bookingId or this key's idempotencyKey): deletes its event, frees its time.",
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    bookingId: z.string().min(1).max(200).optional(),
    idempotencyKey: z.string().min(1).max(200).optional(),
    timeZone: zoneIn,
  }),
  output: bookingOut.extend({
    timeZone: timeZoneOut,
    alreadyCancelled: z.boolean(),
    eventDeleted: z.boolean(),
  }),
  exampleIntent: "Cancel the booking for Tuesday's appointment.",
  example: { bookingId: 'bkg_4f2a9c81d3e0b7a6' },
  exampleResult: { status: 'cancelled', eventDeleted: true },
  async run(args, { access, booking, signal }) {
    const ledger = ledgerOf(booking);
    // Checked before anything changes: a bad zone cancels nothing.
    callZone(access, args.timeZone, []);
    const found = await visibleBooking(access, ledger, args);
    const handle = access.writable(found.calendarId);
    const written = callZone(access, args.timeZone, [handle]);
    const out = (alreadyCancelled: boolean, eventDeleted: boolean) => ({
      timeZone: written,
      ...toBookingOut({ ...found, status: 'cancelled' }, written),
      alreadyCancelled,
      eventDeleted,
    });
    if (found.status === 'cancelled') {
      return out(true, false);
    }
    // The event first: if it cannot be deleted, the booking stays confirmed and the error says why.
    // Attendees are not emailed, as book_slot did not email them either.
    let deleted: boolean;
    try {
      deleted = (await deleteScoped(handle, found.eventId, undefined, { signal })).deleted;
    } catch (error) {
      // The booking's own event, no longer found: deleted upstream (Graph answers a deleted event
      // 404 where Google keeps it cancelled), as reconciling the booking would conclude too.
      if (!isCode(error, 'not_found')) {
        throw error;
      }
      deleted = false;
    }
    const cancelled = await ledger.cancel(found.id);
    return out(!cancelled && !deleted, deleted);
  },
  text(result) {
    const what = result.alreadyCancelled
      ? `Booking ${result.bookingId} was already cancelled; nothing was changed.`
      : `Cancelled booking ${result.bookingId} (${result.start} – ${result.end}); ${result.eventDeleted ? `deleted event ${result.eventId}` : `its event ${result.eventId} was already deleted`}.`;
    return `${what}\n${JSON.stringify(result)}`;
  },
});
