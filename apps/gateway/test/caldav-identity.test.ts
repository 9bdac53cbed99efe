/**
 * Which CalDAV connection an account is: the same username on two servers (`alice` on Radicale
 * and `alice` on Xandikos, each with its own password) is two connections, each with its own
 * calendars, sealed password and grants, connected from the CLI or the dashboard API alike;
 * connecting either again keeps its connection, calendars and grants; a connection made when the
 * identity was the bare username is found again by its server. A reconnect with a new password,
 * from the dashboard or from the CLI (another process than the gateway), is what the very next
 * read uses.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { main } from '../src/cli.ts';
import { call, sessionFor } from './api-client.ts';
import { caldavEnv } from './caldav-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface Connected {
  connectionId: string;
  accountEmail: string;
  reconnected: boolean;
  calendars: { id: string; summary: string; externalId: string }[];
}

interface EventOut {
  id: string;
  summary?: string;
}

const meeting = (uid: string, summary: string) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Other Client//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    'DTSTART:20270301T090000Z',
    'DTEND:20270301T100000Z',
    `SUMMARY:${summary}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

const WINDOW = { timeMin: '2027-03-01T00:00:00Z', timeMax: '2027-03-02T00:00:00Z' };

/** `alice@host:port`: the username and the server its principal is on. */
const identityOn = (server: TestCaldavServer) => `alice@${new URL(server.root).host}`;

describe('CalDAV accounts with the same username on Radicale and Xandikos', () => {
  let radicale: TestCaldavServer;
  let xandikos: TestCaldavServer;
  let gw: TestGateway;
  let env: Record<string, string>;
  const clients: Client[] = [];

  beforeAll(async () => {
    [radicale, xandikos] = await Promise.all([startRadicale(), startXandikos()]);
    // Same username, another password: a connection holding the other server's password reads nothing.
    xandikos.changePassword('xandikos: a password of its own');
    for (const [server, name] of [
      [radicale, 'Radicale'],
      [xandikos, 'Xandikos'],
    ] as const) {
      const path = new URL(`${server.home}work/`).pathname;
      await server.makeCalendar(path, { displayName: `${name} work`, timeZone: 'Europe/Berlin' });
      await server.seed(`${path}planning.ics`, meeting(`planning-${name}@hand`, `Planning on ${name}`));
    }
    env = caldavEnv();
    gw = await startTestGateway({ ...env, WORKER_IN_PROCESS: 'true' });
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) {
      await client.close();
    }
    await gw?.stop();
    await radicale?.stop();
    await xandikos?.stop();
  });

  describe.each(['CLI', 'dashboard API'] as const)('connected over the %s', (via) => {
    let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
    let browser: Awaited<ReturnType<typeof sessionFor>>;
    /** Each server's key: granted that server's calendars only. */
    const keys = new Map<TestCaldavServer, { id: string; client: Client }>();
    const first = new Map<TestCaldavServer, Connected>();

    /** `calgate connect caldav` or POST /api/v1/connections/caldav, as alice with the server's current password. */
    const connect = async (
      tenantId: string,
      server: TestCaldavServer,
      access: 'none' | 'read',
      keyIds: string[],
      as = browser,
    ): Promise<Connected> => {
      if (via === 'dashboard API') {
        const answer = await call(gw, 'POST', '/api/v1/connections/caldav', {
          as,
          body: { url: server.root, username: 'alice', password: server.password, access, keyIds },
        });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        return answer.body as Connected;
      }
      let out = '';
      let err = '';
      const code = await main(
        [
          'connect',
          'caldav',
          '--tenant',
          tenantId,
          '--url',
          server.root,
          '--username',
          'alice',
          '--access',
          access,
          ...(keyIds.length > 0 ? ['--keys', keyIds.join(',')] : []),
          '--json',
        ],
        { ...env, DATABASE_URL: gw.db.url, CALDAV_PASSWORD: server.password },
        { out: (t) => (out += t), err: (t) => (err += t) },
      );
      expect(code, err).toBe(0);
      return JSON.parse(out) as Connected;
    };
    const caldavConnections = async (tenantId: string) =>
      (await gw.runtime.connections.list(tenantId)).filter((c) => c.provider === 'caldav');
    /** The connection's calendars' URLs, as the tenant's calendar list keeps them. */
    const calendarUrls = async (tenantId: string, connectionId: string) =>
      (await gw.runtime.tenancy.listCalendars(tenantId))
        .filter((calendar) => calendar.connectionId === connectionId)
        .map((calendar) => calendar.externalId ?? '');
    const grantsOf = async (keyId: string) =>
      (
        await gw.db.pool.query<{ calendar_id: string }>(
          'SELECT calendar_id FROM grants WHERE key_id = $1 ORDER BY calendar_id',
          [keyId],
        )
      ).rows.map((row) => row.calendar_id);
    const listed = async (client: Client, calendarId: string) => {
      const result = await client.callTool({
        name: 'list_events',
        arguments: { calendarId, ...WINDOW, format: 'json' },
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      return (result.structuredContent as { events: EventOut[] }).events;
    };
    const workOf = (connected: Connected, server: TestCaldavServer) =>
      connected.calendars.find(
        (c) => c.summary === `${server === radicale ? 'Radicale' : 'Xandikos'} work`,
      ) as Connected['calendars'][number];

    beforeAll(async () => {
      tenant = await gw.seedTenant(`Alice over the ${via}`);
      browser = await sessionFor(gw, tenant.tenantId);
      const other = await gw.runtime.keys.create(tenant.tenantId, { name: 'xandikos reader' });
      keys.set(radicale, { id: tenant.keyId, client: await connectClient(gw.mcpUrl, tenant.secret) });
      keys.set(xandikos, { id: other.key.id, client: await connectClient(gw.mcpUrl, other.secret) });
      for (const key of keys.values()) {
        clients.push(key.client);
      }
    });

    it('makes two connections, each with its own calendars, password and key', async () => {
      for (const server of [radicale, xandikos]) {
        const connected = await connect(tenant.tenantId, server, 'read', [keys.get(server)?.id as string]);
        expect(connected).toMatchObject({ accountEmail: identityOn(server), reconnected: false });
        first.set(server, connected);
      }
      const onRadicale = first.get(radicale) as Connected;
      const onXandikos = first.get(xandikos) as Connected;
      expect(onXandikos.connectionId).not.toBe(onRadicale.connectionId);
      expect((await caldavConnections(tenant.tenantId)).map((c) => c.accountEmail).sort()).toEqual(
        [identityOn(radicale), identityOn(xandikos)].sort(),
      );
      // Each connection's calendars are its own server's, and its sealed password too.
      for (const [server, connected] of first) {
        const urls = await calendarUrls(tenant.tenantId, connected.connectionId);
        expect(urls.length).toBeGreaterThan(0);
        expect(urls.every((url) => url.startsWith(server.root))).toBe(true);
        const sealed = JSON.parse(
          (await gw.runtime.connections.readCredentials(tenant.tenantId, connected.connectionId)) as string,
        ) as { username: string; password: string };
        expect(sealed).toMatchObject({ username: 'alice', password: server.password });
      }
      gw.forgetKeys(tenant.tenantId);
      // Each key reads its own server's calendar, and sees none of the other's.
      for (const [server, connected] of first) {
        const { client } = keys.get(server) as { client: Client };
        const events = await listed(client, workOf(connected, server).id);
        expect(events.map((e) => e.summary)).toEqual([
          `Planning on ${server === radicale ? 'Radicale' : 'Xandikos'}`,
        ]);
        const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
        const seen = (calendars.structuredContent as { calendars: { id: string }[] }).calendars.map(
          (c) => c.id,
        );
        const other = first.get(server === radicale ? xandikos : radicale) as Connected;
        for (const calendar of other.calendars) {
          expect(seen).not.toContain(calendar.id);
        }
      }
    }, 60_000);

    it('keeps the connection, its calendars and their grants when either account connects again', async () => {
      const grantsBefore = new Map<TestCaldavServer, string[]>();
      for (const server of [radicale, xandikos]) {
        grantsBefore.set(server, await grantsOf(keys.get(server)?.id as string));
      }
      for (const server of [xandikos, radicale]) {
        const before = first.get(server) as Connected;
        const again = await connect(tenant.tenantId, server, 'none', []);
        expect(again).toMatchObject({
          connectionId: before.connectionId,
          accountEmail: identityOn(server),
          reconnected: true,
        });
        expect(again.calendars.map((c) => c.id).sort()).toEqual(before.calendars.map((c) => c.id).sort());
        const urls = await calendarUrls(tenant.tenantId, before.connectionId);
        expect(urls.every((url) => url.startsWith(server.root))).toBe(true);
      }
      expect(await caldavConnections(tenant.tenantId)).toHaveLength(2);
      gw.forgetKeys(tenant.tenantId);
      for (const server of [radicale, xandikos]) {
        const key = keys.get(server) as { id: string; client: Client };
        expect(await grantsOf(key.id)).toEqual(grantsBefore.get(server));
        const events = await listed(key.client, workOf(first.get(server) as Connected, server).id);
        expect(events.map((e) => e.summary)).toEqual([
          `Planning on ${server === radicale ? 'Radicale' : 'Xandikos'}`,
        ]);
      }
    }, 60_000);

    it('finds a connection stored under the bare username by its server, keeping its id and grants', async () => {
      const earlier = await gw.seedTenant(`Connected earlier over the ${via}`);
      const person = await sessionFor(gw, earlier.tenantId);
      const made = await connect(earlier.tenantId, radicale, 'read', [earlier.keyId], person);
      // As connections were stored before an identity named its server.
      await gw.db.pool.query(`UPDATE connections SET account_email = 'alice' WHERE id = $1`, [
        made.connectionId,
      ]);
      const granted = await grantsOf(earlier.keyId);
      expect(granted.length).toBeGreaterThan(0);

      // The same username on another server is another account: the old connection is left alone.
      const other = await connect(earlier.tenantId, xandikos, 'none', [], person);
      expect(other.connectionId).not.toBe(made.connectionId);
      expect(other).toMatchObject({ accountEmail: identityOn(xandikos), reconnected: false });
      const kept = await gw.runtime.connections.get(earlier.tenantId, made.connectionId);
      expect(kept?.accountEmail).toBe('alice');
      expect(
        JSON.parse(
          (await gw.runtime.connections.readCredentials(earlier.tenantId, made.connectionId)) as string,
        ),
      ).toMatchObject({ password: radicale.password });

      // Its own server again: the same connection, now under the identity naming its server.
      const again = await connect(earlier.tenantId, radicale, 'none', [], person);
      expect(again).toMatchObject({
        connectionId: made.connectionId,
        accountEmail: identityOn(radicale),
        reconnected: true,
      });
      expect((await caldavConnections(earlier.tenantId)).map((c) => c.accountEmail).sort()).toEqual(
        [identityOn(radicale), identityOn(xandikos)].sort(),
      );
      expect(await grantsOf(earlier.keyId)).toEqual(granted);
      gw.forgetKeys(earlier.tenantId);
      const client = await connectClient(gw.mcpUrl, earlier.secret);
      clients.push(client);
      const events = await listed(client, workOf(again, radicale).id);
      expect(events.map((e) => e.summary)).toEqual(['Planning on Radicale']);
    }, 60_000);

    it('reads with the new password right after a reconnect with it', async () => {
      const events = new Map<TestCaldavServer, string>();
      for (const server of [radicale, xandikos]) {
        const { client } = keys.get(server) as { client: Client };
        const calendarId = workOf(first.get(server) as Connected, server).id;
        const [event] = await listed(client, calendarId);
        events.set(server, event?.id as string);
        // get_event reads the server itself: the account's client is made and kept.
        const read = await client.callTool({
          name: 'get_event',
          arguments: { calendarId, eventId: event?.id },
        });
        expect(read.isError, textOf(read)).toBeFalsy();
      }
      for (const server of [radicale, xandikos]) {
        // The old password leaked: changed on the server, then at once in Calgate.
        server.changePassword(`${server.kind} over the ${via}: the new pässword`);
        const again = await connect(tenant.tenantId, server, 'none', []);
        expect(again).toMatchObject({ connectionId: first.get(server)?.connectionId, reconnected: true });
      }
      for (const server of [radicale, xandikos]) {
        const { client } = keys.get(server) as { client: Client };
        const calendarId = workOf(first.get(server) as Connected, server).id;
        const read = await client.callTool({
          name: 'get_event',
          arguments: { calendarId, eventId: events.get(server) },
        });
        expect(read.isError, textOf(read)).toBeFalsy();
        expect(textOf(read)).toContain(`Planning on ${server === radicale ? 'Radicale' : 'Xandikos'}`);
        const connection = await gw.runtime.connections.get(
          tenant.tenantId,
          first.get(server)?.connectionId as string,
        );
        expect(connection?.status).toBe('active');
      }
    }, 60_000);
  });
});
