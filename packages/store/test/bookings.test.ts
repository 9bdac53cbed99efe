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
    expect(await bookings.overlapping(calendarId, at(15), at(17))).toHaveLength(1);
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
