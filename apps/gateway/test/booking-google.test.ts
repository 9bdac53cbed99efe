import { connectRedis, RedisSlotLock } from '@calgate/locks';
import { redisUrl } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-booking.apps.googleusercontent.com', clientSecret: 'booking-secret' };
const ANN = 'ann@example.com';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function book(client: Client, args: Record<string, unknown>) {
  const result = await client.callTool({ name: 'book_slot', arguments: args });
  return {
    isError: result.isError === true,
    text: textOf(result),
    out: result.structuredContent as { bookingId: string; eventId: string },
  };
}

describe('book_slot against Google (emulator): lost answers, upstream races, lapsed locks', () => {
  let emulator: TestEmulator;
  let a: TestGateway;
  let b: TestGateway;
  let clientA: Client;
  let clientB: Client;
  let calendarId: string;

  /** Live events stored upstream in [from, to). */
  const upstream = (from: string, to: string) =>
    emulator.admin
      .events(ANN)
      .filter((e) => e.status !== 'cancelled')
      .filter((e) => {
        const start = Date.parse(String((e.start as { dateTime?: string }).dateTime));
        return start >= Date.parse(from) && start < Date.parse(to);
      });

  async function ledgerRows(from: string, to: string): Promise<number> {
    const { rows } = await a.db.pool.query(
      `SELECT count(*)::int AS n FROM bookings WHERE calendar_id = $1 AND status = 'confirmed'
       AND during && tstzrange($2, $3, '[)')`,
      [calendarId, from, to],
    );
    return rows[0].n as number;
  }

  /** Someone creating an event in Google directly, not through Calgate. */
  async function insertDirectly(summary: string, start: string, end: string): Promise<void> {
    const response = await emulator.editDirectly(ANN, 'POST', '', {
      summary,
      start: { dateTime: start },
      end: { dateTime: end },
    });
    expect(response.status).toBe(200);
  }

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] });
    // One encryption key (in emulator.env): both instances must read the tokens the other stored.
    const env = { ...emulator.env, ...HIGH_RATE_LIMITS };
    // Instance A lets a stalled booking's lease lapse after one second; B keeps its leases.
    a = await startTestGateway({ ...env, LOCK_TTL_SECS: '1' });
    b = await startTestGateway({ ...env, LOCK_TTL_SECS: '30' }, { db: a.db });
    const tenant = await a.seedTenant('Acme');
    calendarId = await connectGoogleAccount(a, emulator, tenant, ANN, 'write');
    clientA = await connectClient(a.mcpUrl, tenant.secret);
    clientB = await connectClient(b.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await clientA?.close();
    await clientB?.close();
    await b?.stop();
    await a?.stop();
    await emulator?.close();
  });

  it('an insert whose answer is lost is read back: one event, one booking', async () => {
    const start = '2027-02-01T09:00:00Z';
    const end = '2027-02-01T10:00:00Z';
    emulator.admin.script({ match: { op: 'events.insert' }, times: 1, action: { kind: 'dropResponse' } });
    const booked = await book(clientA, { calendarId, start, end, summary: 'Lost answer' });
    expect(booked.isError, booked.text).toBe(false);
    const events = upstream(start, end);
    expect(events.map((e) => e.id)).toEqual([booked.out.eventId]);
    expect(emulator.admin.requests().filter((r) => r.fault === 'dropResponse')).toHaveLength(1);
    expect(await ledgerRows(start, end)).toBe(1);
  });

  it('an event created upstream between the check and the write rolls the booking back', async () => {
    const start = '2027-02-02T09:00:00Z';
    const end = '2027-02-02T10:00:00Z';
    emulator.admin.script({
      match: { op: 'events.insert' },
      times: 1,
      action: { kind: 'latency', ms: 1_500 },
    });
    const pending = book(clientA, { calendarId, start, end, summary: 'Calgate booking' });
    await sleep(500);
    await insertDirectly('Booked by hand', '2027-02-02T09:30:00Z', '2027-02-02T10:30:00Z');
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /^Not booked: the slot overlaps the event 'Booked by hand' from 2027-02-02T10:30:00\+01:00 to 2027-02-02T11:30:00\+01:00 .* appeared while this booking was being written; the booking was rolled back\./,
    );
    expect(upstream(start, '2027-02-03T00:00:00Z').map((e) => e.summary)).toEqual(['Booked by hand']);
    expect(await ledgerRows(start, end)).toBe(0);
  });

  it('a retry with the same idempotencyKey after a rolled-back attempt books under a fresh id', async () => {
    const start = '2027-02-04T09:00:00Z';
    const end = '2027-02-04T10:00:00Z';
    const args = { calendarId, start, end, summary: 'Retried', idempotencyKey: 'retry-after-rollback' };
    emulator.admin.script({
      match: { op: 'events.insert' },
      times: 1,
      action: { kind: 'latency', ms: 1_000 },
    });
    const pending = book(clientA, args);
    await sleep(400);
    await insertDirectly('In the way', start, end);
    const first = await pending;
    expect(first.text).toMatch(/rolled back/);
    const rolledBack = emulator.admin.events(ANN).find((e) => e.summary === 'Retried');
    expect(rolledBack?.status).toBe('cancelled');
    const blocker = emulator.admin.events(ANN).find((e) => e.summary === 'In the way');
    const removed = await emulator.editDirectly(ANN, 'DELETE', `/${String(blocker?.id)}`);
    expect(removed.status).toBe(204);
    const retried = await book(clientB, args);
    expect(retried.isError, retried.text).toBe(false);
    expect(retried.out.eventId).not.toBe(rolledBack?.id);
    expect(upstream(start, end).map((e) => e.id)).toEqual([retried.out.eventId]);
    const replayed = await book(clientA, args);
    expect(replayed.out).toMatchObject({ bookingId: retried.out.bookingId, replayed: true });
  });

  it('a lease that lapses mid-booking: still one booking, and the late release frees nothing', async () => {
    const start = '2027-02-03T09:00:00Z';
    const end = '2027-02-03T10:00:00Z';
    const redis = connectRedis(redisUrl());
    const locks = new RedisSlotLock(redis);
    try {
      // A's insert stalls 2.5 s, past its 1 s lease.
      emulator.admin.script({
        match: { op: 'events.insert' },
        times: 1,
        action: { kind: 'latency', ms: 2_500 },
      });
      const first = book(clientA, { calendarId, start, end, summary: 'Holder A' });
      await sleep(700);
      // B's insert stalls longer, so B holds its lease while A finishes and releases late.
      emulator.admin.script({
        match: { op: 'events.insert' },
        times: 1,
        action: { kind: 'latency', ms: 3_000 },
      });
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
      expect(upstream(start, end)).toHaveLength(1);
      expect(await ledgerRows(start, end)).toBe(1);
    } finally {
      redis.disconnect();
    }
  }, 20_000);
});
