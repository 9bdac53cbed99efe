/** book_slot's checks against upstream and the ledger, and the ids and hashes it derives. */
import { createHash } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { CalendarEvent } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import type { BookingLedger } from '../../catalogue.ts';
import { instantOut } from '../../range.ts';
import { blocks } from '../bookings/blocks.ts';
import { reconcile } from '../bookings/reconcile.ts';
import { derivedEventId, instantOf } from '../write/common.ts';

export { blocks };

export interface Slot {
  start: number;
  end: number;
}

/** What the caller asked for, normalised: the basis of the idempotency hash. */
export interface BookingRequest extends Slot {
  calendarId: string;
  summary: string;
  description: string | undefined;
  attendees: string[];
}

/** SHA-256 of the normalised parameters: the same request hashes the same however it was spelled. */
export function requestHash(request: BookingRequest): string {
  const normal = {
    calendarId: request.calendarId,
    start: request.start,
    end: request.end,
    summary: request.summary,
    description: request.description ?? '',
    attendees: [...new Set(request.attendees.map((email) => email.trim().toLowerCase()))].sort(),
  };
  return createHash('sha256').update(JSON.stringify(normal)).digest('hex');
}

/**
 * The event id of one booking attempt. With an idempotency key it depends only on the key and
 * the slot, so a retry names the same event; without one, on the slot and the attempt's lease,
 * so two attempts whose leases overlapped in time (one lapsed) can never adopt each other's event.
 * `generation` moves past ids whose events were deleted upstream (Google keeps their ids).
 */
export function bookingEventId(
  keyId: string,
  slot: Slot & { calendarId: string },
  discriminator: { idempotencyKey: string } | { leaseToken: string },
  generation: number,
): string {
  const tail =
    'idempotencyKey' in discriminator
      ? ['key', keyId, discriminator.idempotencyKey]
      : ['lease', discriminator.leaseToken];
  return derivedEventId(
    'book_slot',
    slot.calendarId,
    String(slot.start),
    String(slot.end),
    ...tail,
    String(generation),
  );
}

function overlaps(event: CalendarEvent, slot: Slot, timeZone: string): boolean {
  return instantOf(event.start, timeZone) < slot.end && slot.start < instantOf(event.end, timeZone);
}

/** Blocking events of the calendar overlapping the slot, other than `exceptId`. */
export async function blockingEvents(
  handle: CalendarHandle,
  slot: Slot,
  signal: AbortSignal,
  exceptId?: string,
): Promise<CalendarEvent[]> {
  const out: CalendarEvent[] = [];
  let pageToken: string | undefined;
  do {
    const page = await handle.provider.listEvents(
      handle.ref,
      {
        timeMin: new Date(slot.start).toISOString(),
        timeMax: new Date(slot.end).toISOString(),
        maxResults: 250,
        singleEvents: true,
        // The mirror never decides a booking: Google itself is asked.
        fresh: true,
        ...(pageToken === undefined ? {} : { pageToken }),
      },
      signal,
    );
    for (const event of page.items) {
      if (event.id !== exceptId && blocks(event) && overlaps(event, slot, handle.ref.timeZone)) {
        out.push(event);
      }
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return out;
}

/** The conflict answer: the time of what is in the way, and its title only if the key may read it. */
export function conflictError(
  handle: CalendarHandle,
  what: { start: number; end: number; summary?: string | undefined; kind: 'event' | 'booking' | 'busy' },
  suffix = '',
): CalgateError {
  const title =
    handle.calendar.canRead && what.summary !== undefined && what.kind === 'event'
      ? ` '${what.summary}'`
      : '';
  const iso = (ms: number) => instantOut(ms, handle.calendar.timeZone);
  const noun =
    what.kind === 'booking' ? 'a confirmed booking' : what.kind === 'event' ? 'the event' : 'busy time';
  return new CalgateError(
    'conflict',
    `Not booked: the slot overlaps ${noun}${title} from ${iso(what.start)} to ${iso(what.end)} on calendar ${handle.calendar.id}.${suffix}`,
    {
      context: {
        calendarId: handle.calendar.id,
        conflict: {
          start: iso(what.start),
          end: iso(what.end),
          ...(title === '' ? {} : { summary: what.summary }),
        },
      },
    },
  );
}

/**
 * Fresh upstream free/busy and the ledger (reconciled with the bookings' events) for the slot. A calendar whose free/busy cannot be read
 * refuses the booking: unknown is never free. Events are listed to name what is in the way, and
 * to recognise `ownIds`: this idempotency key's own event, left by an attempt that stopped
 * before it reached the ledger, which the retry then adopts instead of refusing.
 */
export async function verifyFree(
  handle: CalendarHandle,
  ledger: BookingLedger,
  slot: Slot,
  signal: AbortSignal,
  ownIds: ReadonlySet<string> = new Set(),
): Promise<void> {
  const [freeBusy, booked] = await Promise.all([
    handle.provider.freeBusy(
      [handle.ref],
      new Date(slot.start).toISOString(),
      new Date(slot.end).toISOString(),
      signal,
      // The mirror never decides a booking: its copy may be a moment behind the upstream.
      { fresh: true },
    ),
    ledger.overlapping(handle.calendar.id, new Date(slot.start), new Date(slot.end)),
  ]);
  // A booking whose event was deleted or moved elsewhere no longer holds the slot.
  const settled = await Promise.all(booked.map((row) => reconcile(ledger, handle, row, signal)));
  const first = settled
    .filter((result) => result.kind !== 'released')
    .map((result) => result.booking)
    .find((row) => row.start.getTime() < slot.end && slot.start < row.end.getTime());
  if (first !== undefined) {
    throw conflictError(handle, { start: first.start.getTime(), end: first.end.getTime(), kind: 'booking' });
  }
  const mine = freeBusy.find((result) => result.calendarId === handle.calendar.id);
  if (mine === undefined || mine.error !== undefined || mine.busy === undefined) {
    throw new CalgateError(
      'upstream_unavailable',
      `Not booked: the free/busy of calendar ${handle.calendar.id} could not be read${mine?.error ? ` (${mine.error.message})` : ''}, and an unknown slot is never assumed free. Try again shortly.`,
      { retry: true },
    );
  }
  const busy = mine.busy
    .map((block) => ({ start: Date.parse(block.start), end: Date.parse(block.end) }))
    .find((block) => block.start < slot.end && slot.start < block.end);
  if (busy !== undefined) {
    const blocking = await blockingEvents(handle, slot, signal).catch(() => undefined);
    const others = blocking?.filter((event) => !ownIds.has(event.id));
    if (others !== undefined && others.length === 0 && (blocking?.length ?? 0) > 0) {
      return;
    }
    const event = others?.[0];
    throw event === undefined
      ? conflictError(handle, { ...busy, kind: 'busy' })
      : conflictError(handle, {
          start: instantOf(event.start, handle.ref.timeZone),
          end: instantOf(event.end, handle.ref.timeZone),
          summary: event.summary,
          kind: 'event',
        });
  }
}
