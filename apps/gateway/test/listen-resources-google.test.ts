/**
 * `subscriptions/listen` resource updates for mirrored calendars, across processes: the worker
 * (in gateway A's process) sees a calendar change (an upstream change its push-driven sync picks
 * up, or a write-through of create_event), publishes it on Redis, and gateway B — another process
 * of the same deployment, running no worker — tells the 2026-07-28 clients listening there whose
 * key may read that calendar. Keys of the same tenant without a grant, and another tenant's keys,
 * hear nothing even when they name the calendar's URI. A grant removed or a key revoked on gateway A
 * stops the updates on B at once, and the revoked key's stream there ends.
 */
import { randomUUID } from 'node:crypto';
import { collectGarbage, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient2026, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { meeting, type PushStack, startPushStack } from './mirror-push-fixture.ts';

const ANN = 'ann@example.com';
const eventsPath = `/calendars/${encodeURIComponent(ANN)}/events`;
/** Longer than a feed poll (1 s) plus a publish: what a listener would have heard by then. */
const QUIET_MS = 2_500;

let stack: PushStack;
let b: TestGateway;
let calendarId = '';
let uri = '';
const clients: Client[] = [];

interface Listener {
  client: Client;
  heard: string[];
  subscription: Awaited<ReturnType<Client['listen']>>;
}

async function key(tenantId: string, runtime = stack.gw.runtime) {
  const { key: created, secret } = await runtime.keys.create(tenantId, { name: `agent ${randomUUID()}` });
  return { keyId: created.id, secret };
}

/** A 2026-07-28 client on gateway B listening for updates of `uris` (and list changes). */
async function listen(secret: string, uris: string[]): Promise<Listener> {
  const client = await connectClient2026(b.mcpUrl, secret);
  clients.push(client);
  const heard: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    heard.push(notification.params.uri);
  });
  const subscription = await client.listen({ resourcesListChanged: true, resourceSubscriptions: uris });
  return { client, heard, subscription };
}

beforeAll(async () => {
  stack = await startPushStack({ accounts: [{ email: ANN, events: [meeting('Planning', 1)] }] });
  await stack.gw.runtime.google.connectOAuth(
    stack.tenantId,
    { email: ANN, refreshToken: stack.refreshToken(ANN) },
    { access: 'write', keyIds: [] },
  );
  calendarId = await stack.calendarIdOf(ANN);
  uri = `calgate://calendars/${encodeURIComponent(calendarId)}`;
  await until(async () => (await stack.summaries(calendarId)).includes('Planning'), 20_000);
  await until(async () => stack.emulator.admin.channels().length === 1, 20_000);
  // B keeps key lookups 5 s and looks its streams' keys up again only every 10 s: what it does
  // sooner after a change made on A, it does because A told it.
  b = await startTestGateway(
    { KEY_CACHE_TTL_MS: '5000', MCP_STREAM_RECHECK_MS: '10000' },
    { db: stack.gw.db },
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await b?.stop();
  await stack?.close();
});

describe('subscriptions/listen resource updates from the mirror', () => {
  it('a key that reads the calendar hears its upstream changes and write-throughs on another gateway; others hear nothing', async () => {
    const reader = await key(stack.tenantId);
    await stack.gw.runtime.tenancy.setGrant(stack.tenantId, reader.keyId, calendarId, {
      read: true,
      write: true,
    });
    const ungranted = await key(stack.tenantId);
    const stranger = await b.seedTenant('Stranger');
    const own = await b.localCalendar(stranger.tenantId, 'Own');
    await b.grant(stranger.tenantId, stranger.keyId, own, { read: true, write: true });

    const listening = await listen(reader.secret, [uri]);
    expect(listening.subscription.honoredFilter).toMatchObject({ resourceSubscriptions: [uri] });
    // Naming the calendar's URI does not make it readable.
    const outsider = await listen(ungranted.secret, [uri]);
    const foreign = await listen(stranger.secret, [uri]);

    // Upstream: someone changes the calendar in Google; the push-driven sync sees it.
    expect((await stack.asAccount(ANN, 'POST', eventsPath, meeting('From Google', 3))).status).toBe(200);
    await until(async () => listening.heard.length >= 1, 10_000);
    expect(listening.heard[0]).toBe(uri);

    // Write-through: the key itself creates an event, through gateway A.
    const before = listening.heard.length;
    const writer = await connectClient2026(stack.gw.mcpUrl, reader.secret);
    clients.push(writer);
    const created = await writer.callTool({
      name: 'create_event',
      arguments: {
        calendarId,
        summary: 'Through Calgate',
        start: { dateTime: '2026-12-04T09:00:00Z' },
        end: { dateTime: '2026-12-04T10:00:00Z' },
      },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
    await until(async () => listening.heard.length > before, 10_000);
    expect(new Set(listening.heard)).toEqual(new Set([uri]));

    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(outsider.heard).toEqual([]);
    expect(foreign.heard).toEqual([]);
  }, 60_000);

  it('a removed grant stops the updates at once; a revoked key’s stream ends', async () => {
    const reader = await key(stack.tenantId);
    await stack.gw.runtime.tenancy.setGrant(stack.tenantId, reader.keyId, calendarId, {
      read: true,
      write: false,
    });
    const other = await key(stack.tenantId);
    await stack.gw.runtime.tenancy.setGrant(stack.tenantId, other.keyId, calendarId, {
      read: true,
      write: false,
    });
    const losing = await listen(reader.secret, [uri]);
    const kept = await listen(other.secret, [uri]);

    // The grant goes on gateway A (as the dashboard there would take it away); B hears of it.
    await stack.gw.runtime.tenancy.setGrant(stack.tenantId, reader.keyId, calendarId, {
      read: false,
      write: false,
    });
    stack.gw.forgetKeys(stack.tenantId);
    expect((await stack.asAccount(ANN, 'POST', eventsPath, meeting('After the grant', 5))).status).toBe(200);
    await until(async () => kept.heard.length >= 1, 10_000);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(losing.heard).toEqual([]);

    // The other key is revoked on A: its stream on B ends without waiting for a change — also
    // once the objects of the request that opened it are collected.
    collectGarbage();
    expect(await stack.gw.runtime.keys.revoke(stack.tenantId, other.keyId)).toBe(true);
    stack.gw.forgetKeys(stack.tenantId);
    const ended = await Promise.race([
      kept.subscription.closed,
      new Promise((resolve) => setTimeout(() => resolve('still open'), 1_500)),
    ]);
    expect(ended).toBe('remote');
    const heardBefore = kept.heard.length;
    expect((await stack.asAccount(ANN, 'POST', eventsPath, meeting('After revoking', 6))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(kept.heard).toHaveLength(heardBefore);
  }, 60_000);
});
