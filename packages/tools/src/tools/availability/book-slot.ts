import { CalgateError, isCalgateError } from '@calgate/core';
import type { EventInput } from '@calgate/providers';
import { z } from 'zod';
import type { BookingServices, LedgerBooking } from '../../catalogue.ts';
import { defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { instantAt, instantIn, noticeWarnings, timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { instantOut, rangeOut } from '../../range.ts';
import { attendeesIn, sanitizedOut, writeCalendarId } from '../../write-schemas.ts';
import { attendeesFrom, uniqueEmails } from '../write/common.ts';
import {
  blockingEvents,
  bookingEventId,
  conflictError,
  requestHash,
  type Slot,
  verifyFree,
} from './book-slot-checks.ts';
import { MAX_GENERATIONS, rollBack, sendsInvitationsItself, writeBookingEvent } from './book-slot-write.ts';
import { callZone } from './window.ts';

/** Longer bookings are almost always a mistaken date; create_event takes them. */
const MAX_BOOKING_MS = 24 * 3_600_000;

const output = z.object({
  timeZone: timeZoneOut,
  bookingId: z.string(),
  eventId: z.string(),
  calendarId: z.string(),
  start: z.string(),
  end: z.string(),
  summary: z.string(),
  replayed: z
    .boolean()
    .describe('True when idempotencyKey matched an earlier booking: nothing new was booked.'),
  sanitized: sanitizedOut,
  /** Notes as the write tools give them; only a repeated local time (DST) here. */
  warnings: z.array(z.object({ kind: z.literal('note'), message: z.string() })).optional(),
});
type Output = z.output<typeof output>;

function services(booking: BookingServices | undefined): BookingServices {
  if (booking === undefined) {
    throw new CalgateError(
      'unavailable',
      'Booking is not available on this gateway (no lock service or ledger).',
    );
  }
  return booking;
}

/** [start, end) of the arguments, local date-times read in `zone` (see local-time.ts). */
function slotOf(start: string, end: string, zone: string, notices: string[]): Slot {
  const slot = { start: instantAt(start, zone, notices), end: instantAt(end, zone, notices) };
  if (!(slot.end > slot.start)) {
    throw new CalgateError('invalid_argument', 'end must be later than start.');
  }
  if (slot.end - slot.start > MAX_BOOKING_MS) {
    throw new CalgateError(
      'invalid_argument',
      'A booking may last at most 24 hours; use create_event for longer events.',
    );
  }
  return slot;
}

/** The first booking made with this idempotency key, or a refusal when the parameters differ. */
function replay(earlier: LedgerBooking, hash: string, idempotencyKey: string, zone: string): Output {
  if (earlier.status === 'cancelled') {
    throw new CalgateError(
      'already_exists',
      `idempotencyKey '${idempotencyKey}' belongs to booking ${earlier.id}, which was cancelled. Use a new idempotencyKey to book again.`,
      { context: { bookingId: earlier.id } },
    );
  }
  if (earlier.requestHash !== hash) {
    throw new CalgateError(
      'already_exists',
      `idempotencyKey '${idempotencyKey}' was already used for a different booking (${earlier.id}, ${instantOut(earlier.start.getTime(), zone)}–${instantOut(earlier.end.getTime(), zone)}). Use a new idempotencyKey for a new booking.`,
      { context: { bookingId: earlier.id } },
    );
  }
  return {
    ...(earlier.result as Omit<Output, 'bookingId' | 'replayed'>),
    timeZone: zone,
    ...rangeOut({ start: earlier.start.getTime(), end: earlier.end.getTime() }, zone),
    bookingId: earlier.id,
    replayed: true,
  };
}

export const bookSlot = defineTool({
  name: 'book_slot',
  toolset: 'booking',
  title: 'Book slot',
  description:
    'To book an appointment or reservation without double-booking; retry with the same idempotencyKey.',
  notes:
    'Book [start, end) without double-booking: lock, check free/busy and bookings, write, re-check, record; any failure rolls back. idempotencyKey makes retries safe.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    calendarId: writeCalendarId,
    start: instantIn,
    end: instantIn,
    summary: z.string().min(1).max(1024),
    description: z.string().max(8192).optional(),
    attendees: attendeesIn.optional(),
    idempotencyKey: z.string().min(1).max(200).optional().describe('Reuse when retrying.'),
    timeZone: timeZoneArg,
  }),
  output,
  exampleIntent:
    'Book a 30-minute appointment with a client at 10:00 on Tuesday, making sure nobody else can take that time.',
  example: {
    calendarId: 'primary',
    start: '2026-03-16T14:00:00-04:00',
    end: '2026-03-16T14:30:00-04:00',
    summary: 'Meeting with Alice',
    attendees: ['alice@example.com'],
    idempotencyKey: 'alice-2026-03-16',
  },
  exampleResult: {
    start: '2026-03-16T14:00:00-04:00',
    end: '2026-03-16T14:30:00-04:00',
    summary: 'Meeting with Alice',
    replayed: false,
  },
  async run(args, { access, booking, signal }) {
    const { lock, ledger, lockTtlMs } = services(booking);
    const handle = access.writable(args.calendarId);
    const calendarId = handle.calendar.id;
    const zone = callZone(access, args.timeZone, [handle]);
    const notices: string[] = [];
    const slot = slotOf(args.start, args.end, zone, notices);
    const screen = new TextScreen();
    const summary = screen.text('summary', args.summary);
    const description = screen.text('description', args.description);
    const attendees = uniqueEmails(args.attendees ?? []);
    const hash = requestHash({ calendarId, ...slot, summary, description, attendees });
    const key = args.idempotencyKey;
    if (key !== undefined) {
      const earlier = await ledger.byIdempotencyKey(key);
      if (earlier !== null) {
        return replay(earlier, hash, key, zone);
      }
    }

    const lease = await lock.acquire(calendarId, slot, lockTtlMs);
    if (lease === null) {
      throw new CalgateError(
        'conflict',
        `Not booked: another booking of an overlapping time on calendar ${calendarId} is in progress. Check availability again before retrying.`,
        { retry: true, context: { calendarId } },
      );
    }
    try {
      if (key !== undefined) {
        // A concurrent call with the same key may have finished while this one waited.
        const earlier = await ledger.byIdempotencyKey(key);
        if (earlier !== null) {
          return replay(earlier, hash, key, zone);
        }
      }
      const eventId = (generation: number) =>
        bookingEventId(
          access.principal.keyId,
          { calendarId, ...slot },
          key === undefined ? { leaseToken: lease.token } : { idempotencyKey: key },
          generation,
        );
      const ownIds = new Set(
        key === undefined
          ? []
          : Array.from({ length: MAX_GENERATIONS }, (_, generation) => eventId(generation)),
      );
      await verifyFree(handle, ledger, slot, signal, ownIds);
      const input: EventInput = {
        summary,
        start: { dateTime: instantOut(slot.start, handle.ref.timeZone), timeZone: handle.ref.timeZone },
        end: { dateTime: instantOut(slot.end, handle.ref.timeZone), timeZone: handle.ref.timeZone },
        ...(description === undefined ? {} : { description }),
        ...(attendees.length === 0 ? {} : { attendees: attendeesFrom(attendees) }),
      };
      const event = await writeBookingEvent(handle, input, slot, signal, eventId);
      if (attendees.length > 0 && sendsInvitationsItself(handle)) {
        notices.push(
          `Outlook sent the invitation to ${attendees.join(', ')} itself: Calgate cannot book on an Outlook calendar without Outlook inviting the attendees.`,
        );
      }
      const result = {
        eventId: event.id,
        calendarId,
        ...rangeOut(slot, zone),
        summary,
      };
      try {
        // Something created upstream between the check and the write shows up only now.
        const [other] = await blockingEvents(handle, slot, signal, event.id);
        if (other !== undefined) {
          throw conflictError(
            handle,
            {
              start: Date.parse(other.start.dateTime ?? `${other.start.date}T00:00:00Z`),
              end: Date.parse(other.end.dateTime ?? `${other.end.date}T00:00:00Z`),
              summary: other.summary,
              kind: 'event',
            },
            ' It appeared while this booking was being written; the booking was rolled back.',
          );
        }
        const record = await ledger.confirm({
          calendarId,
          eventId: event.id,
          start: new Date(slot.start),
          end: new Date(slot.end),
          requestHash: hash,
          result,
          ...(key === undefined ? {} : { idempotencyKey: key }),
        });
        return {
          timeZone: zone,
          ...result,
          bookingId: record.id,
          replayed: false,
          ...(screen.sanitized.length > 0 ? { sanitized: screen.sanitized } : {}),
          ...(notices.length > 0 ? { warnings: noticeWarnings(notices) } : {}),
        };
      } catch (error) {
        if (key !== undefined && isCalgateError(error) && error.code === 'already_exists') {
          // The same key finished first elsewhere; its event is the one this call would have written.
          const earlier = await ledger.byIdempotencyKey(key);
          if (earlier !== null && earlier.eventId === event.id) {
            return replay(earlier, hash, key, zone);
          }
        }
        throw await rollBack(handle, event.id, error, slot);
      }
    } finally {
      // Compare-and-delete: a lease that lapsed meanwhile is simply gone; another holder's stays.
      await lock.release(lease).catch(() => false);
    }
  },
});
