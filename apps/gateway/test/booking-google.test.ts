import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { type BookingUpstream, bookingRaceCases } from './booking-races.ts';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-booking.apps.googleusercontent.com', clientSecret: 'booking-secret' };
const ANN = 'ann@example.com';

describe('book_slot against Google (emulator): lost answers, upstream races, lapsed locks', () => {
  let emulator: TestEmulator;
  let a: TestGateway;
  let b: TestGateway;
  let clientA: Client;
  let clientB: Client;
  let calendarId: string;

  const upstream: BookingUpstream = {
    scriptInsert: (action) => emulator.admin.script({ match: { op: 'events.insert' }, times: 1, action }),
    droppedInserts: () => emulator.admin.requests().filter((r) => r.fault === 'dropResponse').length,
    live: (from, to) =>
      emulator.admin
        .events(ANN)
        .filter((e) => e.status !== 'cancelled')
        .filter((e) => {
          const start = Date.parse(String((e.start as { dateTime?: string }).dateTime));
          return start >= Date.parse(from) && start < Date.parse(to);
        })
        .map((e) => ({ id: String(e.id), summary: String(e.summary) })),
    // Google keeps a deleted event, cancelled.
    rolledBackId: (summary) =>
      emulator.admin
        .events(ANN)
        .find((e) => e.summary === summary && e.status === 'cancelled')
        ?.id?.toString(),
    async insertDirectly(summary, start, end) {
      const response = await emulator.editDirectly(ANN, 'POST', '', {
        summary,
        start: { dateTime: start },
        end: { dateTime: end },
      });
      expect(response.status).toBe(200);
    },
    async deleteDirectly(summary) {
      const event = emulator.admin.events(ANN).find((e) => e.summary === summary && e.status !== 'cancelled');
      const removed = await emulator.editDirectly(ANN, 'DELETE', `/${String(event?.id)}`);
      expect(removed.status).toBe(204);
    },
  };

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

  bookingRaceCases(() => ({ a, clientA, clientB, calendarId, upstream }));
});
