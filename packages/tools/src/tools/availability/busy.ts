/**
 * What makes a calendar busy for the availability tools: its provider's free/busy (opaque events
 * that are not cancelled and not declined by the calendar's own attendee), its confirmed ledger
 * bookings (reconciled with their events, so book_slot and these tools agree) and the active
 * booking holds on it. A calendar whose free/busy, bookings or holds cannot be read is a failure,
 * never free time.
 */
import { CalgateError, type ErrorCode, type Interval, mergeIntervals } from '@calgate/core';
import type { BusyEvent, FreeBusyResult } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import type { BookingServices, LedgerBooking } from '../../catalogue.ts';
import { busyIntervalsOf, freeBusyBatches, needsUpstreamFreeBusy, oldestSync } from '../../free-busy.ts';
import { FAN_OUT_PER_ACCOUNT, FAN_OUT_TOTAL, forEachLimited } from '../../merge.ts';
import { ledgerBusy, prefetchLedger } from '../bookings/ledger-busy.ts';

const CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'permission_denied',
  'not_found',
  'rate_limited',
  'needs_reauth',
  'upstream_unavailable',
  'unavailable',
]);

/** What reading busy time needs of a tool call (holds only when the gateway wires booking). */
export interface BusyContext {
  signal: AbortSignal;
  booking?: BookingServices | undefined;
}

/**
 * One calendar's busy time in the window, split by source (a confirmed booking counts as its
 * event); or why it could not be read.
 */
export type CalendarBusy = { calendarId: string; ok: true } & BusyAnswer;

/**
 * A calendar's busy time; `named`: the events that make it busy, when the answer was read from
 * events (a mirror, a local calendar: no second read to name them); `syncedAt`: the mirror's sync.
 */
export interface BusyAnswer {
  calendarId: string;
  events: Interval[];
  holds: Interval[];
  named?: readonly BusyEvent[];
  syncedAt?: string;
}

type CalendarBusyOrFailure = CalendarBusy | { calendarId: string; ok: false; error: CalgateError };

function failure(calendarId: string, code: string, message: string): CalendarBusyOrFailure {
  const known = (CODES.has(code) ? code : 'upstream_unavailable') as ErrorCode;
  return {
    calendarId,
    ok: false,
    error: new CalgateError(known, `Free/busy of calendar '${calendarId}' could not be read: ${message}`, {
      context: { calendarId },
    }),
  };
}

/** Active booking holds on a calendar over the window (none when booking is not wired). */
async function holdsOf(context: BusyContext, calendarId: string, window: Interval): Promise<Interval[]> {
  const lock = context.booking?.lock;
  if (lock === undefined) {
    return [];
  }
  try {
    const held = await lock.held(calendarId, window);
    return held.map((h) => ({ start: h.start, end: h.end }));
  } catch (error) {
    throw new CalgateError(
      'unavailable',
      `Booking holds on calendar '${calendarId}' could not be read, so its availability is unknown; try again shortly.`,
      { retry: true, context: { calendarId }, cause: error },
    );
  }
}

/**
 * Busy time of each calendar in `window`, clipped to it and merged, in the order of `handles`;
 * `withEvents` asks providers that read events anyway to name them (see BusyAnswer.named).
 */
export async function readBusy(
  handles: readonly CalendarHandle[],
  window: Interval,
  context: BusyContext,
  options: { withEvents?: boolean } = {},
): Promise<CalendarBusyOrFailure[]> {
  const answers = new Map<string, CalendarBusyOrFailure>();
  const ledger = prefetchLedger(context.booking, handles, window);
  // Holds are read while free/busy is (one round trip fewer on the way to the answer); a failure
  // surfaces where they are used.
  const holds = new Map(
    handles.map((handle) => {
      const read = holdsOf(context, handle.calendar.id, window);
      read.catch(() => {});
      return [handle.calendar.id, read] as const;
    }),
  );
  const timeMin = new Date(window.start).toISOString();
  const timeMax = new Date(window.end).toISOString();
  const clip = (spans: readonly Interval[]) =>
    mergeIntervals(
      spans.map((s) => ({ start: Math.max(s.start, window.start), end: Math.min(s.end, window.end) })),
    );
  await forEachLimited(
    freeBusyBatches(handles),
    (batch) => batch[0]?.calendar.connectionId ?? '',
    { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
    async (batch) => {
      const provider = (batch[0] as CalendarHandle).provider;
      let results: FreeBusyResult[];
      try {
        results = await provider.freeBusy(
          batch.map((handle) => handle.ref),
          timeMin,
          timeMax,
          context.signal,
          {
            withEvents: options.withEvents === true,
            fresh: needsUpstreamFreeBusy(batch[0] as CalendarHandle),
          },
        );
      } catch (error) {
        if (!(error instanceof CalgateError)) {
          throw error;
        }
        for (const handle of batch) {
          answers.set(handle.calendar.id, failure(handle.calendar.id, error.code, error.message));
        }
        return;
      }
      for (const handle of batch) {
        const id = handle.calendar.id;
        const result = results.find((r) => r.calendarId === id);
        const events = busyIntervalsOf(result);
        if (!Array.isArray(events)) {
          answers.set(id, failure(id, events.code, events.message));
          continue;
        }
        try {
          const held = await (holds.get(id) ?? holdsOf(context, id, window));
          answers.set(id, {
            calendarId: id,
            ok: true,
            events: clip(events),
            holds: clip(held),
            ...(result?.events === undefined ? {} : { named: result.events }),
            ...(result?.syncedAt === undefined ? {} : { syncedAt: result.syncedAt }),
          });
        } catch (error) {
          if (!(error instanceof CalgateError)) {
            throw error;
          }
          answers.set(id, { calendarId: id, ok: false, error });
        }
      }
    },
  );
  await addBookings(handles, window, context, answers, clip, ledger);
  return handles.map(
    (handle) =>
      answers.get(handle.calendar.id) ??
      failure(handle.calendar.id, 'upstream_unavailable', 'no free/busy answer.'),
  );
}

/** Adds the confirmed ledger bookings to the calendars that answered; unknown if the ledger is. */
async function addBookings(
  handles: readonly CalendarHandle[],
  window: Interval,
  context: BusyContext,
  answers: Map<string, CalendarBusyOrFailure>,
  clip: (spans: readonly Interval[]) => Interval[],
  prefetched: Promise<LedgerBooking[]> | undefined,
): Promise<void> {
  const upstream = new Map<string, Interval[]>();
  for (const answer of answers.values()) {
    if (answer.ok) {
      upstream.set(answer.calendarId, answer.events);
    }
  }
  try {
    const booked = await ledgerBusy(context.booking, handles, window, upstream, context.signal, prefetched);
    for (const [calendarId, spans] of booked) {
      const answer = answers.get(calendarId);
      if (answer?.ok) {
        answers.set(calendarId, { ...answer, events: clip([...answer.events, ...spans]) });
      }
    }
  } catch (error) {
    if (!(error instanceof CalgateError)) {
      throw error;
    }
    for (const calendarId of upstream.keys()) {
      answers.set(calendarId, { calendarId, ok: false, error });
    }
  }
}

/**
 * Busy time of each calendar, or the first reason one of them is unknown (thrown: a calendar
 * that cannot be read is never reported free). `unavailable` are calendars set apart before
 * reading (their account needs reconnecting, or they are disabled).
 */
export async function busyOrThrow(
  handles: readonly CalendarHandle[],
  unavailable: readonly { calendarId: string; error: CalgateError }[],
  window: Interval,
  context: BusyContext,
  options: { withEvents?: boolean } = {},
): Promise<BusyAnswer[]> {
  const [first] = unavailable;
  if (first !== undefined) {
    throw first.error;
  }
  const answers = await readBusy(handles, window, context, options);
  return answers.map((answer) => {
    if (!answer.ok) {
      throw answer.error;
    }
    return answer;
  });
}

/** The oldest mirror sync among the answers (undefined when none came from a mirror). */
export function syncedAtOf(answers: readonly { syncedAt?: string | undefined }[]): string | undefined {
  let oldest: string | undefined;
  for (const answer of answers) {
    oldest = oldestSync(oldest, answer.syncedAt);
  }
  return oldest;
}
