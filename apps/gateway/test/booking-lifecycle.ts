/**
 * What the booking-lifecycle tests share (local calendars, the Google and Graph emulators): calls over
 * MCP, the one question they keep asking (is a slot free in every availability tool, and does
 * book_slot agree?), and the cases that run the same steps on both.
 */
import type { Client } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { type TestGateway, textOf } from './harness.ts';

export interface Call<T> {
  isError: boolean;
  text: string;
  out: T;
}

export async function call<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Call<T>> {
  const result = await client.callTool({ name, arguments: args });
  return { isError: result.isError === true, text: textOf(result), out: result.structuredContent as T };
}

export interface Booked {
  bookingId: string;
  eventId: string;
  calendarId: string;
}

export interface BookingOut {
  bookingId: string;
  calendarId: string;
  eventId: string;
  start: string;
  end: string;
  status: 'confirmed' | 'cancelled';
  summary?: string;
  idempotencyKey?: string;
}

export async function book(client: Client, args: Record<string, unknown>): Promise<Booked> {
  const booked = await call<Booked>(client, 'book_slot', args);
  expect(booked.isError, booked.text).toBe(false);
  return booked.out;
}

interface Range {
  start: string;
  end: string;
}

const contains = (ranges: readonly Range[], slot: { start: string; end: string }) =>
  ranges.some(
    (range) =>
      Date.parse(range.start) <= Date.parse(slot.start) && Date.parse(slot.end) <= Date.parse(range.end),
  );

const hours = (iso: string, h: number) => new Date(Date.parse(iso) + h * 3_600_000).toISOString();

/**
 * Whether each availability tool calls [start, end) of the calendar free, looking at a window of
 * a few hours around it (so each tool reads the ledger over more than the slot itself).
 */
export async function freeIn(
  client: Client,
  calendarId: string,
  slot: Range,
): Promise<
  Record<'find_free_slots' | 'check_availability' | 'get_availability' | 'find_free_time', boolean>
> {
  const from = hours(slot.start, -3);
  const to = hours(slot.end, 3);
  const [slots, check, availability, freeTime] = await Promise.all([
    call<{ slots: Range[] }>(client, 'find_free_slots', {
      calendarId,
      start: from,
      end: to,
      minDurationMinutes: 15,
    }),
    call<{ available: boolean }>(client, 'check_availability', { calendarId, ...slot }),
    call<{ free: Range[] }>(client, 'get_availability', {
      calendarIds: [calendarId],
      start: from,
      end: to,
      minFreeSlotMinutes: 15,
    }),
    call<{ free: Range[] }>(client, 'find_free_time', {
      calendarIds: [calendarId],
      timeMin: from,
      timeMax: to,
    }),
  ]);
  for (const answer of [slots, check, availability, freeTime]) {
    expect(answer.isError, answer.text).toBe(false);
  }
  return {
    find_free_slots: contains(slots.out.slots, slot),
    check_availability: check.out.available,
    get_availability: contains(availability.out.free, slot),
    find_free_time: contains(freeTime.out.free, slot),
  };
}

export const ALL_FREE = {
  find_free_slots: true,
  check_availability: true,
  get_availability: true,
  find_free_time: true,
};

export const ALL_BUSY = {
  find_free_slots: false,
  check_availability: false,
  get_availability: false,
  find_free_time: false,
};

export async function listBookings(client: Client, args: Record<string, unknown>): Promise<BookingOut[]> {
  const listed = await call<{ bookings: BookingOut[] }>(client, 'list_bookings', args);
  expect(listed.isError, listed.text).toBe(false);
  return listed.out.bookings;
}

/** The booking as list_bookings shows it to this client. */
export async function bookingOf(client: Client, calendarId: string, bookingId: string): Promise<BookingOut> {
  const found = (await listBookings(client, { calendarIds: [calendarId], maxResults: 500 })).find(
    (booking) => booking.bookingId === bookingId,
  );
  expect(found, `booking ${bookingId} in list_bookings`).toBeDefined();
  return found as BookingOut;
}

/** A booking's status in the ledger itself, beneath every tool. */
export async function bookingStatus(gw: TestGateway, bookingId: string): Promise<string> {
  const { rows } = await gw.db.pool.query('SELECT status FROM bookings WHERE id = $1', [bookingId]);
  return rows[0].status as string;
}

/** The calendar a case books on, the client that books, and the gateway whose ledger it reads. */
export interface BookingSetup {
  gw: TestGateway;
  client: Client;
  calendarId: string;
}

/** delete_event releases the booking: the slot is free in every availability tool and bookable again. */
export async function deleteEventReleases(
  { gw, client, calendarId }: BookingSetup,
  slot: Range,
): Promise<void> {
  const booked = await book(client, { calendarId, ...slot, summary: 'Interview' });
  expect(await freeIn(client, calendarId, slot)).toEqual(ALL_BUSY);
  const deleted = await call(client, 'delete_event', { calendarId, eventId: booked.eventId });
  expect(deleted.isError, deleted.text).toBe(false);
  expect(await bookingStatus(gw, booked.bookingId)).toBe('cancelled');
  expect(await freeIn(client, calendarId, slot)).toEqual(ALL_FREE);
  const again = await book(client, { calendarId, ...slot, summary: 'Interview, second try' });
  expect(again.bookingId).not.toBe(booked.bookingId);
}

/**
 * update_event moving the event to `moved` moves the booking (`local`: its new times in the
 * calendar's zone): the old slot is free and bookable, the new one busy.
 */
export async function updateEventMovesBooking(
  { client, calendarId }: BookingSetup,
  slot: Range,
  moved: Range,
  local: Range,
): Promise<void> {
  const booked = await book(client, { calendarId, ...slot, summary: 'Review' });
  const update = await call<{ warnings?: { message: string }[] }>(client, 'update_event', {
    calendarId,
    eventId: booked.eventId,
    start: { dateTime: moved.start },
    end: { dateTime: moved.end },
  });
  expect(update.isError, update.text).toBe(false);
  expect(update.out.warnings?.map((w) => w.message)).toContain(
    `Booking ${booked.bookingId} moved with the event.`,
  );
  expect(await bookingOf(client, calendarId, booked.bookingId)).toMatchObject({
    status: 'confirmed',
    ...local,
  });
  expect(await freeIn(client, calendarId, slot)).toEqual(ALL_FREE);
  expect(await freeIn(client, calendarId, moved)).toEqual(ALL_BUSY);
  const refused = await call(client, 'book_slot', { calendarId, ...moved, summary: 'Clash' });
  expect(refused.isError).toBe(true);
  expect(refused.text).toMatch(/^Not booked: the slot overlaps/);
  await book(client, { calendarId, ...slot, summary: 'Old slot, new booking' });
}

/**
 * An event deleted behind Calgate's back (`deleteElsewhere`) leaves its booking confirmed until
 * the next read, which cancels it; book_slot then agrees the slot is free.
 */
export async function deletedElsewhereIsNoticed(
  { gw, client, calendarId }: BookingSetup,
  slot: Range,
  deleteElsewhere: (eventId: string) => Promise<void>,
): Promise<void> {
  const booked = await book(client, { calendarId, ...slot, summary: 'Deleted elsewhere' });
  await deleteElsewhere(booked.eventId);
  expect(await bookingStatus(gw, booked.bookingId)).toBe('confirmed');
  expect(await freeIn(client, calendarId, slot)).toEqual(ALL_FREE);
  expect(await bookingStatus(gw, booked.bookingId)).toBe('cancelled');
  await book(client, { calendarId, ...slot, summary: 'Free again' });
}

/**
 * An event moved behind Calgate's back (`moveElsewhere` puts it at `moved`) moves its booking at
 * the next read: book_slot is the first to meet it, books the old slot, and the booking shows
 * the new times (`local`: in the calendar's zone).
 */
export async function movedElsewhereMovesBooking(
  { client, calendarId }: BookingSetup,
  slot: Range,
  moveElsewhere: (eventId: string, moved: Range) => Promise<void>,
  moved: Range,
  local: Range,
): Promise<void> {
  const booked = await book(client, { calendarId, ...slot, summary: 'Moved elsewhere' });
  await moveElsewhere(booked.eventId, moved);
  await book(client, { calendarId, ...slot, summary: 'Old slot' });
  expect(await bookingOf(client, calendarId, booked.bookingId)).toMatchObject({
    status: 'confirmed',
    ...local,
  });
  expect(await freeIn(client, calendarId, moved)).toEqual(ALL_BUSY);
}

/**
 * cancel_booking of a booking whose event was already deleted in the upstream calendar: the booking
 * is still cancelled, and the answer says no event was deleted.
 */
export async function cancelAfterUpstreamDelete(
  { gw, client, calendarId }: BookingSetup,
  slot: Range,
  deleteElsewhere: (eventId: string) => Promise<void>,
): Promise<void> {
  const booked = await book(client, { calendarId, ...slot, summary: 'Gone first' });
  await deleteElsewhere(booked.eventId);
  const gone = await call<Record<string, unknown>>(client, 'cancel_booking', { bookingId: booked.bookingId });
  expect(gone.isError, gone.text).toBe(false);
  expect(gone.out).toMatchObject({ alreadyCancelled: false, eventDeleted: false });
  expect(await bookingStatus(gw, booked.bookingId)).toBe('cancelled');
}
