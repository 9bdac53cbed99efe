/**
 * book_slot on an Outlook calendar (Graph emulator) when things go wrong between Calgate and
 * Graph: the cases of booking-races.ts, as for Google. Graph deletes an event outright (no
 * cancelled copy stays), so a rolled-back booking's event is gone from the calendar.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { type BookingUpstream, bookingRaceCases } from './booking-races.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import {
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';

const ANN = 'ann@contoso.com';

describe('book_slot against Outlook (Graph emulator): lost answers, upstream races, lapsed locks', () => {
  let ms: TestMicrosoftEmulator;
  let a: TestGateway;
  let b: TestGateway;
  let clientA: Client;
  let clientB: Client;
  let calendarId: string;
  let externalId: string;

  /** Graph's events of the calendar, as the emulator renders them (times in UTC). */
  const events = () =>
    ms.admin.events(externalId).map((e) => ({
      id: String(e.id),
      summary: String(e.subject),
      start: Date.parse(`${(e.start as { dateTime: string }).dateTime}Z`),
    }));

  const upstream: BookingUpstream = {
    scriptInsert: (action) =>
      ms.admin.script({ match: { op: 'events.create', calendarId: externalId }, times: 1, action }),
    droppedInserts: () => ms.admin.requests().filter((r) => r.fault === 'dropResponse').length,
    live: (from, to) =>
      events()
        .filter((e) => e.start >= Date.parse(from) && e.start < Date.parse(to))
        .map(({ id, summary }) => ({ id, summary })),
    // Graph deletes outright: the event the rollback deleted is named by its DELETE request.
    rolledBackId: (summary) => {
      const created = ms.admin
        .requests({ op: 'events.create', calendarId: externalId })
        .filter((r) => r.status === 201);
      const deleted = ms.admin
        .requests({ op: 'events.delete' })
        .filter((r) => r.status === 204)
        .map((r) => decodeURIComponent(r.path.split('/').at(-1) ?? ''));
      const live = new Set(events().map((e) => e.id));
      expect(created.length).toBeGreaterThan(0);
      expect(events().some((e) => e.summary === summary)).toBe(false);
      return deleted.filter((id) => !live.has(id)).at(-1);
    },
    async insertDirectly(summary, start, end) {
      const response = await ms.editDirectly(ANN, 'POST', `/me/calendars/${externalId}/events`, {
        subject: summary,
        start: { dateTime: start.replace('Z', ''), timeZone: 'UTC' },
        end: { dateTime: end.replace('Z', ''), timeZone: 'UTC' },
      });
      expect(response.status).toBe(201);
    },
    async deleteDirectly(summary) {
      const event = events().find((e) => e.summary === summary);
      const removed = await ms.editDirectly(
        ANN,
        'DELETE',
        `/me/events/${encodeURIComponent(String(event?.id))}`,
      );
      expect(removed.status).toBe(204);
    },
  };

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ name: 'Calendar', events: [] }] }],
    });
    // One encryption key (in ms.env): both instances must read the tokens the other stored.
    const env = { ...ms.env, ...HIGH_RATE_LIMITS };
    // Instance A lets a stalled booking's lease lapse after one second; B keeps its leases.
    a = await startTestGateway({ ...env, LOCK_TTL_SECS: '1' });
    b = await startTestGateway({ ...env, LOCK_TTL_SECS: '30' }, { db: a.db });
    const tenant = await a.seedTenant('Acme');
    // The workspace's zone: what Outlook calendars get when mailboxSettings may not be read.
    await a.runtime.tenancy.updateTenant(tenant.tenantId, { timeZone: 'Europe/Berlin' });
    const outlook = await connectOutlookAccount(a, ms, tenant.tenantId, [tenant.keyId], ANN, 'write');
    calendarId = outlook.calendars.Calendar as string;
    externalId = outlook.externalIds.Calendar as string;
    b.forgetKeys(tenant.tenantId);
    clientA = await connectClient(a.mcpUrl, tenant.secret);
    clientB = await connectClient(b.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await clientA?.close();
    await clientB?.close();
    await b?.stop();
    await a?.stop();
    await ms?.close();
  });

  bookingRaceCases(() => ({ a, clientA, clientB, calendarId, upstream }));
});
