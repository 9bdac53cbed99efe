import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BookingRepository, TenancyRepository } from '../src/index.ts';

describe('booking ledger (exclusion constraint)', () => {
  let db: TestDatabase;
  let bookings: BookingRepository;
  let tenantId: string;
  let calendarId: string;
  let otherCalendar: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    bookings = new BookingRepository(db);
    const tenancy = new TenancyRepository(db.prisma);
    tenantId = (await tenancy.createTenant('Ledger')).id;
    calendarId = (await tenancy.createLocalCalendar(tenantId, { summary: 'A', timeZone: 'UTC' })).id;
    otherCalendar = (await tenancy.createLocalCalendar(tenantId, { summary: 'B', timeZone: 'UTC' })).id;
  });
  afterAll(async () => {
    await db.close();
  });

  const at = (h: number) => new Date(Date.UTC(2026, 11, 1) + h * 3_600_000);
  const book = (start: number, end: number, calendar = calendarId, idempotencyKey?: string) =>
    bookings.confirm({
      tenantId,
      keyId: null,
      calendarId: calendar,
      eventId: `ev${start}${end}`,
      start: at(start),
      end: at(end),
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });

  it('refuses overlapping confirmed bookings on one calendar, allows touching and other calendars', async () => {
    const first = await book(9, 10);
    expect(first.id).toMatch(/^bkg_/);
    expect(first.start.toISOString()).toBe('2026-12-01T09:00:00.000Z');
    await expect(book(9, 10)).rejects.toMatchObject({ code: 'conflict', context: { bookingId: first.id } });
    await expect(book(8, 9.5)).rejects.toMatchObject({ code: 'conflict' });
    expect((await book(10, 11)).id).toMatch(/^bkg_/);
    expect((await book(9, 10, otherCalendar)).id).toMatch(/^bkg_/);
  });

  it('admits exactly one of many concurrent overlapping inserts', async () => {
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => book(12, 13 + (i % 3))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('frees the range when cancelled, and keeps idempotency keys unique', async () => {
    const booking = await book(15, 16, calendarId, 'idem-1');
    expect(await bookings.byIdempotencyKey(tenantId, null, 'idem-1')).toMatchObject({ id: booking.id });
    await expect(book(17, 18, calendarId, 'idem-1')).rejects.toMatchObject({ code: 'already_exists' });
    expect(await bookings.cancel(tenantId, booking.id)).toBe(true);
    expect(await bookings.cancel(tenantId, booking.id)).toBe(false);
    expect((await book(15, 16)).id).toMatch(/^bkg_/);
    expect(await bookings.overlapping(tenantId, calendarId, at(15), at(17))).toHaveLength(1);
  });

  it('finds bookings by id, event and calendars, scoped to the tenant', async () => {
    const booking = await book(30, 31);
    expect(await bookings.byId(tenantId, booking.id)).toMatchObject({ id: booking.id, status: 'confirmed' });
    expect(await bookings.byId('tnt_other', booking.id)).toBeNull();
    expect((await bookings.byEvent(tenantId, calendarId, booking.eventId)).map((b) => b.id)).toEqual([
      booking.id,
    ]);
    expect(await bookings.byEvent('tnt_other', calendarId, booking.eventId)).toEqual([]);
    const other = await book(30, 31, otherCalendar);
    const both = await bookings.confirmedIn(tenantId, [calendarId, otherCalendar], at(30), at(31));
    expect(both.map((b) => b.id).sort()).toEqual([booking.id, other.id].sort());
    expect(await bookings.confirmedIn('tnt_other', [calendarId], at(30), at(31))).toEqual([]);
    expect(await bookings.confirmedIn(tenantId, [], at(30), at(31))).toEqual([]);
  });

  it('moves a confirmed booking, refusing a range another confirmed booking holds', async () => {
    const moving = await book(40, 41);
    const holder = await book(44, 45);
    expect(await bookings.move(tenantId, moving.id, at(42), at(43))).toBe(true);
    expect(await bookings.byId(tenantId, moving.id)).toMatchObject({ start: at(42), end: at(43) });
    expect(await bookings.overlapping(tenantId, calendarId, at(40), at(41))).toEqual([]);
    await expect(bookings.move(tenantId, moving.id, at(44.5), at(45.5))).rejects.toMatchObject({
      code: 'conflict',
      context: { bookingId: holder.id },
    });
    expect(await bookings.move('tnt_other', moving.id, at(46), at(47))).toBe(false);
    expect(await bookings.cancel(tenantId, moving.id)).toBe(true);
    expect(await bookings.move(tenantId, moving.id, at(46), at(47))).toBe(false);
  });

  it('lists by calendars, range and status, in start order, up to a limit', async () => {
    const day = (h: number) => at(24 * 10 + h);
    const a = await bookings.confirm({
      tenantId,
      keyId: null,
      calendarId,
      eventId: 'la',
      start: day(9),
      end: day(10),
    });
    const b = await bookings.confirm({
      tenantId,
      keyId: null,
      calendarId,
      eventId: 'lb',
      start: day(11),
      end: day(12),
    });
    const c = await bookings.confirm({
      tenantId,
      keyId: null,
      calendarId: otherCalendar,
      eventId: 'lc',
      start: day(10),
      end: day(11),
    });
    await bookings.cancel(tenantId, b.id);
    const window = { timeMin: day(0), timeMax: day(24), limit: 10 };
    const ids = async (filter: Partial<Parameters<BookingRepository['list']>[1]>) =>
      (await bookings.list(tenantId, { calendarIds: [calendarId, otherCalendar], ...window, ...filter })).map(
        (row) => row.id,
      );
    expect(await ids({})).toEqual([a.id, c.id, b.id]);
    expect(await ids({ status: 'confirmed' })).toEqual([a.id, c.id]);
    expect(await ids({ status: 'cancelled' })).toEqual([b.id]);
    expect(await ids({ calendarIds: [otherCalendar] })).toEqual([c.id]);
    expect(await ids({ timeMin: day(10.5) })).toEqual([c.id, b.id]);
    expect(await ids({ limit: 1 })).toEqual([a.id]);
    expect(await bookings.list('tnt_other', { calendarIds: [calendarId], limit: 10 })).toEqual([]);
    expect(
      (await bookings.list(tenantId, { calendarIds: [calendarId], limit: 1000 })).length,
    ).toBeGreaterThan(3);
  });

  it('refuses an empty range', async () => {
    await expect(book(18, 18)).rejects.toThrow();
  });

  it('is readable through Prisma (the range itself is read through SQL)', async () => {
    const rows = await db.prisma.booking.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' } });
    expect(rows.length).toBeGreaterThan(3);
    expect(rows[0]).toMatchObject({ tenantId, status: 'confirmed' });
  });
});
