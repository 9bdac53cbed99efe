/**
 * CalDAV accounts end to end: `calgate connect caldav`, then every kind of tool over MCP (the
 * official SDK client) against real Radicale and Xandikos servers, with the gateway's worker
 * keeping the mirror. Changes made directly on the server (plain PUTs, as another client would)
 * show up through the mirror within MIRROR_MAX_STALENESS + 2 s.
 */
import { randomBytes } from 'node:crypto';
import { until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HARD_PASSWORD,
  oneEvent,
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { main } from '../src/cli.ts';
import { csrfFor } from './api-client.ts';
import { caldavEnv, connectCaldavAccount } from './caldav-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { watchKeyDrops } from './key-drops.ts';

const STALENESS_S = 2;

interface EventOut {
  id: string;
  summary?: string;
  start: { dateTime?: string; date?: string };
  attendees?: { email: string }[];
  recurringEventId?: string;
}

const WEEKLY = oneEvent('weekly-uid@hand', [
  'SUMMARY:Weekly sync',
  'DTSTART;TZID=Europe/Berlin:20270104T100000',
  'DTEND;TZID=Europe/Berlin:20270104T110000',
  'RRULE:FREQ=WEEKLY;COUNT=6',
  'X-HAND-WRITTEN:keep me',
]);

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('CalDAV accounts on %s', (_name, start) => {
  let server: TestCaldavServer;
  let gw: TestGateway;
  let env: Record<string, string>;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let client: Client;
  let calendarId: string;
  let workUrl: string;
  const clients: Client[] = [];

  const cli = async (args: string[], password: string | undefined) => {
    let out = '';
    let err = '';
    const code = await main(
      [...args, '--json'],
      { ...env, DATABASE_URL: gw.db.url, ...(password === undefined ? {} : { CALDAV_PASSWORD: password }) },
      { out: (t) => (out += t), err: (t) => (err += t) },
    );
    return { code, out, err };
  };
  const call = async (name: string, args: Record<string, unknown>, via: Client = client) => {
    const result = await via.callTool({ name, arguments: args });
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  };
  const list = async (timeMin: string, timeMax: string) =>
    (await call('list_events', { calendarId, timeMin, timeMax, format: 'json' })).events as EventOut[];
  const raw = async (path: string) => {
    const response = await server.raw('GET', path);
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    server = await start();
    workUrl = `${server.home}work/`;
    await server.makeCalendar(new URL(workUrl).pathname, { displayName: 'Work', timeZone: 'Europe/Berlin' });
    await server.seed(`${new URL(workUrl).pathname}weekly.ics`, WEEKLY);
    await server.seed(
      `${new URL(workUrl).pathname}dentist.ics`,
      oneEvent('dentist@hand', [
        'SUMMARY:Dentist appointment',
        'DTSTART:20270105T140000Z',
        'DTEND:20270105T150000Z',
        'ORGANIZER:mailto:clinic@example.com',
        'X-CLINIC-REF:A-17',
        'BEGIN:VALARM',
        'ACTION:DISPLAY',
        'DESCRIPTION:Dentist',
        'TRIGGER:-PT30M',
        'END:VALARM',
      ]),
    );
    env = caldavEnv();
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: String(STALENESS_S),
    });
    tenant = await gw.seedTenant('Alice');
    await gw.runtime.tenancy.updateTenant(tenant.tenantId, { timeZone: 'America/New_York' });
    // Hand-written events name outside organisers; this test is about CalDAV, not the injection guard.
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { hijackPolicy: 'off' });
    const result = await connectCaldavAccount(gw, env, server, tenant);
    expect(result.connectionId).toMatch(/^con_/);
    expect(result.accountEmail).toBeTruthy();
    const work = result.calendars.find((c) => c.summary === 'Work');
    expect(work).toBeDefined();
    calendarId = work?.id as string;
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
    clients.push(client);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) {
      await c.close();
    }
    await gw?.stop();
    await server?.stop();
  });

  it('lists the account as a password connection and reads its events, series expanded', async () => {
    const calendars = (await call('list_calendars', {})).calendars as {
      id: string;
      connectionKind: string;
      canWrite: boolean;
      timeZone: string;
    }[];
    const work = calendars.find((c) => c.id === calendarId);
    expect(work).toMatchObject({ connectionKind: 'password', canWrite: true });
    // Xandikos does not keep the zone MKCALENDAR sets; a calendar without one takes the workspace's.
    expect(work?.timeZone).toBe(server.kind === 'radicale' ? 'Europe/Berlin' : 'America/New_York');
    const events = await list('2027-01-01T00:00:00Z', '2027-01-20T00:00:00Z');
    expect(events.map((e) => e.summary)).toEqual([
      'Weekly sync',
      'Dentist appointment',
      'Weekly sync',
      'Weekly sync',
    ]);
    const dentist = events.find((e) => e.summary === 'Dentist appointment') as EventOut;
    const got = await call('get_event', { calendarId, eventId: dentist.id });
    expect(JSON.stringify(got)).toContain('Dentist appointment');
  });

  it('creates, updates (keeping what it was not asked to change) and deletes events on the server', async () => {
    const created = (await call('create_event', {
      calendarId,
      summary: 'Planning',
      start: { dateTime: '2027-01-12T15:00:00+01:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2027-01-12T16:00:00+01:00', timeZone: 'Europe/Berlin' },
      attendees: ['ann@example.com', 'ben@example.com'],
    })) as { event: EventOut };
    const id = created.event.id;
    const stored = await raw(`${new URL(workUrl).pathname}${id}.ics`);
    expect(stored.status).toBe(200);
    expect(stored.text).toContain('SUMMARY:Planning');
    expect(stored.text).toMatch(/DTSTART;TZID=Europe\/Berlin:20270112T150000/);
    expect(stored.text).toContain('BEGIN:VTIMEZONE');
    expect(stored.text.toLowerCase()).toContain('mailto:ann@example.com');
    const got = (await call('get_event', { calendarId, eventId: id })) as { event: EventOut };
    expect(got.event.attendees?.map((a) => a.email).sort()).toEqual(['ann@example.com', 'ben@example.com']);

    const events = await list('2027-01-05T00:00:00Z', '2027-01-06T00:00:00Z');
    const dentist = events.find((e) => e.summary === 'Dentist appointment') as EventOut;
    await call('update_event', { calendarId, eventId: dentist.id, summary: 'Dentist (moved room)' });
    const dentistText = (await raw(`${new URL(workUrl).pathname}dentist.ics`)).text;
    expect(dentistText).toContain('SUMMARY:Dentist (moved room)');
    expect(dentistText).toContain('X-CLINIC-REF:A-17');
    expect(dentistText).toContain('BEGIN:VALARM');
    expect(dentistText).toContain('ORGANIZER:mailto:clinic@example.com');

    await call('delete_event', { calendarId, eventId: id });
    expect((await raw(`${new URL(workUrl).pathname}${id}.ics`)).status).toBe(404);
    // A sync page read just before the delete may put it back until the next sync (the mirror
    // keeps no tombstone for a removed single event): gone within the mirror's bound.
    let after = await list('2027-01-12T00:00:00Z', '2027-01-13T00:00:00Z');
    for (let i = 0; i < 20 && after.some((e) => e.summary === 'Planning'); i++) {
      await new Promise((r) => setTimeout(r, (STALENESS_S * 1000 + 2000) / 20));
      after = await list('2027-01-12T00:00:00Z', '2027-01-13T00:00:00Z');
    }
    expect(after.map((e) => e.summary)).not.toContain('Planning');
  });

  it('edits and deletes one occurrence of a series as an override and an EXDATE', async () => {
    const weeks = (await list('2027-01-10T00:00:00Z', '2027-01-26T00:00:00Z')).filter(
      (e) => e.summary === 'Weekly sync',
    );
    expect(weeks).toHaveLength(3);
    const [second, third] = weeks as [EventOut, EventOut];
    expect(second.recurringEventId).toBeTruthy();
    await call('update_event', {
      calendarId,
      eventId: second.id,
      summary: 'Weekly sync (offsite)',
      scope: 'thisEvent',
    });
    await call('delete_event', { calendarId, eventId: third.id, scope: 'thisEvent' });
    const text = (await raw(`${new URL(workUrl).pathname}weekly.ics`)).text;
    expect(text).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20270111T100000');
    expect(text).toContain('EXDATE;TZID=Europe/Berlin:20270118T100000');
    expect(text).toContain('X-HAND-WRITTEN:keep me');
    const now = await list('2027-01-01T00:00:00Z', '2027-02-20T00:00:00Z');
    expect(now.filter((e) => e.summary?.startsWith('Weekly')).map((e) => e.summary)).toEqual([
      'Weekly sync',
      'Weekly sync (offsite)',
      'Weekly sync',
      'Weekly sync',
      'Weekly sync',
    ]);
  });

  it('drops an override removed directly on the server from the mirror: the occurrence follows the series again', async () => {
    // Another client rewrites the series without the override and the EXDATE (and a new agenda).
    await server.seed(
      `${new URL(workUrl).pathname}weekly.ics`,
      WEEKLY.replace('SUMMARY:Weekly sync', 'SUMMARY:Weekly sync\r\nDESCRIPTION:Agenda in the doc'),
    );
    const changedAt = Date.now();
    let summaries: (string | undefined)[] = [];
    while (Date.now() - changedAt < (STALENESS_S + 4) * 1000) {
      summaries = (await list('2027-01-01T00:00:00Z', '2027-02-20T00:00:00Z'))
        .filter((e) => e.summary?.startsWith('Weekly'))
        .map((e) => e.summary);
      if (summaries.length === 6) {
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(summaries).toEqual(Array(6).fill('Weekly sync'));
    expect(Date.now() - changedAt).toBeLessThanOrEqual((STALENESS_S + 2) * 1000);
  });

  it('shows a change made directly on the server within MIRROR_MAX_STALENESS + 2 s', async () => {
    await list('2027-03-01T00:00:00Z', '2027-03-02T00:00:00Z');
    await server.seed(
      `${new URL(workUrl).pathname}out-of-band.ics`,
      oneEvent('oob@hand', ['SUMMARY:Added elsewhere', 'DTSTART:20270301T090000Z', 'DTEND:20270301T100000Z']),
    );
    const changedAt = Date.now();
    let seenAt: number | undefined;
    while (Date.now() - changedAt < (STALENESS_S + 4) * 1000) {
      const events = await list('2027-03-01T00:00:00Z', '2027-03-02T00:00:00Z');
      if (events.some((e) => e.summary === 'Added elsewhere')) {
        seenAt = Date.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(seenAt).toBeDefined();
    expect((seenAt as number) - changedAt).toBeLessThanOrEqual((STALENESS_S + 2) * 1000);
  });

  it('computes free/busy and free slots from the events, books a slot and searches', async () => {
    // The event added out of band: the listing above may have seen it from the server itself
    // (a sync that failed falls back there), so free/busy shows it within the same staleness.
    const busyPattern = /2027-03-01T(09:00:00Z|10:00:00\+01:00|04:00:00-05:00)/;
    const askedAt = Date.now();
    let busy: Record<string, unknown> = {};
    while (Date.now() - askedAt < (STALENESS_S + 4) * 1000) {
      busy = await call('check_availability', {
        calendarIds: [calendarId],
        timeMin: '2027-03-01T08:00:00Z',
        timeMax: '2027-03-01T12:00:00Z',
      });
      if (busyPattern.test(JSON.stringify(busy))) {
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(JSON.stringify(busy)).toMatch(busyPattern);
    expect(Date.now() - askedAt).toBeLessThanOrEqual((STALENESS_S + 2) * 1000);
    // Within the same staleness too: the answer above may have come from the server itself (a sync
    // that failed under load), and this one from a mirror a sync behind, as the freshness rule allows.
    const clear = (slot: { start: string; end: string }) =>
      Date.parse(slot.end) <= Date.parse('2027-03-01T09:00:00Z') ||
      Date.parse(slot.start) >= Date.parse('2027-03-01T10:00:00Z');
    let slots: { slots: { start: string; end: string }[] };
    do {
      slots = (await call('find_free_slots', {
        calendarIds: [calendarId],
        timeMin: '2027-03-01T08:00:00Z',
        timeMax: '2027-03-01T11:00:00Z',
        minDurationMinutes: 60,
      })) as typeof slots;
      if (slots.slots.every(clear)) {
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() - askedAt < (STALENESS_S + 4) * 1000);
    expect(slots.slots.length).toBeGreaterThan(0);
    for (const slot of slots.slots) {
      const [from, to] = [Date.parse(slot.start), Date.parse(slot.end)];
      expect(to <= Date.parse('2027-03-01T09:00:00Z') || from >= Date.parse('2027-03-01T10:00:00Z')).toBe(
        true,
      );
    }
    const refused = await client.callTool({
      name: 'book_slot',
      arguments: { calendarId, start: '2027-03-01T09:30:00Z', end: '2027-03-01T10:00:00Z', summary: 'Clash' },
    });
    expect(refused.isError).toBe(true);
    const booked = await call('book_slot', {
      calendarId,
      start: '2027-03-01T11:00:00Z',
      end: '2027-03-01T11:30:00Z',
      summary: 'Booked call',
    });
    const eventId = (booked as { eventId: string }).eventId;
    expect((await raw(`${new URL(workUrl).pathname}${eventId}.ics`)).text).toContain('SUMMARY:Booked call');
    const found = (await call('search_events', {
      calendarIds: [calendarId],
      query: 'dentist',
      timeMin: '2027-01-01T00:00:00Z',
      timeMax: '2027-02-01T00:00:00Z',
    })) as { events: EventOut[] };
    expect(found.events.map((e) => e.summary)).toEqual(['Dentist (moved room)']);
  });

  it('never shows a CalDAV calendar to a key without a grant', async () => {
    const { key, secret } = await gw.runtime.keys.create(tenant.tenantId, { name: 'other' });
    expect(key.id).not.toBe(tenant.keyId);
    const other = await connectClient(gw.mcpUrl, secret);
    clients.push(other);
    const listed = await other.callTool({ name: 'list_calendars', arguments: {} });
    expect(textOf(listed)).not.toContain(calendarId);
    const asked = await other.callTool({
      name: 'list_events',
      arguments: { calendarId, timeMin: '2027-01-01T00:00:00Z', timeMax: '2027-02-01T00:00:00Z' },
    });
    const missing = await other.callTool({
      name: 'list_events',
      arguments: {
        calendarId: 'cal_doesnotexist',
        timeMin: '2027-01-01T00:00:00Z',
        timeMax: '2027-02-01T00:00:00Z',
      },
    });
    expect(asked.isError).toBe(true);
    expect(missing.isError).toBe(true);
    expect(textOf(asked).replace(calendarId, 'X')).toBe(textOf(missing).replace('cal_doesnotexist', 'X'));
    // Nor to a key of another tenant.
    const stranger = await gw.seedTenant('Stranger');
    const outsider = await connectClient(gw.mcpUrl, stranger.secret);
    clients.push(outsider);
    for (const [name, args] of [
      ['list_events', { calendarId, timeMin: '2027-01-01T00:00:00Z', timeMax: '2027-02-01T00:00:00Z' }],
      ['search_events', { query: 'dentist', calendarIds: [calendarId] }],
    ] as const) {
      const foreign = await outsider.callTool({ name, arguments: args });
      expect(foreign.isError).toBe(true);
      expect(textOf(foreign)).not.toMatch(/Dentist|Weekly/);
    }
  });

  it('says a wrong password plainly, and a refused stored password marks the account needs_reauth', async () => {
    const wrong = await cli(
      ['connect', 'caldav', '--tenant', tenant.tenantId, '--url', server.root, '--username', server.username],
      'not-the-password',
    );
    expect(wrong.code).not.toBe(0);
    expect(wrong.err).toMatch(/refused the username 'alice' with this password: the password is wrong/);
    expect(wrong.err).not.toContain('not-the-password');
    const noPassword = await cli(
      ['connect', 'caldav', '--tenant', tenant.tenantId, '--url', server.root, '--username', server.username],
      undefined,
    );
    expect(noPassword.code).not.toBe(0);
    expect(noPassword.err).toContain('CALDAV_PASSWORD');

    const second = await gw.seedTenant('Mallory');
    const ok = await cli(
      [
        'connect',
        'caldav',
        '--tenant',
        second.tenantId,
        '--url',
        workUrl,
        '--username',
        server.username,
        '--access',
        'read',
      ],
      HARD_PASSWORD,
    );
    expect(ok.code, ok.err).toBe(0);
    const connection = JSON.parse(ok.out) as { connectionId: string; calendars: { id: string }[] };
    expect(connection.calendars).toHaveLength(1);
    // Sealed at rest: the row holds neither the password nor the username in clear, in any form
    // a reader of the database could undo (text, UTF-8 bytes, base64, the Basic header); the
    // account's name is kept only as its identity, account_email.
    const { rows } = await gw.db.pool.query('SELECT * FROM connections WHERE id = $1', [
      connection.connectionId,
    ]);
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    // Neither server gives the principal an address: the identity is the username on its server.
    expect(row).toMatchObject({
      provider: 'caldav',
      auth: 'password',
      account_email: `${server.username}@${new URL(server.root).host}`,
    });
    const sealed = Buffer.from(row.credentials_ciphertext as Buffer);
    expect(sealed.length).toBeGreaterThan(0);
    const forms = (secret: string) => [
      secret,
      Buffer.from(secret, 'utf8').toString('base64'),
      Buffer.from(secret, 'utf8').toString('hex'),
      encodeURIComponent(secret),
      JSON.stringify(secret),
    ];
    const basicHeader = Buffer.from(`${server.username}:${HARD_PASSWORD}`, 'utf8').toString('base64');
    const { account_email: _identity, ...rest } = row;
    const rowText = JSON.stringify(rest, (_key, value: unknown) =>
      value instanceof Buffer || (value as { type?: string })?.type === 'Buffer'
        ? Buffer.from(value as Buffer).toString('latin1')
        : value,
    );
    for (const secret of [HARD_PASSWORD, server.username]) {
      for (const form of forms(secret)) {
        expect(rowText).not.toContain(form);
        expect(sealed.includes(Buffer.from(form, 'utf8'))).toBe(false);
      }
    }
    expect(rowText).not.toContain(basicHeader);
    expect(sealed.includes(Buffer.from(HARD_PASSWORD, 'utf8'))).toBe(false);
    // What is sealed is the password Calgate reads back.
    const unsealed = JSON.parse(
      (await gw.runtime.connections.readCredentials(second.tenantId, connection.connectionId)) as string,
    ) as { username: string; password: string };
    expect(unsealed).toMatchObject({ username: server.username, password: HARD_PASSWORD });
    await gw.runtime.connections.storeCredentials(
      second.tenantId,
      connection.connectionId,
      JSON.stringify({ username: server.username, password: 'changed-elsewhere', url: workUrl }),
    );
    gw.forgetKeys(second.tenantId);
    const mallory = await connectClient(gw.mcpUrl, second.secret);
    clients.push(mallory);
    const drops = watchKeyDrops(gw);
    const read = await mallory.callTool({
      name: 'list_events',
      arguments: {
        calendarId: connection.calendars[0]?.id,
        timeMin: '2027-01-01T00:00:00Z',
        timeMax: '2027-02-01T00:00:00Z',
      },
    });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toMatch(/refused the username or password|reconnect/i);
    let status = '';
    for (let i = 0; i < 50 && status !== 'needs_reauth'; i++) {
      status = (await gw.runtime.connections.get(second.tenantId, connection.connectionId))?.status ?? '';
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('needs_reauth');
    // Marking it dropped only this tenant's cached keys; its key's next call sees the new status.
    await until(async () => drops.tenants.length > 0, 5_000);
    drops.stop();
    expect(new Set(drops.tenants)).toEqual(new Set([second.tenantId]));
    const seen = await mallory.callTool({ name: 'list_calendars', arguments: {} });
    const calendars = (seen.structuredContent as { calendars: { status?: string }[] }).calendars;
    expect(calendars.map((c) => c.status)).toEqual(['needs_reauth']);

    // Connecting again with the current password brings the account back.
    const again = await cli(
      ['connect', 'caldav', '--tenant', second.tenantId, '--url', workUrl, '--username', server.username],
      HARD_PASSWORD,
    );
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ connectionId: connection.connectionId, reconnected: true });
    gw.forgetKeys(second.tenantId);
    const back = await mallory.callTool({
      name: 'list_events',
      arguments: {
        calendarId: connection.calendars[0]?.id,
        timeMin: '2027-01-01T00:00:00Z',
        timeMax: '2027-02-01T00:00:00Z',
      },
    });
    expect(back.isError, textOf(back)).toBeFalsy();
    expect((await gw.runtime.connections.get(second.tenantId, connection.connectionId))?.status).toBe(
      'active',
    );
  });
});

describe('a calendar the CalDAV server lets the account only read', () => {
  const ENCRYPTION_KEY = randomBytes(32).toString('base64');
  let server: Awaited<ReturnType<typeof startRadicale>>;
  let gw: TestGateway;
  let client: Client;

  beforeAll(async () => {
    server = await startRadicale();
    await server.bob.makeCalendar('/bob/shared/', { displayName: 'Bob shared', timeZone: 'Europe/Berlin' });
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, OUTBOUND_ALLOW_PRIVATE: 'true', ENCRYPTION_KEY });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await server?.stop();
  });

  it('is refused on write whatever the grant', async () => {
    const tenant = await gw.seedTenant('Alice');
    let out = '';
    let err = '';
    const code = await main(
      [
        'connect',
        'caldav',
        '--tenant',
        tenant.tenantId,
        '--url',
        `${server.root}bob/shared/`,
        '--username',
        'alice',
        '--access',
        'write',
        '--keys',
        tenant.keyId,
        '--json',
      ],
      {
        ...HIGH_RATE_LIMITS,
        OUTBOUND_ALLOW_PRIVATE: 'true',
        ENCRYPTION_KEY,
        DATABASE_URL: gw.db.url,
        CALDAV_PASSWORD: HARD_PASSWORD,
      },
      { out: (t) => (out += t), err: (t) => (err += t) },
    );
    expect(code, err).toBe(0);
    const calendarId = (JSON.parse(out) as { calendars: { id: string }[] }).calendars[0]?.id as string;
    // Write ticked for the key directly in the store: the server's privileges still decide.
    await gw.db.pool.query('UPDATE grants SET can_write = true WHERE calendar_id = $1', [calendarId]);
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain('"canWrite":false');
    const refused = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId,
        summary: 'Not mine to add',
        start: { dateTime: '2027-01-12T15:00:00+01:00' },
        end: { dateTime: '2027-01-12T16:00:00+01:00' },
      },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/only read calendar|Read only on 'Bob shared'/);

    // Disconnected from the dashboard as a Google account is: calendars, grants and password gone.
    const connectionId = (JSON.parse(out) as { connectionId: string }).connectionId;
    await gw.db.pool.query(
      `INSERT INTO users (id, tenant_id, email) VALUES ('usr_alice', $1, 'alice@example.com')`,
      [tenant.tenantId],
    );
    const cookie = (
      await gw.runtime.deps.dashboard.sessions.issue({ userId: 'usr_alice', tenantId: tenant.tenantId })
    ).split(';')[0] as string;
    const removed = await fetch(`${gw.url}/api/v1/connections/${connectionId}`, {
      method: 'DELETE',
      headers: { cookie, origin: 'http://calgate.test', 'x-calgate-csrf': await csrfFor(gw.url, cookie) },
    });
    expect(removed.status).toBe(200);
    expect(await gw.runtime.connections.get(tenant.tenantId, connectionId)).toBeNull();
    gw.forgetKeys(tenant.tenantId);
    const gone = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(JSON.stringify(gone.structuredContent)).not.toContain(calendarId);
    expect(await server.bob.raw('GET', '/bob/shared/').then((r) => r.status)).toBeLessThan(500);
  });

  it('connects from the dashboard: a wrong password said plainly, then the account with its calendars', async () => {
    const tenant = await gw.seedTenant('Dashboard');
    await gw.db.pool.query(
      `INSERT INTO users (id, tenant_id, email) VALUES ('usr_dash', $1, 'dash@example.com')`,
      [tenant.tenantId],
    );
    const cookie = (
      await gw.runtime.deps.dashboard.sessions.issue({ userId: 'usr_dash', tenantId: tenant.tenantId })
    ).split(';')[0] as string;
    const post = async (body: unknown) =>
      fetch(`${gw.url}/api/v1/connections/caldav`, {
        method: 'POST',
        headers: {
          cookie,
          origin: 'http://calgate.test',
          'x-calgate-csrf': await csrfFor(gw.url, cookie),
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
    await server.makeCalendar('/alice/dash/', { displayName: 'Dash', timeZone: 'Europe/Berlin' });
    const wrong = await post({ url: server.root, username: 'alice', password: 'wrong password' });
    expect(wrong.status).toBeGreaterThanOrEqual(400);
    const said = JSON.stringify(await wrong.json());
    expect(said).toMatch(/the password is wrong/);
    expect(said).not.toContain('wrong password');
    const ok = await post({
      url: `${server.root}alice/`,
      username: 'alice',
      password: HARD_PASSWORD,
      access: 'read',
      keyIds: [tenant.keyId],
    });
    expect(ok.status).toBe(200);
    const result = (await ok.json()) as { connectionId: string; calendars: { summary: string }[] };
    expect(result.connectionId).toMatch(/^con_/);
    expect(result.calendars.map((c) => c.summary)).toEqual(['Dash']);
    gw.forgetKeys(tenant.tenantId);
    const dash = await connectClient(gw.mcpUrl, tenant.secret);
    try {
      const listed = await dash.callTool({ name: 'list_calendars', arguments: {} });
      expect(JSON.stringify(listed.structuredContent)).toContain('"connectionKind":"password"');
    } finally {
      await dash.close();
    }
  });

  it('refuses a loopback server unless OUTBOUND_ALLOW_PRIVATE is set, naming the setting', async () => {
    const tenant = await gw.seedTenant('Strict');
    let err = '';
    const code = await main(
      [
        'connect',
        'caldav',
        '--tenant',
        tenant.tenantId,
        '--url',
        server.root,
        '--username',
        'alice',
        '--json',
      ],
      { ...HIGH_RATE_LIMITS, ENCRYPTION_KEY, DATABASE_URL: gw.db.url, CALDAV_PASSWORD: HARD_PASSWORD },
      { out: () => {}, err: (t) => (err += t) },
    );
    expect(code).not.toBe(0);
    expect(err).toContain('OUTBOUND_ALLOW_PRIVATE');
  });
});
