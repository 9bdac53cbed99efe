/**
 * One meaning of a text search on every kind of calendar: the same events, stored with the same
 * ids in a local calendar and in Google (read from the mirror, and from Google directly), found
 * by the same queries through `search_events`, `list_events` with `query`, and `search`: words in
 * any order, accents and case folded, each at the beginning of a word, over summary, description,
 * location, attendees' emails and names, and the organizer.
 */
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccountByCli, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { callOk } from './tool-calls.ts';

const CLIENT = { clientId: 'search-semantics.apps.googleusercontent.com', clientSecret: 'search-secret' };
const ANN = 'ann@example.com';
const DAY = 86_400_000;
const DAY0 = Math.floor(Date.now() / DAY) * DAY + 7 * DAY;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const at = (days: number, hours: number) => iso(DAY0 + days * DAY + hours * 3_600_000);
const date = (days: number) => iso(DAY0 + days * DAY).slice(0, 10);
const WINDOW = { timeMin: at(-3, 0), timeMax: at(40, 0) };

/** Ids (base32hex, as Google takes them) shared by both calendars, so answers compare as they are. */
const EVENTS = [
  {
    id: 'lunch00001',
    summary: 'Lunch with Carla',
    location: 'Café Zoë, Zürich',
    start: { dateTime: at(0, 12) },
    end: { dateTime: at(0, 13) },
  },
  {
    id: 'cafe000002',
    summary: 'CAFÉ planning',
    description: 'Menü und Straße klären',
    start: { dateTime: at(1, 9) },
    end: { dateTime: at(1, 10) },
  },
  {
    id: 'board00003',
    summary: 'Board meeting',
    start: { dateTime: at(2, 15) },
    end: { dateTime: at(2, 16) },
    attendees: [{ email: 'pat@acme.com', displayName: 'Pat Smith' }, { email: 'li.na@example.org' }],
  },
  { id: 'patent0004', summary: 'Patent review', start: { dateTime: at(3, 9) }, end: { dateTime: at(3, 10) } },
  { id: 'compat0005', summary: 'Compat check', start: { dateTime: at(3, 11) }, end: { dateTime: at(3, 12) } },
  {
    id: 'reunion006',
    summary: 'Réunion d’équipe',
    start: { dateTime: at(4, 8), timeZone: 'UTC' },
    end: { dateTime: at(4, 9), timeZone: 'UTC' },
    recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
    attendees: [{ email: 'jo@acme.com', displayName: "Jo O'Brien" }],
  },
  { id: 'offsite007', summary: 'Offsite in Köln', start: { date: date(6) }, end: { date: date(8) } },
];

const instances = (id: string, days: number, hours: number, count: number) =>
  Array.from({ length: count }, (_, week) => `${id}_${at(days + 7 * week, hours).replace(/[-:]/g, '')}`);
const REUNION = instances('reunion006', 4, 8, 3);

/** Each query with the events every kind of calendar must answer, in start order. */
const QUERIES: [string, string[]][] = [
  ['Carla lunch', ['lunch00001']],
  ['lunch carla zürich', ['lunch00001']],
  ['cafe', ['lunch00001', 'cafe000002']],
  ['CAF', ['lunch00001', 'cafe000002']],
  ['strasse menu', ['cafe000002']],
  ['pat', ['board00003', 'patent0004']],
  ['pat@acme.com', ['board00003']],
  ['acme.com', ['board00003', ...REUNION]],
  ['smith pat', ['board00003']],
  ['li.na', ['board00003']],
  ["o'brien", REUNION],
  ['reunion equipe', REUNION],
  ['koln', ['offsite007']],
  ['arla', []],
  ['carla dinner', []],
];

/** An invitation from someone else, only Google can hold (a local event has no organizer). */
const INVITATION = {
  id: 'invite0008',
  iCalUID: 'invite0008@partner.net',
  summary: 'Quarterly sync',
  start: { dateTime: at(5, 14) },
  end: { dateTime: at(5, 15) },
  organizer: { email: 'olga@partner.net', displayName: 'Olga Petrova' },
};

interface Kind {
  name: string;
  client: Client;
  calendarId: string;
}

describe('search means one thing on every kind of calendar', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let direct: TestGateway;
  const clients: Client[] = [];
  const kinds: Kind[] = [];

  const call = callOk;
  const ids = (events: unknown) => (events as { id: string }[]).map((event) => event.id);
  /** The three tools' answers for one query on one calendar, as event ids. */
  const answers = async ({ client, calendarId }: Kind, query: string) => {
    const searched = await call(client, 'search_events', {
      query,
      calendarIds: [calendarId],
      ...WINDOW,
      format: 'json',
    });
    const listed = await call(client, 'list_events', { calendarId, query, ...WINDOW, format: 'json' });
    const found = await call(client, 'search', { query });
    return {
      search_events: ids(searched.events),
      list_events: ids(listed.events),
      // One result per series (its next occurrence); the rest by nearness to now: sorted here.
      search: (found.results as { id: string }[])
        .map((result) => {
          expect(result.id.startsWith(`${calendarId}:`)).toBe(true);
          return result.id.slice(calendarId.length + 1);
        })
        .sort(),
    };
  };

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'UTC', events: EVENTS }],
    });
    const imported = await emulator.editDirectly(ANN, 'POST', '/import', INVITATION);
    expect(imported.status).toBe(200);
    const env = { ...emulator.env, ...HIGH_RATE_LIMITS };
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: '3600',
      MIRROR_POLL_INTERVAL: '3600',
    });
    direct = await startTestGateway({ ...env, MIRROR_READS: 'false' }, { db: gw.db });
    // One key reads the Google calendar, another the local one: `search` reads all a key may.
    const tenant = await gw.seedTenant('Search');
    await connectGoogleAccountByCli(gw, emulator, ANN, 'read');
    direct.forgetKeys(tenant.tenantId);
    const { key, secret } = await gw.runtime.keys.create(tenant.tenantId, { name: 'local' });
    const local = await gw.localCalendar(tenant.tenantId, 'Work', 'UTC');
    await gw.grant(tenant.tenantId, key.id, local, { read: true, write: false });
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    for (const event of EVENTS) {
      await provider.insertEvent({ id: local, externalId: local, timeZone: 'UTC' }, event);
    }

    const viaMirror = await connectClient(gw.mcpUrl, tenant.secret);
    const viaGoogle = await connectClient(direct.mcpUrl, tenant.secret);
    const viaLocal = await connectClient(gw.mcpUrl, secret);
    clients.push(viaMirror, viaGoogle, viaLocal);
    const listed = await call(viaGoogle, 'list_calendars', {});
    const [google] = listed.calendars as [{ id: string }];
    // The first read finds no mirror yet and queues the first sync, which the worker runs.
    const until = Date.now() + 20_000;
    while ((await call(viaMirror, 'list_events', { calendarId: google.id })).syncedAt === undefined) {
      if (Date.now() > until) {
        throw new Error('the first sync did not complete within 20 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    kinds.push(
      { name: 'local', client: viaLocal, calendarId: local },
      { name: 'mirrored Google', client: viaMirror, calendarId: google.id },
      { name: 'Google read directly', client: viaGoogle, calendarId: google.id },
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await direct?.stop();
    await gw?.stop();
    await emulator?.close();
  });

  it.each(QUERIES)(
    '%s: the same events from every tool on every kind of calendar',
    async (query, expected) => {
      const seriesIds = new Set(REUNION);
      // `search` gives a series one result: its next occurrence, the first one here.
      const expectedSearch = [
        ...expected.filter((id) => !seriesIds.has(id)),
        ...(expected.some((id) => seriesIds.has(id)) ? [REUNION[0] as string] : []),
      ].sort();
      for (const kind of kinds) {
        const got = await answers(kind, query);
        expect(got, kind.name).toEqual({
          search_events: expected,
          list_events: expected,
          search: expectedSearch,
        });
      }
    },
  );

  it.each([['olga'], ['petrova olga'], ['olga@partner.net'], ['partner.net']])(
    '%s: the organizer is searched by email and name, in the mirror as in Google',
    async (query) => {
      const [, mirrored, google] = kinds as [Kind, Kind, Kind];
      for (const kind of [mirrored, google]) {
        expect(await answers(kind, query), kind.name).toEqual({
          search_events: ['invite0008'],
          list_events: ['invite0008'],
          search: ['invite0008'],
        });
      }
    },
  );

  it('refuses a query with no letters or digits, on every tool, saying why', async () => {
    const [local] = kinds as [Kind];
    for (const [name, args] of [
      ['search_events', { query: '?!', calendarIds: [local.calendarId] }],
      ['list_events', { query: '--', calendarId: local.calendarId }],
      ['search', { query: '%' }],
    ] as const) {
      const result = await local.client.callTool({ name, arguments: args });
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toContain("'query': has no letters or digits to search for");
    }
    // `search` without words at all lists what is near now, as before.
    expect(await call(local.client, 'search', { query: '' })).toHaveProperty('results');
  });
});
