/**
 * The availability tools keep the confirmed bookings they read per calendar and window while no
 * change of those calendars' bookings was announced (booking-cache.ts). A booking written by
 * another process (here: straight into Postgres, as another gateway would) is announced by the
 * database itself when it commits, so the next reads see it.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './booking-lifecycle.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

describe('availability reads of the booking ledger across processes', () => {
  let gateway: TestGateway;
  let client: Client;
  let tenantId: string;
  let calendarId: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '10000' });
    const tenant = await gateway.seedTenant('Acme');
    tenantId = tenant.tenantId;
    calendarId = await gateway.localCalendar(tenant.tenantId, 'Room');
    await gateway.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    client = await connectClient(gateway.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.stop();
  });

  const window = { timeMin: '2027-03-01T08:00:00Z', timeMax: '2027-03-01T18:00:00Z' };

  async function status(bookingId: string): Promise<string> {
    const { rows } = await gateway.db.pool.query<{ status: string }>(
      'SELECT status FROM bookings WHERE id = $1',
      [bookingId],
    );
    return rows[0]?.status ?? 'none';
  }

  it.each(['find_free_time', 'find_free_slots', 'get_availability'])(
    '%s meets a booking another process confirmed after the window was read',
    async (tool) => {
      const args =
        tool === 'find_free_time'
          ? { calendarIds: [calendarId], ...window }
          : tool === 'find_free_slots'
            ? { calendarIds: [calendarId], ...window, minDurationMinutes: 30 }
            : { calendarIds: [calendarId], ...window };
      // Read (and kept) while the ledger has nothing in the window.
      for (let i = 0; i < 3; i++) {
        const before = await call(client, tool, args);
        expect(before.isError, before.text).toBe(false);
      }
      // Another gateway's booking whose event is gone from the calendar: the first read that
      // meets it releases it (reconciled with the calendar), which shows that the read saw it.
      const bookingId = `bkg_${tool}`;
      await gateway.db.pool.query(
        `INSERT INTO bookings (id, tenant_id, key_id, calendar_id, event_id, during)
         VALUES ($1, $2, NULL, $3, 'evt_gone', tstzrange('2027-03-01T10:00:00Z', '2027-03-01T11:00:00Z', '[)'))`,
        [bookingId, tenantId, calendarId],
      );
      const until = Date.now() + 10_000;
      while ((await status(bookingId)) === 'confirmed' && Date.now() < until) {
        const answer = await call(client, tool, args);
        expect(answer.isError, answer.text).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await status(bookingId)).toBe('cancelled');
    },
  );
});
