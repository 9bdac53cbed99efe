/**
 * A booking never outlives its event on an Outlook calendar (Graph emulator, over MCP): the
 * shared cases of booking-lifecycle.ts, as for Google (delete_event releases, update_event moves,
 * an event deleted or moved in Outlook directly is reconciled at the next read), plus an event
 * Graph cannot read for a while, cancel_booking and list_bookings. Graph deletes events outright,
 * so a booking's deleted event is simply gone. The calendar's zone is Europe/Berlin.
 */
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
import { connectClient, HIGH_RATE_LIMITS, type TestGateway } from './harness.ts';
import { startOutlookCalendarGateway, type TestMicrosoftEmulator } from './microsoft-fixture.ts';

const ANN = 'ann@contoso.com';

describe('a booking never outlives its event (Graph emulator, over MCP)', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let client: Client;
  let calendarId: string;
  let externalId: string;

  const status = (bookingId: string) => bookingStatus(gw, bookingId);
  const wall = (iso: string) => ({ dateTime: iso.replace('Z', ''), timeZone: 'UTC' });

  /** Someone changing the event in Outlook directly, not through Calgate. */
  async function direct(method: 'DELETE' | 'PATCH', eventId: string, body?: unknown): Promise<void> {
    const response = await ms.editDirectly(ANN, method, `/me/events/${encodeURIComponent(eventId)}`, body);
    expect(response.ok, `${method} ${eventId}: ${response.status}`).toBe(true);
  }

  const inOutlook = (eventId: string) => ms.admin.events(externalId).some((e) => e.id === eventId);

  beforeAll(async () => {
    ({ ms, gw } = await (async () => {
      const started = await startOutlookCalendarGateway({
        seed: {
          users: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ name: 'Calendar', events: [] }] }],
        },
        env: HIGH_RATE_LIMITS,
        // The workspace's zone: what Outlook calendars get when mailboxSettings may not be read.
        beforeConnect: (gateway, tenant) =>
          gateway.runtime.tenancy.updateTenant(tenant.tenantId, { timeZone: 'Europe/Berlin' }),
        connect: { email: ANN, access: 'write' },
      });
      calendarId = started.outlook.calendars.Calendar as string;
      externalId = started.outlook.externalIds.Calendar as string;
      client = await connectClient(started.gw.mcpUrl, started.tenant.secret);
      return started;
    })());
  }, 60_000);

  afterEach(() => {
    ms.admin.clearFaults();
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await ms?.close();
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

  it('an event deleted in Outlook directly: the next read and book_slot agree the slot is free', () =>
    deletedElsewhereIsNoticed(
      { gw, client, calendarId },
      { start: '2027-03-03T09:00:00Z', end: '2027-03-03T09:30:00Z' },
      (eventId) => direct('DELETE', eventId),
    ));

  it('an event moved in Outlook directly moves the booking at the next read', () =>
    movedElsewhereMovesBooking(
      { gw, client, calendarId },
      { start: '2027-03-05T09:00:00Z', end: '2027-03-05T09:30:00Z' },
      (eventId, moved) => direct('PATCH', eventId, { start: wall(moved.start), end: wall(moved.end) }),
      { start: '2027-03-05T16:00:00Z', end: '2027-03-05T17:00:00Z' },
      { start: '2027-03-05T17:00:00+01:00', end: '2027-03-05T18:00:00+01:00' },
    ));

  it('while Graph cannot read the event, the booking stays busy everywhere; once it can, both agree it is free', async () => {
    const slot = { start: '2027-03-04T09:00:00Z', end: '2027-03-04T09:30:00Z' };
    const booked = await book(client, { calendarId, ...slot, summary: 'Unknown for a while' });
    await direct('DELETE', booked.eventId);
    ms.admin.script({ match: { op: 'events.get' }, times: 100, action: { kind: 'error', status: 403 } });
    expect(await freeIn(client, calendarId, slot)).toEqual(ALL_BUSY);
    const refused = await call(client, 'book_slot', { calendarId, ...slot, summary: 'Too soon' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Not booked: the slot overlaps a confirmed booking/);
    ms.admin.clearFaults();
    expect(await freeIn(client, calendarId, slot)).toEqual(ALL_FREE);
    await book(client, { calendarId, ...slot, summary: 'Now' });
  });

  it('cancel_booking by id and by idempotencyKey deletes the event in Outlook and frees the slot', async () => {
    const one = { start: '2027-03-06T09:00:00Z', end: '2027-03-06T09:30:00Z' };
    const two = { start: '2027-03-06T10:00:00Z', end: '2027-03-06T10:30:00Z' };
    const a = await book(client, { calendarId, ...one, summary: 'By id' });
    const b = await book(client, { calendarId, ...two, summary: 'By key', idempotencyKey: 'outlook-by-key' });
    const byId = await call<Record<string, unknown>>(client, 'cancel_booking', { bookingId: a.bookingId });
    expect(byId.isError, byId.text).toBe(false);
    expect(byId.out).toMatchObject({
      status: 'cancelled',
      eventDeleted: true,
      start: '2027-03-06T10:00:00+01:00',
    });
    const byKey = await call<Record<string, unknown>>(client, 'cancel_booking', {
      idempotencyKey: 'outlook-by-key',
    });
    expect(byKey.isError, byKey.text).toBe(false);
    expect(byKey.out).toMatchObject({
      bookingId: b.bookingId,
      eventDeleted: true,
      idempotencyKey: 'outlook-by-key',
    });
    for (const booked of [a, b]) {
      expect(inOutlook(booked.eventId)).toBe(false);
      expect(await status(booked.bookingId)).toBe('cancelled');
    }
    expect(await freeIn(client, calendarId, one)).toEqual(ALL_FREE);
    expect(await freeIn(client, calendarId, two)).toEqual(ALL_FREE);
    // A booking whose event was already deleted in Outlook is still cancelled, and says so.
    await cancelAfterUpstreamDelete({ gw, client, calendarId }, one, (eventId) => direct('DELETE', eventId));
  });

  it('list_bookings shows Outlook bookings, reconciled with edits made in Outlook, in the calendar zone', async () => {
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
    const moved = await book(client, {
      calendarId,
      start: `${day}T13:00:00Z`,
      end: `${day}T13:30:00Z`,
      summary: 'Moved',
    });
    await direct('DELETE', lost.eventId);
    await direct('PATCH', moved.eventId, { start: wall(`${day}T15:00:00Z`), end: wall(`${day}T15:45:00Z`) });
    const window = { timeMin: `${day}T00:00:00+01:00`, timeMax: `${day}T23:00:00+01:00` };
    const listed = await listBookings(client, { ...window, calendarIds: [calendarId] });
    expect(listed.map((x) => [x.bookingId, x.status, x.start, x.end])).toEqual([
      [kept.bookingId, 'confirmed', `${day}T10:00:00+01:00`, `${day}T10:30:00+01:00`],
      [lost.bookingId, 'cancelled', `${day}T12:00:00+01:00`, `${day}T12:30:00+01:00`],
      [moved.bookingId, 'confirmed', `${day}T16:00:00+01:00`, `${day}T16:45:00+01:00`],
    ]);
    expect((await listBookings(client, { ...window, status: 'confirmed' })).map((x) => x.bookingId)).toEqual([
      kept.bookingId,
      moved.bookingId,
    ]);
  });
});
