/**
 * What the booking-lifecycle tests share (local calendars and the Google emulator): calls over
 * MCP, and the one question they keep asking: is a slot free in every availability tool, and
 * does book_slot agree?
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { textOf } from './harness.ts';

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
