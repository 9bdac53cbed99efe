/**
 * The event mirror on CalDAV servers without RFC 6578 sync-collection, over MCP: Radicale and
 * Xandikos behind a front that answers REPORT sync-collection with 403 (DAV:supported-report) as
 * such servers do. A change made directly on the server (a plain PUT, as another client would)
 * shows through the mirror within MIRROR_MAX_STALENESS + 2 s, whether the server never offered
 * sync-collection or stopped offering it after the first sync.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startSyncRefusingProxy,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { caldavEnv, calendarNamed, connectCaldavAccount } from './caldav-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const STALENESS_S = 2;

const single = (uid: string, summary: string, hour: number) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Other Client//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    `DTSTART:20270301T${String(hour).padStart(2, '0')}0000Z`,
    `DTEND:20270301T${String(hour + 1).padStart(2, '0')}0000Z`,
    `SUMMARY:${summary}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('the event mirror on %s without sync-collection', (_name, start) => {
  let server: TestCaldavServer;
  let gw: TestGateway;
  let env: Record<string, string>;
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await start();
    env = caldavEnv();
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: String(STALENESS_S),
    });
  }, 60_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) {
      await stop();
    }
    await gw?.stop();
    await server?.stop();
  });

  /** A tenant whose account is connected through a front that refuses sync-collection when told. */
  async function account(name: string, refusing: boolean) {
    const proxy = await startSyncRefusingProxy(server.root, 403);
    stops.push(() => proxy.stop());
    proxy.refusing = refusing;
    const path = new URL(`${name.toLowerCase()}/`, server.home).pathname;
    await server.makeCalendar(path, { displayName: name });
    await server.seed(`${path}first.ics`, single(`first-${name}@other`, 'First', 9));
    const tenant = await gw.seedTenant(name);
    const connected = await connectCaldavAccount(gw, env, { ...server, root: proxy.root }, tenant);
    const calendarId = calendarNamed(connected, name) as string;
    expect(calendarId).toBeTruthy();
    gw.forgetKeys(tenant.tenantId);
    const client = await connectClient(gw.mcpUrl, tenant.secret);
    stops.push(() => client.close());
    return { proxy, path, calendarId, client };
  }

  /** list_events of 1 March 2027 as the mirror answers it (undefined: not from the mirror). */
  async function mirrored(client: Client, calendarId: string) {
    const result = await client.callTool({
      name: 'list_events',
      arguments: { calendarId, timeMin: '2027-03-01T00:00:00Z', timeMax: '2027-03-02T00:00:00Z' },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const page = result.structuredContent as { events: { summary?: string }[]; syncedAt?: string };
    return page.syncedAt === undefined ? undefined : page.events.map((e) => e.summary ?? '');
  }

  /** Waits until the mirror answers with `summary` in the list; how long that took. */
  async function seenWithin(client: Client, calendarId: string, summary: string): Promise<number> {
    const from = Date.now();
    while (Date.now() - from < (STALENESS_S + 6) * 1000) {
      if ((await mirrored(client, calendarId))?.includes(summary)) {
        return Date.now() - from;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return Number.POSITIVE_INFINITY;
  }

  it('syncs by getctag and ETags on its own and shows a change made on the server', async () => {
    const { proxy, path, calendarId, client } = await account('Never', true);
    expect(await seenWithin(client, calendarId, 'First')).toBeLessThan(20_000);
    expect(proxy.refused).toBeGreaterThan(0);
    await server.seed(`${path}second.ics`, single('second-never@other', 'Added elsewhere', 11));
    expect(await seenWithin(client, calendarId, 'Added elsewhere')).toBeLessThanOrEqual(
      (STALENESS_S + 2) * 1000,
    );
  });

  it('keeps syncing when the server stops offering sync-collection after the first sync', async () => {
    const { proxy, path, calendarId, client } = await account('Stopped', false);
    expect(await seenWithin(client, calendarId, 'First')).toBeLessThan(20_000);
    expect(proxy.refused).toBe(0);
    proxy.refusing = true;
    await server.seed(`${path}second.ics`, single('second-stopped@other', 'Added after', 11));
    expect(await seenWithin(client, calendarId, 'Added after')).toBeLessThanOrEqual((STALENESS_S + 2) * 1000);
    expect(proxy.refused).toBeGreaterThan(0);
    // And on, by ETags.
    await server.seed(`${path}third.ics`, single('third-stopped@other', 'Added later', 13));
    expect(await seenWithin(client, calendarId, 'Added later')).toBeLessThanOrEqual((STALENESS_S + 2) * 1000);
  });
});
