import { CalgateError } from '@calgate/core';
import { z } from 'zod';
import type { CalendarHandle } from '../../access.ts';
import type { BookingLedger, LedgerBooking, ToolContext } from '../../catalogue.ts';
import { defineTool } from '../../catalogue.ts';
import { timeZoneOut } from '../../local-time.ts';
import { FAN_OUT_PER_ACCOUNT, FAN_OUT_TOTAL, forEachLimited } from '../../merge.ts';
import { boundOf, rangeBound } from '../../range.ts';
import { readBusy } from '../availability/busy.ts';
import { callZone, MAX_WINDOW_DAYS, windowInput } from '../availability/window.ts';
import { calendarIds, readableHandles } from '../read/common.ts';
import { reconcile } from './reconcile.ts';
import { bookingOut, ledgerOf, toBookingOut } from './shape.ts';

const DAY_MS = 86_400_000;

/**
 * Confirmed bookings whose event changed elsewhere are put right before they are listed: over a
 * window the availability tools could read, by the same free/busy check they make (an event is
 * read only where the calendar disagrees); over a longer one, by reading each booking's event.
 */
async function reconcileListed(
  rows: readonly LedgerBooking[],
  handles: readonly CalendarHandle[],
  ledger: BookingLedger,
  context: ToolContext,
): Promise<void> {
  const byId = new Map(handles.map((handle) => [handle.calendar.id, handle]));
  const confirmed = rows.filter((row) => row.status === 'confirmed' && byId.has(row.calendarId));
  if (confirmed.length === 0) {
    return;
  }
  const start = Math.min(...confirmed.map((row) => row.start.getTime()));
  const end = Math.max(...confirmed.map((row) => row.end.getTime()));
  const involved = handles.filter((handle) => confirmed.some((row) => row.calendarId === handle.calendar.id));
  if (end - start <= MAX_WINDOW_DAYS * DAY_MS) {
    await readBusy(involved, { start, end }, context);
    return;
  }
  await forEachLimited(
    confirmed,
    (row) => byId.get(row.calendarId)?.calendar.connectionId ?? '',
    { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
    async (row) => {
      const handle = byId.get(row.calendarId);
      if (handle !== undefined) {
        await reconcile(ledger, handle, row, context.signal);
      }
    },
  );
}

export const listBookings = defineTool({
  name: 'list_bookings',
  toolset: 'booking',
  title: 'List bookings',
  description: 'To see which appointments were booked with book_slot, confirmed or cancelled, by start.',
  notes: 'book_slot bookings of readable calendars, by start.',
  access: 'read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarIds,
    timeMin: rangeBound.optional(),
    timeMax: rangeBound.optional(),
    status: z.enum(['confirmed', 'cancelled']).optional(),
    timeZone: windowInput.timeZone,
    maxResults: z.number().int().min(1).max(500).default(100),
  }),
  output: z.object({
    timeZone: timeZoneOut,
    bookings: z.array(bookingOut),
    truncated: z.boolean(),
  }),
  exampleIntent: 'Which appointments have been booked this week?',
  example: { timeMin: '2026-03-16', timeMax: '2026-03-20', status: 'confirmed' },
  exampleResult: {
    bookings: [
      {
        start: '2026-03-16T14:00:00-04:00',
        status: 'confirmed',
        summary: 'Meeting with Alice',
        idempotencyKey: 'alice-2026-03-16',
      },
    ],
  },
  async run(args, context) {
    const ledger = ledgerOf(context.booking);
    const { handles, unavailable } = readableHandles(context.access, args.calendarIds);
    const zone = callZone(context.access, args.timeZone, handles);
    const timeMin = args.timeMin === undefined ? undefined : boundOf(args.timeMin, zone, 'min');
    const timeMax = args.timeMax === undefined ? undefined : boundOf(args.timeMax, zone, 'max');
    if (timeMin !== undefined && timeMax !== undefined && timeMax <= timeMin) {
      throw new CalgateError('invalid_argument', 'timeMax must be later than timeMin.');
    }
    const filter = {
      calendarIds: [...handles.map((handle) => handle.calendar.id), ...unavailable.map((u) => u.calendarId)],
      timeMin: timeMin === undefined ? undefined : new Date(timeMin),
      timeMax: timeMax === undefined ? undefined : new Date(timeMax),
      limit: args.maxResults + 1,
    };
    if (args.status !== 'cancelled') {
      await reconcileListed(await ledger.list({ ...filter, status: 'confirmed' }), handles, ledger, context);
    }
    const rows = await ledger.list({ ...filter, status: args.status });
    return {
      timeZone: zone,
      bookings: rows.slice(0, args.maxResults).map((row) => toBookingOut(row, zone)),
      truncated: rows.length > args.maxResults,
    };
  },
});
