/**
 * Confirmed ledger bookings as busy time, so the availability tools and book_slot agree: a slot
 * book_slot would refuse is never reported free. A booking whose range upstream free/busy does
 * not cover disagrees with the calendar (its event was deleted, moved or made free elsewhere):
 * only then is its event read and the booking reconciled, so agreement costs no extra call.
 */
import { CalgateError, type Interval, mergeIntervals } from '@calgate/core';
import type { CalendarHandle } from '../../access.ts';
import type { BookingServices, LedgerBooking } from '../../catalogue.ts';
import { FAN_OUT_PER_ACCOUNT, FAN_OUT_TOTAL, forEachLimited } from '../../merge.ts';
import { reconcile } from './reconcile.ts';

function covered(busy: readonly Interval[], span: Interval): boolean {
  return busy.some((block) => block.start <= span.start && span.end <= block.end);
}

/**
 * The confirmed bookings of every calendar in `window`, read while free/busy is being read (one
 * round trip fewer on the way to the answer); undefined when booking is not wired. A failure
 * surfaces where the rows are used (ledgerBusy), not here.
 */
export function prefetchLedger(
  booking: BookingServices | undefined,
  handles: readonly CalendarHandle[],
  window: Interval,
): Promise<LedgerBooking[]> | undefined {
  if (booking === undefined || handles.length === 0) {
    return undefined;
  }
  const rows = booking.ledger.confirmedIn(
    handles.map((handle) => handle.calendar.id),
    new Date(window.start),
    new Date(window.end),
  );
  rows.catch(() => {});
  return rows;
}

/**
 * Busy intervals of the confirmed bookings per calendar in `window`, after reconciliation.
 * `upstream` holds the free/busy of the calendars that answered; only those are looked up.
 * Throws `unavailable` when the ledger cannot be read: the calendars' time is then unknown.
 * `prefetched`: the rows prefetchLedger started for these calendars and window.
 */
export async function ledgerBusy(
  booking: BookingServices | undefined,
  handles: readonly CalendarHandle[],
  window: Interval,
  upstream: ReadonlyMap<string, readonly Interval[]>,
  signal: AbortSignal,
  prefetched?: Promise<LedgerBooking[]>,
): Promise<Map<string, Interval[]>> {
  const out = new Map<string, Interval[]>();
  if (booking === undefined || upstream.size === 0) {
    return out;
  }
  const { ledger } = booking;
  const byId = new Map(handles.map((handle) => [handle.calendar.id, handle]));
  try {
    const rows =
      prefetched === undefined
        ? await ledger.confirmedIn([...upstream.keys()], new Date(window.start), new Date(window.end))
        : (await prefetched).filter((row) => upstream.has(row.calendarId));
    const add = (row: LedgerBooking) => {
      const span = { start: row.start.getTime(), end: row.end.getTime() };
      if (span.start < window.end && window.start < span.end) {
        out.set(row.calendarId, [...(out.get(row.calendarId) ?? []), span]);
      }
    };
    const suspicious: { row: LedgerBooking; handle: CalendarHandle }[] = [];
    for (const row of rows) {
      const merged = mergeIntervals(upstream.get(row.calendarId) ?? []);
      const inWindow = {
        start: Math.max(row.start.getTime(), window.start),
        end: Math.min(row.end.getTime(), window.end),
      };
      const handle = byId.get(row.calendarId);
      if (covered(merged, inWindow) || handle === undefined) {
        add(row);
      } else {
        suspicious.push({ row, handle });
      }
    }
    await forEachLimited(
      suspicious,
      (item) => item.handle.calendar.connectionId,
      { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
      async ({ row, handle }) => {
        const settled = await reconcile(ledger, handle, row, signal);
        if (settled.kind !== 'released') {
          add(settled.booking);
        }
      },
    );
  } catch (error) {
    if (error instanceof CalgateError && error.code !== 'internal') {
      throw error;
    }
    throw new CalgateError(
      'unavailable',
      'The booking ledger could not be read, so availability is unknown; try again shortly.',
      { retry: true, cause: error },
    );
  }
  return out;
}

/**
 * find_free_time's variant: adds the bookings to its per-calendar answers (busy intervals, or
 * why the calendar is unknown) in place; a ledger failure makes those calendars unknown.
 */
export async function addLedgerBusy(
  booking: BookingServices | undefined,
  handles: readonly CalendarHandle[],
  window: Interval,
  answers: Map<string, Interval[] | { code: string; message: string }>,
  signal: AbortSignal,
  prefetched?: Promise<LedgerBooking[]>,
): Promise<void> {
  const upstream = new Map<string, Interval[]>();
  for (const [calendarId, answer] of answers) {
    if (Array.isArray(answer)) {
      upstream.set(calendarId, answer);
    }
  }
  try {
    const booked = await ledgerBusy(booking, handles, window, upstream, signal, prefetched);
    for (const [calendarId, spans] of booked) {
      answers.set(calendarId, [...(upstream.get(calendarId) ?? []), ...spans]);
    }
  } catch (error) {
    if (!(error instanceof CalgateError)) {
      throw error;
    }
    for (const calendarId of upstream.keys()) {
      answers.set(calendarId, { code: error.code, message: error.message });
    }
  }
}
