import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_BUSY,
  ALL_FREE,
  book,
  bookingOf,
  bookingStatus,
  call,
  deletedElsewhereIsNoticed,
  deleteEventReleases,
  freeIn,
  listBookings,
  updateEventMovesBooking,
} from './booking-lifecycle.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

describe('a booking never outlives its event (local calendars, over MCP)', () => {
  let gw: TestGateway;
  let owner: Client;
  let reader: Client;
  let stranger: Client;
  let otherTenant: Client;
  let calendarId: string;
  let store: LocalEventStore;

  const status = (bookingId: string) => bookingStatus(gw, bookingId);

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    store = new LocalEventStore(gw.db);
    const tenant = await gw.seedTenant('Acme');
    calendarId = await gw.localCalendar(tenant.tenantId, 'Room', 'Europe/Berlin');
    const scratch = await gw.localCalendar(tenant.tenantId, 'Scratch', 'UTC');
    await gw.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    // A second key of the same tenant that may only read the room (and write elsewhere, so it
    // is offered cancel_booking at all); a third that holds no grant on the room.
    const readerKey = await gw.runtime.keys.create(tenant.tenantId, { name: 'reader' });
    await gw.grant(tenant.tenantId, readerKey.key.id, calendarId, { read: true, write: false });
    await gw.grant(tenant.tenantId, readerKey.key.id, scratch, { read: true, write: true });
    const strangerKey = await gw.runtime.keys.create(tenant.tenantId, { name: 'stranger' });
    await gw.grant(tenant.tenantId, strangerKey.key.id, scratch, { read: true, write: true });
    const other = await gw.seedTenant('Other');
    const otherCalendar = await gw.localCalendar(other.tenantId, 'Theirs', 'UTC');
    await gw.grant(other.tenantId, other.keyId, otherCalendar, { read: true, write: true });
    owner = await connectClient(gw.mcpUrl, tenant.secret);
    reader = await connectClient(gw.mcpUrl, readerKey.secret);
    stranger = await connectClient(gw.mcpUrl, strangerKey.secret);
    otherTenant = await connectClient(gw.mcpUrl, other.secret);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([owner, reader, stranger, otherTenant].map((client) => client?.close()));
    await gw?.stop();
  });

  it('delete_event releases the booking: free in every availability tool and bookable again', () =>
    deleteEventReleases(
      { gw, client: owner, calendarId },
      { start: '2027-12-01T09:00:00Z', end: '2027-12-01T09:30:00Z' },
    ));

  it('update_event moving the event moves the booking: old slot free and bookable, new slot busy', () =>
    updateEventMovesBooking(
      { gw, client: owner, calendarId },
      { start: '2027-12-02T09:00:00Z', end: '2027-12-02T09:30:00Z' },
      { start: '2027-12-02T14:00:00Z', end: '2027-12-02T14:45:00Z' },
      // Europe/Berlin is at +01:00 in December; instants carry no milliseconds.
      { start: '2027-12-02T15:00:00+01:00', end: '2027-12-02T15:45:00+01:00' },
    ));

  it('a move onto another booking releases the moved booking and says so; the other keeps its claim', async () => {
    const first = { start: '2027-12-03T09:00:00Z', end: '2027-12-03T10:00:00Z' };
    const second = { start: '2027-12-03T11:00:00Z', end: '2027-12-03T12:00:00Z' };
    const a = await book(owner, { calendarId, ...first, summary: 'A' });
    const b = await book(owner, { calendarId, ...second, summary: 'B' });
    const update = await call<{ warnings?: { message: string }[] }>(owner, 'update_event', {
      calendarId,
      eventId: b.eventId,
      start: { dateTime: '2027-12-03T09:30:00Z' },
      end: { dateTime: '2027-12-03T10:30:00Z' },
    });
    expect(update.isError, update.text).toBe(false);
    const note = update.out.warnings?.find((w) => w.message.includes(b.bookingId))?.message ?? '';
    expect(note).toContain(`Booking ${b.bookingId} was released`);
    expect(note).toContain(a.bookingId);
    expect(await status(b.bookingId)).toBe('cancelled');
    expect(await status(a.bookingId)).toBe('confirmed');
    // The event itself stayed where it was put, so its new time is still busy.
    expect(
      await freeIn(owner, calendarId, { start: '2027-12-03T10:00:00Z', end: '2027-12-03T10:30:00Z' }),
    ).toEqual(ALL_BUSY);
    expect(await freeIn(owner, calendarId, second)).toEqual(ALL_FREE);
  });

  it('batch_update_events moves one booking and releases another made free (transparent)', async () => {
    const one = { start: '2027-12-04T09:00:00Z', end: '2027-12-04T09:30:00Z' };
    const two = { start: '2027-12-04T10:00:00Z', end: '2027-12-04T10:30:00Z' };
    const a = await book(owner, { calendarId, ...one, summary: 'One' });
    const b = await book(owner, { calendarId, ...two, summary: 'Two' });
    const batch = await call<{ failed: number }>(owner, 'batch_update_events', {
      calendarId,
      updates: [
        {
          eventId: a.eventId,
          start: { dateTime: '2027-12-04T13:00:00Z' },
          end: { dateTime: '2027-12-04T13:30:00Z' },
        },
        { eventId: b.eventId, transparency: 'transparent' },
      ],
    });
    expect(batch.out.failed, batch.text).toBe(0);
    expect(await bookingOf(owner, calendarId, a.bookingId)).toMatchObject({
      status: 'confirmed',
      start: '2027-12-04T14:00:00+01:00',
    });
    expect(await status(b.bookingId)).toBe('cancelled');
    expect(await freeIn(owner, calendarId, one)).toEqual(ALL_FREE);
    expect(await freeIn(owner, calendarId, two)).toEqual(ALL_FREE);
  });

  it('update_event cancelling the event (status cancelled) releases the booking', async () => {
    const slot = { start: '2027-12-05T09:00:00Z', end: '2027-12-05T09:30:00Z' };
    const booked = await book(owner, { calendarId, ...slot, summary: 'Called off' });
    const update = await call(owner, 'update_event', {
      calendarId,
      eventId: booked.eventId,
      status: 'cancelled',
    });
    expect(update.isError, update.text).toBe(false);
    expect(await status(booked.bookingId)).toBe('cancelled');
    await book(owner, { calendarId, ...slot, summary: 'Rebooked' });
  });

  it('an event deleted in the store directly is noticed at the next read; book_slot agrees', () =>
    deletedElsewhereIsNoticed(
      { gw, client: owner, calendarId },
      { start: '2027-12-06T09:00:00Z', end: '2027-12-06T09:30:00Z' },
      async (eventId) => {
        await store.softDelete(calendarId, eventId, { etag: '"elsewhere-1"' });
      },
    ));

  it('book_slot itself reconciles a booking whose event was deleted directly', async () => {
    const slot = { start: '2027-12-07T09:00:00Z', end: '2027-12-07T09:30:00Z' };
    const booked = await book(owner, { calendarId, ...slot, summary: 'Gone' });
    await store.softDelete(calendarId, booked.eventId, { etag: '"elsewhere-2"' });
    // No availability read in between: book_slot is the first to meet the stale booking.
    await book(owner, { calendarId, ...slot, summary: 'Straight in' });
    expect(await status(booked.bookingId)).toBe('cancelled');
  });

  it('an event moved in the store directly moves the booking at the next read', async () => {
    const slot = { start: '2027-12-08T09:00:00Z', end: '2027-12-08T09:30:00Z' };
    const booked = await book(owner, { calendarId, ...slot, summary: 'Moved elsewhere' });
    const row = await store.get(calendarId, booked.eventId);
    await store.update(calendarId, booked.eventId, row?.etag ?? '', {
      startAt: new Date('2027-12-08T16:00:00Z'),
      endAt: new Date('2027-12-08T16:30:00Z'),
      etag: '"elsewhere-3"',
    });
    expect(await freeIn(owner, calendarId, slot)).toEqual(ALL_FREE);
    expect(await bookingOf(owner, calendarId, booked.bookingId)).toMatchObject({
      status: 'confirmed',
      start: '2027-12-08T17:00:00+01:00',
      end: '2027-12-08T17:30:00+01:00',
    });
    await book(owner, { calendarId, ...slot, summary: 'Old slot' });
    const refused = await call(owner, 'book_slot', {
      calendarId,
      start: '2027-12-08T16:00:00Z',
      end: '2027-12-08T16:30:00Z',
      summary: 'New slot',
    });
    expect(refused.isError).toBe(true);
  });

  it('cancel_booking by id deletes the event and frees the slot; again, it says already cancelled', async () => {
    const slot = { start: '2027-12-09T09:00:00Z', end: '2027-12-09T09:30:00Z' };
    const booked = await book(owner, { calendarId, ...slot, summary: 'To cancel' });
    const cancelled = await call<Record<string, unknown>>(owner, 'cancel_booking', {
      bookingId: booked.bookingId,
    });
    expect(cancelled.isError, cancelled.text).toBe(false);
    expect(cancelled.out).toMatchObject({
      bookingId: booked.bookingId,
      calendarId,
      eventId: booked.eventId,
      status: 'cancelled',
      start: '2027-12-09T10:00:00+01:00',
      end: '2027-12-09T10:30:00+01:00',
      summary: 'To cancel',
      alreadyCancelled: false,
      eventDeleted: true,
    });
    const event = await call<{ event?: { status?: string } }>(owner, 'get_event', {
      calendarId,
      eventId: booked.eventId,
    });
    // Deleted events read back as cancelled (or not found), as in Google.
    expect(event.isError || event.out.event?.status === 'cancelled', event.text).toBe(true);
    expect(await freeIn(owner, calendarId, slot)).toEqual(ALL_FREE);
    const again = await call<Record<string, unknown>>(owner, 'cancel_booking', {
      bookingId: booked.bookingId,
    });
    expect(again.isError, again.text).toBe(false);
    expect(again.out).toMatchObject({ alreadyCancelled: true, eventDeleted: false });
    expect(again.text).toMatch(/already cancelled; nothing was changed/);
    await book(owner, { calendarId, ...slot, summary: 'After cancel' });
  });

  it('cancel_booking by idempotencyKey; the key then refuses to book again, clearly', async () => {
    const slot = { start: '2027-12-10T09:00:00Z', end: '2027-12-10T09:30:00Z' };
    const args = { calendarId, ...slot, summary: 'Keyed', idempotencyKey: 'lifecycle-keyed' };
    const booked = await book(owner, args);
    const cancelled = await call<Record<string, unknown>>(owner, 'cancel_booking', {
      idempotencyKey: 'lifecycle-keyed',
      timeZone: 'America/New_York',
    });
    expect(cancelled.isError, cancelled.text).toBe(false);
    expect(cancelled.out).toMatchObject({
      bookingId: booked.bookingId,
      start: '2027-12-10T04:00:00-05:00',
      idempotencyKey: 'lifecycle-keyed',
      eventDeleted: true,
    });
    const retry = await call(owner, 'book_slot', args);
    expect(retry.isError).toBe(true);
    expect(retry.text).toContain(`belongs to booking ${booked.bookingId}, which was cancelled`);
    const both = await call(owner, 'cancel_booking', { bookingId: booked.bookingId, idempotencyKey: 'x' });
    expect(both.isError).toBe(true);
    expect(both.text).toContain('exactly one of bookingId or idempotencyKey');
  });

  it('list_bookings filters by window, status and calendar, in the request or calendar zone', async () => {
    const day = '2027-12-11';
    const a = await book(owner, {
      calendarId,
      start: `${day}T08:00:00Z`,
      end: `${day}T08:30:00Z`,
      summary: 'Early',
      idempotencyKey: 'lifecycle-early',
    });
    const b = await book(owner, {
      calendarId,
      start: `${day}T12:00:00Z`,
      end: `${day}T12:30:00Z`,
      summary: 'Noon',
    });
    const c = await book(owner, {
      calendarId,
      start: `${day}T15:00:00Z`,
      end: `${day}T15:30:00Z`,
      summary: 'Late',
    });
    await call(owner, 'cancel_booking', { bookingId: c.bookingId });
    const window = { timeMin: `${day}T00:00:00Z`, timeMax: `${day}T23:59:59Z` };
    const all = await listBookings(owner, window);
    expect(all.map((x) => [x.bookingId, x.status])).toEqual([
      [a.bookingId, 'confirmed'],
      [b.bookingId, 'confirmed'],
      [c.bookingId, 'cancelled'],
    ]);
    expect(all[0]).toEqual({
      bookingId: a.bookingId,
      calendarId,
      eventId: a.eventId,
      start: `${day}T09:00:00+01:00`,
      end: `${day}T09:30:00+01:00`,
      status: 'confirmed',
      summary: 'Early',
      idempotencyKey: 'lifecycle-early',
    });
    expect((await listBookings(owner, { ...window, status: 'cancelled' })).map((x) => x.bookingId)).toEqual([
      c.bookingId,
    ]);
    expect(
      (
        await listBookings(owner, {
          calendarIds: [calendarId],
          timeMin: `${day}T10:00:00Z`,
          timeMax: `${day}T13:00:00Z`,
        })
      ).map((x) => x.bookingId),
    ).toEqual([b.bookingId]);
    const utc = await listBookings(owner, { ...window, status: 'confirmed', timeZone: 'UTC' });
    expect(utc[0]?.start).toBe(`${day}T08:00:00Z`);
    const bad = await call(owner, 'list_bookings', { ...window, timeZone: 'Mars/Olympus' });
    expect(bad.isError).toBe(true);
    // Another key of the tenant that may read the room sees the bookings, not the idempotency keys.
    const seen = await listBookings(reader, window);
    expect(seen.map((x) => x.bookingId)).toEqual([a.bookingId, b.bookingId, c.bookingId]);
    expect(seen[0]?.idempotencyKey).toBeUndefined();
  });

  it('a key without a grant on the calendar sees nothing; its booking ids answer like unknown ones', async () => {
    const slot = { start: '2027-12-12T09:00:00Z', end: '2027-12-12T09:30:00Z' };
    const booked = await book(owner, {
      calendarId,
      ...slot,
      summary: 'Private',
      idempotencyKey: 'lifecycle-private',
    });
    const window = { timeMin: '2027-12-12T00:00:00Z', timeMax: '2027-12-13T00:00:00Z' };
    for (const client of [stranger, otherTenant]) {
      expect(await listBookings(client, window)).toEqual([]);
      const named = await call(client, 'list_bookings', { ...window, calendarIds: [calendarId] });
      const unknownCalendar = await call(client, 'list_bookings', {
        ...window,
        calendarIds: ['cal_nosuchcalendar'],
      });
      expect(named.isError).toBe(true);
      expect(named.text.replace(calendarId, 'X')).toBe(
        unknownCalendar.text.replace('cal_nosuchcalendar', 'X'),
      );
      const real = await call(client, 'cancel_booking', { bookingId: booked.bookingId });
      const unknown = await call(client, 'cancel_booking', { bookingId: 'bkg_nosuchbooking' });
      expect(real.isError).toBe(true);
      expect(real.text.replace(booked.bookingId, 'X')).toBe(unknown.text.replace('bkg_nosuchbooking', 'X'));
      expect(real.text).toMatch(/^Booking 'bkg_\w+' was not found/);
      // Idempotency keys are the key's own: the owner's key means nothing to anyone else.
      const keyed = await call(client, 'cancel_booking', { idempotencyKey: 'lifecycle-private' });
      expect(keyed.isError).toBe(true);
      expect(keyed.text).toMatch(/^No booking made by this key has idempotencyKey/);
    }
    // May read, may not write: told so (the calendar is no secret to it), nothing changes.
    const denied = await call(reader, 'cancel_booking', { bookingId: booked.bookingId });
    expect(denied.isError).toBe(true);
    expect(denied.text).toMatch(/may read but not write/);
    expect(await status(booked.bookingId)).toBe('confirmed');
  });
});
