/**
 * book_slot against a provider's emulator when things go wrong between Calgate and the upstream,
 * the same cases for every provider (booking-google.test.ts, booking-microsoft.test.ts): an
 * insert whose answer is lost is read back, an event created upstream between the check and the
 * write rolls the booking back (and a retry with the same idempotencyKey books afresh), and a lease
 * that lapses mid-booking still leaves one booking. Two gateways share one database: A's leases
 * lapse after a second, B's do not. The calendar's zone is Europe/Berlin.
 */
import { connectRedis, RedisSlotLock } from '@calgate/locks';
import { redisUrl } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { expect, it } from 'vitest';
import { type TestGateway, textOf } from './harness.ts';

/** What the cases need from the upstream's emulator, in the provider's own terms. */
export interface BookingUpstream {
  /** The next event insert (Calgate's) is answered with `action`. */
  scriptInsert(action: { kind: 'dropResponse' } | { kind: 'latency'; ms: number }): void;
  /** How many inserts had their answer dropped so far. */
  droppedInserts(): number;
  /** Live (not cancelled, not deleted) events upstream starting in [from, to). */
  live(from: string, to: string): { id: string; summary: string }[];
  /** The id the rolled-back event with this summary had upstream (deleted or cancelled now). */
  rolledBackId(summary: string): string | undefined;
  /** Someone creating an event in the calendar directly, not through Calgate. */
  insertDirectly(summary: string, start: string, end: string): Promise<void>;
  /** Someone deleting the event with this summary directly. */
  deleteDirectly(summary: string): Promise<void>;
}

export interface BookingRaceSetup {
  /** Gateway A (leases of one second), whose database both share. */
  a: TestGateway;
  clientA: Client;
  /** A client of gateway B (leases of 30 seconds). */
  clientB: Client;
  calendarId: string;
  upstream: BookingUpstream;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function book(client: Client, args: Record<string, unknown>) {
  const result = await client.callTool({ name: 'book_slot', arguments: args });
  return {
    isError: result.isError === true,
    text: textOf(result),
    out: result.structuredContent as { bookingId: string; eventId: string },
  };
}

/** Declares the cases in the calling describe; `setup` is read once its beforeAll has run. */
export function bookingRaceCases(setup: () => BookingRaceSetup): void {
  async function ledgerRows(from: string, to: string): Promise<number> {
    const { a, calendarId } = setup();
    const { rows } = await a.db.pool.query(
      `SELECT count(*)::int AS n FROM bookings WHERE calendar_id = $1 AND status = 'confirmed'
       AND during && tstzrange($2, $3, '[)')`,
      [calendarId, from, to],
    );
    return rows[0].n as number;
  }

  it('an insert whose answer is lost is read back: one event, one booking', async () => {
    const { clientA, calendarId, upstream } = setup();
    const start = '2027-02-01T09:00:00Z';
    const end = '2027-02-01T10:00:00Z';
    upstream.scriptInsert({ kind: 'dropResponse' });
    const booked = await book(clientA, { calendarId, start, end, summary: 'Lost answer' });
    expect(booked.isError, booked.text).toBe(false);
    expect(upstream.live(start, end).map((e) => e.id)).toEqual([booked.out.eventId]);
    expect(upstream.droppedInserts()).toBe(1);
    expect(await ledgerRows(start, end)).toBe(1);
  });

  it('an event created upstream between the check and the write rolls the booking back', async () => {
    const { clientA, calendarId, upstream } = setup();
    const start = '2027-02-02T09:00:00Z';
    const end = '2027-02-02T10:00:00Z';
    upstream.scriptInsert({ kind: 'latency', ms: 1_500 });
    const pending = book(clientA, { calendarId, start, end, summary: 'Calgate booking' });
    await sleep(500);
    await upstream.insertDirectly('Booked by hand', '2027-02-02T09:30:00Z', '2027-02-02T10:30:00Z');
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /^Not booked: the slot overlaps the event 'Booked by hand' from 2027-02-02T10:30:00\+01:00 to 2027-02-02T11:30:00\+01:00 .* appeared while this booking was being written; the booking was rolled back\./,
    );
    expect(upstream.live(start, '2027-02-03T00:00:00Z').map((e) => e.summary)).toEqual(['Booked by hand']);
    expect(await ledgerRows(start, end)).toBe(0);
  });

  it('a retry with the same idempotencyKey after a rolled-back attempt books under a fresh id', async () => {
    const { clientA, clientB, calendarId, upstream } = setup();
    const start = '2027-02-04T09:00:00Z';
    const end = '2027-02-04T10:00:00Z';
    const args = { calendarId, start, end, summary: 'Retried', idempotencyKey: 'retry-after-rollback' };
    upstream.scriptInsert({ kind: 'latency', ms: 1_000 });
    const pending = book(clientA, args);
    await sleep(400);
    await upstream.insertDirectly('In the way', start, end);
    const first = await pending;
    expect(first.text).toMatch(/rolled back/);
    const rolledBack = upstream.rolledBackId('Retried');
    expect(rolledBack).toEqual(expect.any(String));
    expect(upstream.live(start, end).map((e) => e.summary)).toEqual(['In the way']);
    await upstream.deleteDirectly('In the way');
    const retried = await book(clientB, args);
    expect(retried.isError, retried.text).toBe(false);
    expect(retried.out.eventId).not.toBe(rolledBack);
    expect(upstream.live(start, end).map((e) => e.id)).toEqual([retried.out.eventId]);
    const replayed = await book(clientA, args);
    expect(replayed.out).toMatchObject({ bookingId: retried.out.bookingId, replayed: true });
  });

  it('a lease that lapses mid-booking: still one booking, and the late release frees nothing', async () => {
    const { clientA, clientB, calendarId, upstream } = setup();
    const start = '2027-02-03T09:00:00Z';
    const end = '2027-02-03T10:00:00Z';
    const redis = connectRedis(redisUrl());
    const locks = new RedisSlotLock(redis);
    try {
      // A's insert stalls 2.5 s, past its 1 s lease.
      upstream.scriptInsert({ kind: 'latency', ms: 2_500 });
      const first = book(clientA, { calendarId, start, end, summary: 'Holder A' });
      await sleep(700);
      // B's insert stalls longer, so B holds its lease while A finishes and releases late.
      upstream.scriptInsert({ kind: 'latency', ms: 3_000 });
      await sleep(600);
      const second = book(clientB, { calendarId, start, end, summary: 'Holder B' });
      const resultA = await first;
      // A has released its lapsed lease by now; B's lease on the range must still be there.
      const held = await locks.held(calendarId, {
        start: Date.parse(start),
        end: Date.parse(end),
      });
      expect(held).toHaveLength(1);
      expect(await locks.acquire(calendarId, { start: Date.parse(start), end: Date.parse(end) }, 1_000)).toBe(
        null,
      );
      const resultB = await second;
      const results = [resultA, resultB];
      expect(results.filter((r) => !r.isError)).toHaveLength(1);
      expect(results.find((r) => r.isError)?.text).toMatch(/^Not booked: the slot overlaps/);
      expect(upstream.live(start, end)).toHaveLength(1);
      expect(await ledgerRows(start, end)).toBe(1);
    } finally {
      redis.disconnect();
    }
  }, 20_000);
}
