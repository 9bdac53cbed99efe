/**
 * Graph change notifications for mirrored Outlook calendars, over real HTTP: a gateway whose
 * PUBLIC_URL is its own loopback address with push forced on (MIRROR_PUSH=true) opens a
 * subscription after the calendar's first sync (Graph validates the notification URL first), and
 * a change made in Outlook reaches the mirror through the notification alone (the staleness bound
 * is an hour, polling is off). Forged notifications are refused.
 */
import { freePort } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';

const ANN = 'ann@contoso.com';
const DAY = 86_400_000;
const DAY0 = Math.floor(Date.now() / DAY) * DAY + 7 * DAY;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const at = (days: number, hours: number) => iso(DAY0 + days * DAY + hours * 3_600_000);
const wall = (days: number, hours: number) => ({ dateTime: at(days, hours).slice(0, 19), timeZone: 'UTC' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Graph change notifications keep mirrored Outlook calendars current', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let url: string;
  let client: Client;
  let outlook: ConnectedOutlook;
  let calendarId: string;
  const window = { timeMin: at(-1, 0), timeMax: at(30, 0) };

  const summaries = async () => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: { calendarId, ...window, format: 'json' },
    });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as { events: { summary?: string }[]; syncedAt?: string };
    return { summaries: out.events.map((e) => e.summary), syncedAt: out.syncedAt };
  };
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    const end = Date.now() + 20_000;
    for (;;) {
      const value = await probe();
      if (value !== undefined) {
        return value;
      }
      if (Date.now() > end) {
        throw new Error(`${what} did not happen within 20 s`);
      }
      await sleep(200);
    }
  };

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [
        {
          email: ANN,
          timeZone: 'UTC',
          calendars: [
            { name: 'Calendar', events: [{ subject: 'Planning', start: wall(0, 9), end: wall(0, 10) }] },
          ],
        },
      ],
    });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      ...ms.env,
      ...HIGH_RATE_LIMITS,
      PORT: String(port),
      PUBLIC_URL: url,
      WORKER_IN_PROCESS: 'true',
      MIRROR_PUSH: 'true',
      MIRROR_POLL_INTERVAL: '3600',
      MIRROR_MAX_STALENESS: '3600',
    });
    const tenant = await gw.seedTenant('Acme');
    outlook = await connectOutlookAccount(gw, ms, tenant.tenantId, [tenant.keyId], ANN, 'write');
    calendarId = outlook.calendars.Calendar as string;
    client = await connectClient(gw.mcpUrl, tenant.secret);
    // The first read queues the first sync; after it the worker opens the calendar's subscription.
    await until('the first sync', async () =>
      (await summaries()).syncedAt === undefined ? undefined : true,
    );
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await ms?.close();
  });

  it('opens a subscription on the calendar, validated against PUBLIC_URL', async () => {
    const subscriptions = await until('a subscription', async () => {
      const open = ms.admin.subscriptions();
      return open.length > 0 ? open : undefined;
    });
    expect(subscriptions).toEqual([
      expect.objectContaining({
        calendarId: outlook.externalIds.Calendar,
        resource: `/me/calendars/${outlook.externalIds.Calendar}/events`,
      }),
    ]);
    const { rows } = await gw.db.pool.query(
      'SELECT resource_id FROM mirror_channels WHERE calendar_id = $1',
      [calendarId],
    );
    expect(rows.map((r) => r.resource_id)).toEqual([subscriptions[0]?.id]);
  });

  it('a change made in Outlook reaches the mirror through the notification', async () => {
    const created = await ms.editDirectly(
      ANN,
      'POST',
      `/me/calendars/${outlook.externalIds.Calendar}/events`,
      {
        subject: 'Pushed from Outlook',
        start: wall(1, 9),
        end: wall(1, 10),
      },
    );
    expect(created.status).toBe(201);
    await ms.admin.notificationsIdle();
    expect(ms.admin.notifications().map((n) => [n.changeType, n.status])).toEqual([['created', 202]]);
    const seen = await until('the pushed change in the mirror', async () => {
      const listing = await summaries();
      return listing.summaries.includes('Pushed from Outlook') ? listing : undefined;
    });
    expect(seen.syncedAt).toEqual(expect.any(String));
    expect(seen.summaries).toEqual(['Planning', 'Pushed from Outlook']);
  });

  it('refuses a notification whose clientState is not a channel token, and answers validation requests', async () => {
    const forged = await fetch(`${url}/api/microsoft/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        value: [{ subscriptionId: 'x', changeType: 'created', clientState: 'chan.forged' }],
      }),
    });
    expect(forged.status).toBe(401);
    const validation = await fetch(
      `${url}/api/microsoft/push?validationToken=${encodeURIComponent('Validation: abc')}`,
      {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      },
    );
    expect(validation.status).toBe(200);
    expect(await validation.text()).toBe('Validation: abc');
  });
});
