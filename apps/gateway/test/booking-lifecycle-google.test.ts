import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_BUSY,
  ALL_FREE,
  book,
  bookingStatus,
  call,
  cancelAfterUpstreamDelete,
  deletedElsewhereIsNoticed,
  deleteEventReleases,
  freeIn,
  listBookings,
  movedElsewhereMovesBooking,
  updateEventMovesBooking,
} from './booking-lifecycle.ts';
import { startGoogleCalendarGateway, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-lifecycle.apps.googleusercontent.com', clientSecret: 'lifecycle-secret' };
const ANN = 'ann@example.com';

describe('a booking never outlives its event (Google emulator, over MCP)', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let client: Client;
  let calendarId: string;

  const status = (bookingId: string) => bookingStatus(gw, bookingId);

  /** Someone changing the event in Google directly, not through Calgate. */
  async function direct(method: 'DELETE' | 'PATCH', eventId: string, body?: unknown): Promise<void> {
    const response = await emulator.editDirectly(ANN, method, `/${encodeURIComponent(eventId)}`, body);
    expect(response.ok, `${method} ${eventId}: ${response.status}`).toBe(true);
  }

  const upstreamStatus = (eventId: string) =>
    emulator.admin.events(ANN).find((e) => e.id === eventId)?.status;

  beforeAll(async () => {
    const started = await startGoogleCalendarGateway({
      client: CLIENT,
      seed: { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] },
      env: () => HIGH_RATE_LIMITS,
      connect: [{ email: ANN, access: 'write' }],
    });
    ({ emulator, gw } = started);
    calendarId = started.calendars[ANN] as string;
    client = await connectClient(gw.mcpUrl, started.tenant.secret);
  }, 60_000);

  afterEach(() => {
    emulator.admin.clearFaults();
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('delete_event releases the booking: free in every availability tool and bookable again', () =>
    deleteEventReleases(
      { gw, client, calendarId },
      { start: '2027-03-01T09:00:00Z', end: '2027-03-01T09:30:00Z' },
    ));

  it('update_event moving the event moves the booking: old slot free and bookable, new slot busy', () =>
    updateEventMovesBooking(
      { gw, client, calendarId },
      { start: '2027-03-02T09:00:00Z', end: '2027-03-02T09:30:00Z' },
      { start: '2027-03-02T13:00:00Z', end: '2027-03-02T13:30:00Z' },
      { start: '2027-03-02T14:00:00+01:00', end: '2027-03-02T14:30:00+01:00' },
    ));

  it('an event deleted in Google directly: the next read and book_slot agree the slot is free', () =>
    deletedElsewhereIsNoticed(
      { gw, client, calendarId },
      { start: '2027-03-03T09:00:00Z', end: '2027-03-03T09:30:00Z' },
      (eventId) => direct('DELETE', eventId),
    ));

  it('while the event cannot be read, the booking stays busy everywhere; once it can, both agree it is free', async () => {
    const slot = { start: '2027-03-04T09:00:00Z', end: '2027-03-04T09:30:00Z' };
    const booked = await book(client, { calendarId, ...slot, summary: 'Unknown for a while' });
    await direct('DELETE', booked.eventId);
    emulator.admin.script({
      match: { op: 'events.get' },
      times: 100,
      action: { kind: 'error', status: 403, reason: 'forbidden' },
    });
    expect(await freeIn(client, calendarId, slot)).toEqual(ALL_BUSY);
    const refused = await call(client, 'book_slot', { calendarId, ...slot, summary: 'Too soon' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Not booked: the slot overlaps a confirmed booking/);
    emulator.admin.clearFaults();
    expect(await freeIn(client, calendarId, slot)).toEqual(ALL_FREE);
    await book(client, { calendarId, ...slot, summary: 'Now' });
  });

  it('an event moved in Google directly moves the booking at the next read', () =>
    movedElsewhereMovesBooking(
      { gw, client, calendarId },
      { start: '2027-03-05T09:00:00Z', end: '2027-03-05T09:30:00Z' },
      (eventId, moved) =>
        direct('PATCH', eventId, { start: { dateTime: moved.start }, end: { dateTime: moved.end } }),
      { start: '2027-03-05T16:00:00Z', end: '2027-03-05T17:00:00Z' },
      { start: '2027-03-05T17:00:00+01:00', end: '2027-03-05T18:00:00+01:00' },
    ));

  it('cancel_booking by id and by idempotencyKey deletes the event in Google and frees the slot', async () => {
    const one = { start: '2027-03-06T09:00:00Z', end: '2027-03-06T09:30:00Z' };
    const two = { start: '2027-03-06T10:00:00Z', end: '2027-03-06T10:30:00Z' };
    const a = await book(client, { calendarId, ...one, summary: 'By id' });
    const b = await book(client, { calendarId, ...two, summary: 'By key', idempotencyKey: 'google-by-key' });
    const byId = await call<Record<string, unknown>>(client, 'cancel_booking', { bookingId: a.bookingId });
    expect(byId.isError, byId.text).toBe(false);
    expect(byId.out).toMatchObject({
      status: 'cancelled',
      eventDeleted: true,
      start: '2027-03-06T10:00:00+01:00',
    });
    const byKey = await call<Record<string, unknown>>(client, 'cancel_booking', {
      idempotencyKey: 'google-by-key',
    });
    expect(byKey.isError, byKey.text).toBe(false);
    expect(byKey.out).toMatchObject({
      bookingId: b.bookingId,
      eventDeleted: true,
      idempotencyKey: 'google-by-key',
    });
    for (const booked of [a, b]) {
      expect(upstreamStatus(booked.eventId) ?? 'cancelled').toBe('cancelled');
      expect(await status(booked.bookingId)).toBe('cancelled');
    }
    expect(await freeIn(client, calendarId, one)).toEqual(ALL_FREE);
    expect(await freeIn(client, calendarId, two)).toEqual(ALL_FREE);
    // A booking whose event was already deleted in Google is still cancelled, and says so.
    await cancelAfterUpstreamDelete({ gw, client, calendarId }, one, (eventId) => direct('DELETE', eventId));
  });

  it('list_bookings shows Google bookings, reconciled, in the calendar zone', async () => {
    const day = '2027-03-07';
    const kept = await book(client, {
      calendarId,
      start: `${day}T09:00:00Z`,
      end: `${day}T09:30:00Z`,
      summary: 'Kept',
    });
    const lost = await book(client, {
      calendarId,
      start: `${day}T11:00:00Z`,
      end: `${day}T11:30:00Z`,
      summary: 'Lost',
    });
    await direct('DELETE', lost.eventId);
    const window = { timeMin: `${day}T00:00:00+01:00`, timeMax: `${day}T23:00:00+01:00` };
    const listed = await listBookings(client, { ...window, calendarIds: [calendarId] });
    expect(listed.map((x) => [x.bookingId, x.status, x.start])).toEqual([
      [kept.bookingId, 'confirmed', `${day}T10:00:00+01:00`],
      [lost.bookingId, 'cancelled', `${day}T12:00:00+01:00`],
    ]);
    expect((await listBookings(client, { ...window, status: 'confirmed' })).map((x) => x.bookingId)).toEqual([
      kept.bookingId,
    ]);
  });
});
