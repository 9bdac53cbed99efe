/**
 * A CalDAV calendar's mirror and its server answer alike, on real Radicale and Xandikos servers,
 * with the gateway's own sync source and engine run by the test (no worker): free/busy and
 * exports read from the server before the first sync put an all-day event on its day in the
 * calendar's zone, as the mirror does; and a write made through Calgate while a full sync runs (its first, or one
 * started over after the server refused the sync token) shows in the next listing, though the
 * mirror, not ready during the full sync, cannot take it and the sync read the server before it.
 * The sync is held between its read and its end while an MCP client imports an event;
 * MIRROR_MAX_STALENESS is long, so only the write itself can make the next read sync.
 */
import { type SyncSource, syncMirror } from '@calgate/providers';
import { MirrorRepository } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { CaldavAccounts } from '../src/caldav/accounts.ts';
import { type ConnectedCaldav, caldavEnv, calendarNamed, connectCaldavAccount } from './caldav-fixture.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';
import { vcalendar } from './ics-feed-server.ts';
import { callOk } from './tool-calls.ts';

const NEW_YORK = 'America/New_York';
const event = (uid: string, day: string, summary: string) => [
  `UID:${uid}`,
  `DTSTART:${day}T090000Z`,
  `DTEND:${day}T100000Z`,
  `SUMMARY:${summary}`,
];

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('the mirror of a CalDAV calendar and its server on %s', (_name, start) => {
  let server: TestCaldavServer;
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let connected: ConnectedCaldav;
  let client: Client;
  let calendarId = '';

  beforeAll(async () => {
    server = await start();
    const path = new URL(`${server.home}notes/`).pathname;
    await server.makeCalendar(path, { displayName: 'Notes', timeZone: NEW_YORK });
    await server.seed(`${path}existing.ics`, vcalendar([], [event('existing@hand', '20270301', 'Existing')]));
    await server.seed(
      `${path}holiday.ics`,
      vcalendar([], [['UID:holiday@hand', 'DTSTART;VALUE=DATE:20270304', 'SUMMARY:Holiday']]),
    );
    const env = caldavEnv();
    // No worker here: the only sync of the calendar is the one the test runs.
    gw = await startTestGateway({ ...env, MIRROR_MAX_STALENESS: '3600' });
    tenant = await gw.seedTenant('Writer');
    // Xandikos keeps no calendar zone: its calendars take the workspace's, the same here.
    await gw.runtime.tenancy.updateTenant(tenant.tenantId, { timeZone: NEW_YORK });
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, {
      toolsets: ['calendar', 'ics'],
      hijackPolicy: 'off',
    });
    connected = await connectCaldavAccount(gw, env, server, tenant);
    calendarId = calendarNamed(connected, 'Notes') as string;
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await server?.stop();
  });

  const holidayBusy = () =>
    callOk(client, 'find_free_time', {
      calendarIds: [calendarId],
      timeMin: '2027-03-03T00:00:00Z',
      timeMax: '2027-03-06T00:00:00Z',
      timeZone: 'UTC',
      format: 'json',
    });
  const exported = async (range: string) => {
    const read = await client.readResource({ uri: `calgate://calendars/${calendarId}/events.ics?${range}` });
    return String((read.contents[0] as { text?: string }).text);
  };
  const HOLIDAY = () => [{ calendarId, start: '2027-03-04T05:00:00Z', end: '2027-03-05T05:00:00Z' }];

  it('free/busy and exports read from the server before the first sync put an all-day event on its day in the calendar zone', async () => {
    const answer = await holidayBusy();
    // Answered by the server: the mirror's answers carry syncedAt.
    expect(answer.syncedAt).toBeUndefined();
    expect(answer.busy).toEqual(HOLIDAY());
    // An export of the day before (to New York's midnight) leaves it out; one of its day has it.
    expect(await exported('timeMin=2027-03-03&timeMax=2027-03-03')).not.toContain('SUMMARY:Holiday');
    expect(await exported('timeMin=2027-03-04&timeMax=2027-03-04')).toContain('SUMMARY:Holiday');
  });

  it('an event imported after the sync read the server, before it ended, is listed', async () => {
    const calendar = (await gw.runtime.tenancy.listCalendars(tenant.tenantId)).find(
      (c) => c.id === calendarId,
    );
    const accounts = new CaldavAccounts(gw.runtime.connections, true, pino({ level: 'silent' }), () => {});
    const real = await accounts
      .syncSources(gw.db)
      .forConnection({ tenantId: tenant.tenantId, connectionId: connected.connectionId, auth: 'password' });
    let read = () => {};
    const wasRead = new Promise<void>((resolve) => {
      read = resolve;
    });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held: SyncSource = {
      ...real,
      async full(...args) {
        const step = await real.full(...args);
        read();
        await released;
        return step;
      },
    };
    const syncing = syncMirror({
      source: held,
      store: new MirrorRepository(gw.db),
      calendarId,
      tenantId: tenant.tenantId,
      externalId: calendar?.externalId as string,
    });
    await wasRead;
    const imported = await callOk(client, 'import_events', {
      calendarId,
      ics: vcalendar([], [event('meanwhile@hand', '20270302', 'Written meanwhile')]),
    });
    expect(imported).toMatchObject({ imported: 1, errors: [] });
    release();
    expect(await syncing).toMatchObject({ mode: 'full' });
    const listed = await callOk(client, 'list_events', {
      calendarId,
      timeMin: '2027-03-01T00:00:00Z',
      timeMax: '2027-03-03T00:00:00Z',
      format: 'json',
    });
    expect((listed.events as { summary?: string }[]).map((e) => e.summary)).toEqual([
      'Existing',
      'Written meanwhile',
    ]);
    // Answered by the mirror (an answer the server gives instead carries no syncedAt).
    expect(Date.parse(String(listed.syncedAt))).toBeGreaterThan(0);
    // The mirror's free/busy and exports are the server's.
    const fromMirror = await holidayBusy();
    expect(Date.parse(String(fromMirror.syncedAt))).toBeGreaterThan(0);
    expect(fromMirror.busy).toEqual(HOLIDAY());
    expect(await exported('timeMin=2027-03-03&timeMax=2027-03-03')).not.toContain('SUMMARY:Holiday');
    expect(await exported('timeMin=2027-03-04&timeMax=2027-03-04')).toContain('SUMMARY:Holiday');
  });
});
