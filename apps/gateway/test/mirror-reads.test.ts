/**
 * Reads of Google calendars served from the mirror, end to end over HTTP with the MCP SDK client:
 * the same answers Google gives, the freshness rule (MIRROR_MAX_STALENESS), write-through, grants,
 * search over the mirror, and booking that still asks Google.
 *
 * Three gateways share one database: `gw` syncs (its worker runs in process) and reads with a
 * 2-second staleness bound; `slow` reads with a bound of an hour (so only write-through can
 * change what it shows); `direct` has MIRROR_READS=false and answers every read from Google.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccountByCli, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import { testDays } from './test-days.ts';
import { callOk } from './tool-calls.ts';

const CLIENT = { clientId: 'mirror-reads.apps.googleusercontent.com', clientSecret: 'mirror-reads-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const STALENESS_S = 2;

const { at, date, timed } = testDays(7);
const SERIES = 'seriesplanning01';
const instanceId = (week: number) => `${SERIES}_${at(1 + 7 * week, 9).replace(/[-:]/g, '')}`;

interface EventOut {
  id: string;
  summary?: string;
  etag?: string;
  start: { dateTime?: string; date?: string };
  [key: string]: unknown;
}
interface Listing {
  events: EventOut[];
  nextPageToken?: string;
  syncedAt?: string;
  errors?: unknown[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('reads of Google calendars from the mirror', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let slow: TestGateway;
  let direct: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  const clients: Client[] = [];
  let viaMirror: Client;
  let viaSlow: Client;
  let viaGoogle: Client;
  const cal: Record<string, string> = {};

  const call = callOk;
  const list = async (client: Client, args: Record<string, unknown>) =>
    (await call(client, 'list_events', { format: 'json', ...args })) as unknown as Listing;
  /** Every page of a listing, as one list. */
  const listAll = async (client: Client, args: Record<string, unknown>) => {
    const events: EventOut[] = [];
    let pageToken: string | undefined;
    let syncedAt: string | undefined;
    do {
      const page = await list(client, { ...args, ...(pageToken === undefined ? {} : { pageToken }) });
      events.push(...page.events);
      syncedAt ??= page.syncedAt;
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return { events, syncedAt };
  };
  const ownToken = () =>
    emulator.admin.issueTokens({ email: ANN, scopes: ['https://www.googleapis.com/auth/calendar'] })
      .access_token as string;
  const listCalls = () => emulator.admin.requests().filter((r) => r.op === 'events.list').length;

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [
        {
          email: ANN,
          timeZone: 'Europe/Berlin',
          events: [
            timed('Planning kickoff', 0, 9, 10, {
              description: 'Roadmap',
              location: 'Room 1',
              colorId: '11',
            }),
            {
              ...timed('Weekly planning', 1, 9, 10, {
                id: SERIES,
                recurrence: ['RRULE:FREQ=WEEKLY;COUNT=6'],
              }),
              start: { dateTime: at(1, 9), timeZone: 'UTC' },
              end: { dateTime: at(1, 10), timeZone: 'UTC' },
            },
            timed('Holiday block', 0, 12, 13, { transparency: 'transparent' }),
            timed('Café Lumière', 2, 12, 13, { location: 'Rue de Rivoli' }),
            { summary: 'Offsite', start: { date: date(3) }, end: { date: date(5) } },
            timed('Zero length', 4, 8, 8),
          ],
          calendars: [
            {
              id: TEAM,
              summary: 'Team',
              events: [timed('Team review', 0, 11, 12), timed('Team standup', 1, 8, 9)],
            },
          ],
        },
      ],
    });
    // Someone edits the series in Google: one week moved, one cancelled.
    const moved = await emulator.editDirectly(ANN, 'PATCH', `/${instanceId(2)}`, {
      start: { dateTime: at(15, 14) },
      end: { dateTime: at(15, 15) },
      summary: 'Weekly planning (moved)',
    });
    expect(moved.status).toBe(200);
    expect((await emulator.editDirectly(ANN, 'DELETE', `/${instanceId(3)}`)).status).toBe(204);

    const env = { ...emulator.env, ...HIGH_RATE_LIMITS };
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: String(STALENESS_S),
      MIRROR_POLL_INTERVAL: '3600',
    });
    slow = await startTestGateway({ ...env, MIRROR_MAX_STALENESS: '3600' }, { db: gw.db });
    direct = await startTestGateway({ ...env, MIRROR_READS: 'false' }, { db: gw.db });
    tenant = await gw.seedTenant('Acme');
    await connectGoogleAccountByCli(gw, emulator, ANN, 'write');
    for (const g of [slow, direct]) {
      g.forgetKeys(tenant.tenantId);
    }
    viaMirror = await connectClient(gw.mcpUrl, tenant.secret);
    viaSlow = await connectClient(slow.mcpUrl, tenant.secret);
    viaGoogle = await connectClient(direct.mcpUrl, tenant.secret);
    clients.push(viaMirror, viaSlow, viaGoogle);
    const listed = await call(viaGoogle, 'list_calendars', {});
    for (const calendar of listed.calendars as { id: string; summary: string; accountEmail: string }[]) {
      cal[calendar.summary === 'Team' ? 'team' : 'ann'] = calendar.id;
    }
    expect(Object.keys(cal).sort()).toEqual(['ann', 'team']);
    // The first read finds no mirror yet: Google answers and the first sync is queued.
    const first = await list(viaMirror, { calendarId: cal.ann });
    expect(first.syncedAt).toBeUndefined();
    // The in-process worker runs that sync.
    const until = Date.now() + 20_000;
    for (const calendarId of [cal.ann, cal.team]) {
      while ((await list(viaMirror, { calendarId })).syncedAt === undefined) {
        if (Date.now() > until) {
          throw new Error('the first sync did not complete within 20 s');
        }
        await sleep(200);
      }
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await slow?.stop();
    await direct?.stop();
    await gw?.stop();
    await emulator?.close();
  });

  /** An unmodified instance's ETag is made by Calgate (Google's are not in the mirror): compared apart. */
  const comparable = (events: EventOut[]) =>
    events.map(({ etag, ...rest }) =>
      rest.id.startsWith(`${SERIES}_`) && rest.recurringEventId ? rest : { ...rest, etag },
    );

  it.each([
    ['a month, instances expanded', { timeMin: at(-1, 0), timeMax: at(30, 0) }],
    ['series as masters', { timeMin: at(-1, 0), timeMax: at(30, 0), singleEvents: false }],
    ['ordered by update', { timeMin: at(-1, 0), timeMax: at(30, 0), orderBy: 'updated' }],
    ['pages of two', { timeMin: at(-1, 0), timeMax: at(30, 0), maxResults: 2 }],
    ['a window cutting the all-day event', { timeMin: at(4, 0), timeMax: at(4, 12) }],
    ['the zero-length event at the window start', { timeMin: at(4, 8), timeMax: at(4, 9) }],
    ['words of the title', { timeMin: at(-1, 0), timeMax: at(60, 0), query: 'planning' }],
    ['without bounds', {}],
  ])('answers %s exactly as Google does', async (_name, args) => {
    const google = await listAll(viaGoogle, { calendarId: cal.ann, ...args });
    const mirrored = await listAll(viaMirror, { calendarId: cal.ann, ...args });
    expect(google.syncedAt).toBeUndefined();
    expect(mirrored.syncedAt).toBeDefined();
    expect(google.events.length).toBeGreaterThan(0);
    // Google leaves the order of masters open, and of events updated in the same millisecond.
    const settle = (events: EventOut[]) =>
      'singleEvents' in args
        ? [...events].sort((a, b) => a.id.localeCompare(b.id))
        : 'orderBy' in args
          ? [...events].sort(
              (a, b) => String(a.updated).localeCompare(String(b.updated)) || a.id.localeCompare(b.id),
            )
          : events;
    expect(comparable(settle(mirrored.events))).toEqual(comparable(settle(google.events)));
  });

  it.each([
    ['a month across both calendars', { timeMin: at(-1, 0), timeMax: at(30, 0) }],
    ['pages of two across both calendars', { timeMin: at(-1, 0), timeMax: at(30, 0), maxResults: 2 }],
    [
      'pages of three, words of titles',
      { timeMin: at(-1, 0), timeMax: at(60, 0), query: 'planning', maxResults: 3 },
    ],
  ])('answers %s exactly as Google does (calendars read together, merged)', async (_name, args) => {
    const google = await listAll(viaGoogle, args);
    const mirrored = await listAll(viaMirror, args);
    expect(mirrored.syncedAt).toBeDefined();
    expect(new Set(google.events.map((event) => event.calendarId)).size).toBe('query' in args ? 1 : 2);
    expect(comparable(mirrored.events)).toEqual(comparable(google.events));
  });

  it('searches both calendars as Google does', async () => {
    const args = { query: 'team', timeMin: at(-1, 0), timeMax: at(60, 0), format: 'json' };
    const google = await call(viaGoogle, 'search_events', args);
    const mirrored = await call(viaMirror, 'search_events', args);
    expect(mirrored.syncedAt).toBeDefined();
    expect((google.events as EventOut[]).map((event) => event.summary)).toEqual([
      'Team review',
      'Team standup',
    ]);
    expect(mirrored.events).toEqual(google.events);
  });

  it('shows the series with its moved week and without its cancelled one', async () => {
    const { events } = await listAll(viaMirror, {
      calendarId: cal.ann,
      timeMin: at(-1, 0),
      timeMax: at(60, 0),
    });
    const weeks = events.filter((event) => event.recurringEventId === SERIES);
    expect(weeks.map((event) => event.summary)).toEqual([
      'Weekly planning',
      'Weekly planning',
      'Weekly planning (moved)',
      'Weekly planning',
      'Weekly planning',
    ]);
    expect(weeks.some((event) => event.id === instanceId(3))).toBe(false);
  });

  it('answers a fresh mirror without asking Google', async () => {
    await list(viaMirror, { calendarId: cal.ann }); // syncs if the bound has passed
    const before = listCalls();
    for (let i = 0; i < 5; i += 1) {
      expect((await list(viaMirror, { calendarId: cal.ann })).syncedAt).toBeDefined();
    }
    // Within the bound every read is local (a sync at most, if the bound passed meanwhile).
    expect(listCalls() - before).toBeLessThanOrEqual(1);
  });

  it('sees changes made in Google once MIRROR_MAX_STALENESS has passed, and says when it synced', async () => {
    const created = await emulator.editDirectly(ANN, 'POST', '', timed('Made in Google', 6, 9, 10));
    const createdId = ((await created.json()) as { id: string }).id;
    expect(
      (await emulator.editDirectly(ANN, 'PATCH', `/${await idOf('Holiday block')}`, { summary: 'Holiday' }))
        .status,
    ).toBe(200);
    const teamReview = await idOf('Team review', cal.team);
    const removed = await fetch(
      `${emulator.url}/calendar/v3/calendars/${encodeURIComponent(TEAM)}/events/${teamReview}`,
      { method: 'DELETE', headers: { authorization: `Bearer ${ownToken()}` } },
    );
    expect(removed.status).toBe(204);
    const changedAt = Date.now();
    await sleep(STALENESS_S * 1000 + 100);
    const ann = await list(viaMirror, { calendarId: cal.ann, timeMin: at(-1, 0), timeMax: at(30, 0) });
    expect(ann.events.map((event) => event.id)).toContain(createdId);
    expect(ann.events.map((event) => event.summary)).toContain('Holiday');
    expect(ann.events.map((event) => event.summary)).not.toContain('Holiday block');
    expect(Date.parse(ann.syncedAt as string)).toBeGreaterThanOrEqual(changedAt - 50);
    const all = await list(viaMirror, { timeMin: at(-1, 0), timeMax: at(30, 0) });
    expect(all.events.map((event) => event.summary)).not.toContain('Team review');
  });

  async function idOf(summary: string, calendarId = cal.ann): Promise<string> {
    const { events } = await listAll(viaGoogle, { calendarId, timeMin: at(-1, 0), timeMax: at(30, 0) });
    const event = events.find((candidate) => candidate.summary === summary);
    expect(event, summary).toBeDefined();
    return (event as EventOut).id;
  }

  it('shows writes made through Calgate at once (write-through), without a sync', async () => {
    const window = { calendarId: cal.ann, timeMin: at(-1, 0), timeMax: at(60, 0) };
    const before = await list(viaSlow, window);
    expect(before.syncedAt).toBeDefined();
    const lists = listCalls();
    const created = await call(viaSlow, 'create_event', {
      calendarId: cal.ann,
      ...timed('Through Calgate', 8, 9, 10),
    });
    const eventId = created.eventId as string;
    const summaries = async () => (await list(viaSlow, window)).events.map((event) => event.summary);
    expect(await summaries()).toContain('Through Calgate');
    await call(viaSlow, 'update_event', {
      calendarId: cal.ann,
      eventId,
      summary: 'Through Calgate, renamed',
    });
    expect(await summaries()).toContain('Through Calgate, renamed');
    await call(viaSlow, 'update_event', {
      calendarId: cal.ann,
      eventId: instanceId(4),
      summary: 'Week five, renamed',
    });
    expect(await summaries()).toContain('Week five, renamed');
    await call(viaSlow, 'delete_event', { calendarId: cal.ann, eventId: instanceId(5) });
    const after = await list(viaSlow, window);
    expect(after.events.map((event) => event.id)).not.toContain(instanceId(5));
    await call(viaSlow, 'delete_event', { calendarId: cal.ann, eventId });
    expect(await summaries()).not.toContain('Through Calgate, renamed');
    // No sync ran: the answers reflect the same sync as before, and Google was never listed.
    expect(after.syncedAt).toBe(before.syncedAt);
    expect(listCalls()).toBe(lists);
    // And they are what Google has.
    const google = await listAll(viaGoogle, window);
    const mirrored = await listAll(viaSlow, window);
    expect(comparable(mirrored.events)).toEqual(comparable(google.events));
  });

  it('serves stale data only within the bound it states: a change made in Google waits for the next sync', async () => {
    const createdAt = Date.now();
    const created = await emulator.editDirectly(ANN, 'POST', '', timed('Unseen yet', 9, 9, 10));
    expect(created.status).toBe(200);
    const stale = await list(viaSlow, { calendarId: cal.ann, timeMin: at(9, 0), timeMax: at(10, 0) });
    expect(stale.events.map((event) => event.summary)).not.toContain('Unseen yet');
    expect(Date.parse(stale.syncedAt as string)).toBeLessThan(createdAt);
    await sleep(STALENESS_S * 1000 + 100);
    const fresh = await list(viaMirror, { calendarId: cal.ann, timeMin: at(9, 0), timeMax: at(10, 0) });
    expect(fresh.events.map((event) => event.summary)).toContain('Unseen yet');
  });

  it('searches the mirror accent-insensitively and by word prefix', async () => {
    for (const query of ['cafe', 'CAFÉ lumi', 'rivoli']) {
      const found = await list(viaMirror, {
        calendarId: cal.ann,
        timeMin: at(-1, 0),
        timeMax: at(30, 0),
        query,
      });
      expect(
        found.events.map((event) => event.summary),
        query,
      ).toEqual(['Café Lumière']);
    }
    const searched = await call(viaMirror, 'search_events', {
      query: 'cafe',
      timeMin: at(-1, 0),
      format: 'json',
    });
    expect((searched.events as EventOut[]).map((event) => event.summary)).toEqual(['Café Lumière']);
    expect(searched.syncedAt).toBeDefined();
  });

  it('never serves a calendar the key may not read, however full its mirror', async () => {
    const { key, secret } = await gw.runtime.keys.create(tenant.tenantId, { name: 'team-less' });
    await gw.db.pool.query(
      `INSERT INTO grants (tenant_id, key_id, calendar_id, can_read, can_write)
       VALUES ($1, $2, $3, true, false)`,
      [tenant.tenantId, key.id, cal.ann],
    );
    const other = await gw.seedTenant('Other');
    const limited = await connectClient(gw.mcpUrl, secret);
    const stranger = await connectClient(gw.mcpUrl, other.secret);
    clients.push(limited, stranger);
    const { rows } = await gw.db.pool.query(
      'SELECT count(*)::int AS n FROM mirror_events WHERE calendar_id = $1',
      [cal.team],
    );
    expect(rows[0].n).toBeGreaterThan(0);
    for (const client of [limited, stranger]) {
      const refused = await client.callTool({ name: 'list_events', arguments: { calendarId: cal.team } });
      expect(refused.isError).toBe(true);
      const everything = await client.callTool({ name: 'list_events', arguments: { format: 'json' } });
      const events = (everything.structuredContent as Listing | undefined)?.events ?? [];
      expect(events.filter((event) => JSON.stringify(event).includes(cal.team as string))).toEqual([]);
      const searched = await client.callTool({
        name: 'search_events',
        arguments: { query: 'team', format: 'json' },
      });
      expect(JSON.stringify(searched)).not.toContain('Team');
    }
  });

  it('books against Google, not the mirror: a slot taken in Google after the last sync is refused', async () => {
    const taken = await emulator.editDirectly(ANN, 'POST', '', timed('Taken in Google', 11, 9, 10));
    expect(taken.status).toBe(200);
    const stale = await list(viaSlow, { calendarId: cal.ann, timeMin: at(11, 0), timeMax: at(12, 0) });
    expect(stale.events).toEqual([]);
    const booked = await viaSlow.callTool({
      name: 'book_slot',
      arguments: { calendarId: cal.ann, start: at(11, 9), end: at(11, 10), summary: 'Interview' },
    });
    expect(booked.isError).toBe(true);
    expect(JSON.stringify(booked.content)).toMatch(/busy|conflict|taken|not free/i);
  });
});
