/**
 * Subscribed calendar feeds end to end: `calgate connect ics` fetches the feed once and refuses
 * what is no calendar (nothing saved), the subscribed calendar is read by every read tool over MCP
 * (the official SDK client) through the mirror and written by none, and the worker refreshes it in
 * the background: conditional requests (ETag, If-Modified-Since) answered 304 between changes, a
 * changed body visible after the interval, a feed's REFRESH-INTERVAL lengthening it, and a feed
 * that starts failing shown with its error on the accounts page's data.
 */
import { randomBytes } from 'node:crypto';
import { icsEventId } from '@calgate/providers';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { call as api, sessionFor } from './api-client.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { type FeedRefresh, startFeedRefresh, until } from './ics-feed-refresh.ts';
import { type FeedServer, startFeedServer, vcalendar } from './ics-feed-server.ts';

const REFRESH_S = 2;
const DAY = 86_400_000;

/** YYYYMMDD and YYYY-MM-DD of the day `offset` days after a week from now (UTC). */
function day(offset: number): { ical: string; iso: string } {
  const start = new Date(Math.floor(Date.now() / DAY) * DAY + (7 + offset) * DAY);
  const iso = start.toISOString().slice(0, 10);
  return { ical: iso.replaceAll('-', ''), iso };
}

function teamFeed(version: 'v1' | 'v2'): string {
  const events = [
    [
      'UID:standup@feed.example',
      `DTSTART;TZID=Europe/Berlin:${day(0).ical}T090000`,
      `DTEND;TZID=Europe/Berlin:${day(0).ical}T091500`,
      'RRULE:FREQ=DAILY;COUNT=3',
      'SUMMARY:Team standup',
    ],
    [
      'UID:standup@feed.example',
      `RECURRENCE-ID;TZID=Europe/Berlin:${day(1).ical}T090000`,
      `DTSTART;TZID=Europe/Berlin:${day(1).ical}T160000`,
      `DTEND;TZID=Europe/Berlin:${day(1).ical}T161500`,
      'SUMMARY:Team standup (afternoon)',
    ],
    [
      'UID:planning@feed.example',
      `DTSTART:${day(2).ical}T120000Z`,
      `DTEND:${day(2).ical}T140000Z`,
      version === 'v1' ? 'SUMMARY:Quarterly planning' : 'SUMMARY:Quarterly planning (new room)',
      'LOCATION:Room Narwhal',
      'DESCRIPTION:Budget review for the next quarter',
    ],
  ];
  if (version === 'v1') {
    events.push([
      'UID:holiday@feed.example',
      `DTSTART;VALUE=DATE:${day(3).ical}`,
      `DTEND;VALUE=DATE:${day(4).ical}`,
      'SUMMARY:Company holiday',
      'TRANSP:TRANSPARENT',
    ]);
  } else {
    events.push([
      'UID:retro@feed.example',
      `DTSTART:${day(3).ical}T100000Z`,
      'DURATION:PT1H',
      'SUMMARY:Offsite retro',
    ]);
  }
  return vcalendar(['X-WR-CALNAME:Team', 'X-WR-TIMEZONE:Europe/Berlin'], events);
}

interface EventOut {
  id: string;
  summary?: string;
  location?: string;
  start: { dateTime?: string; date?: string };
  recurringEventId?: string;
}

describe('subscribed calendar feeds', () => {
  let feeds: FeedServer;
  let gw: TestGateway;
  let refresh: FeedRefresh;
  let env: Record<string, string>;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let client: Client;
  let calendarId: string;

  const cli = async (args: string[], extra: Record<string, string> = {}) => {
    let out = '';
    let err = '';
    const code = await main(
      [...args, '--json'],
      { ...env, DATABASE_URL: gw.db.url, ...extra },
      { out: (t) => (out += t), err: (t) => (err += t) },
    );
    return { code, out, err };
  };
  const subscribe = (url: string, name: string, extra: Record<string, string> = {}, keys = true) =>
    cli(
      [
        'connect',
        'ics',
        '--tenant',
        tenant.tenantId,
        '--url',
        url,
        '--name',
        name,
        ...(keys ? ['--keys', tenant.keyId] : []),
      ],
      extra,
    );
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  };
  const icsConnections = async () =>
    (await gw.runtime.connections.list(tenant.tenantId)).filter((c) => c.provider === 'ics');
  const state = async (id: string) =>
    (
      await gw.db.pool.query<{
        status: string;
        error: string | null;
        synced_at: Date | null;
        sync_token: string | null;
      }>('SELECT status, error, synced_at, sync_token FROM mirror_sync_state WHERE calendar_id = $1', [id])
    ).rows[0];
  /** One planner pass, as the worker's cron runs it. */
  const plan = () => refresh.plan();
  const due = (id: string) => refresh.due(id);
  const mirrored = async (id: string) =>
    (
      await gw.db.pool.query<{ summary: string | null }>(
        'SELECT summary FROM mirror_events WHERE calendar_id = $1 ORDER BY summary',
        [id],
      )
    ).rows.map((row) => row.summary);

  beforeAll(async () => {
    feeds = await startFeedServer();
    feeds.publish('/team.ics', { body: teamFeed('v1'), etag: 'team-1' });
    feeds.publish('/page.html', { body: '<!doctype html><title>Hello</title>', contentType: 'text/html' });
    env = {
      ...HIGH_RATE_LIMITS,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: '1',
      ICS_REFRESH_INTERVAL: String(REFRESH_S),
    });
    refresh = await startFeedRefresh(gw);
    tenant = await gw.seedTenant('Feeds');
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, {
      toolsets: ['calendar', 'booking', 'search'],
      // Feed text names outside organisers; this test is about feeds, not the injection guard.
      hijackPolicy: 'off',
    });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await refresh?.stop();
    await gw?.stop();
    await feeds?.close();
  });

  it('refuses a bad address, a page that is no calendar, a missing feed and a private address, saving nothing', async () => {
    const refusals: [string, Record<string, string>, RegExp][] = [
      ['not a url', {}, /'not a url' is not a URL; give an http\(s\) or webcal address/],
      ['ftp://files.example/cal.ics', {}, /must be http\(s\) or webcal, not ftp/],
      [feeds.url('/page.html'), {}, /answered, but not with an iCalendar feed/],
      [feeds.url('/missing.ics'), {}, /answered 404: no calendar there/],
      [feeds.url('/team.ics'), { OUTBOUND_ALLOW_PRIVATE: 'false' }, /refused: .*OUTBOUND_ALLOW_PRIVATE=true/],
    ];
    for (const [url, extra, message] of refusals) {
      const result = await subscribe(url, 'Refused', extra);
      expect(result.code, `${url}: ${result.out}`).toBe(1);
      const error = (JSON.parse(result.err) as { error: { message: string } }).error.message;
      expect(error).toMatch(message);
      expect(error).not.toMatch(/\n\s+at /);
    }
    const unknownKey = await cli([
      'connect',
      'ics',
      '--tenant',
      tenant.tenantId,
      '--url',
      feeds.url('/team.ics'),
      '--name',
      'Refused',
      '--keys',
      'key_doesnotexist',
    ]);
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.err).toContain('key_doesnotexist is not a live API key of this workspace');
    const missing = await cli([
      'connect',
      'ics',
      '--tenant',
      tenant.tenantId,
      '--url',
      feeds.url('/team.ics'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--name is required');
    expect(await icsConnections()).toEqual([]);
    const { rows } = await gw.db.pool.query(
      "SELECT c.id FROM calendars c JOIN connections n ON n.id = c.connection_id WHERE n.provider = 'ics'",
    );
    expect(rows).toEqual([]);
  });

  it('subscribes with calgate connect ics and answers like the other connect commands', async () => {
    const result = await subscribe(feeds.url('/team.ics'), 'Team feed');
    expect(result.code, result.err).toBe(0);
    const out = JSON.parse(result.out) as {
      connectionId: string;
      accountEmail: string;
      writable: boolean;
      events: number;
      calendars: { id: string; summary: string; created: boolean }[];
    };
    expect(out.connectionId).toMatch(/^con_/);
    expect(out).toMatchObject({ accountEmail: 'Team feed', writable: false, events: 4 });
    expect(out.calendars).toEqual([expect.objectContaining({ summary: 'Team feed', created: true })]);
    calendarId = out.calendars[0]?.id as string;
    expect(calendarId).toMatch(/^cal_/);
    // Nothing sealed leaks into the answer.
    expect(result.out).not.toContain(feeds.origin);
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
    // The first sync, as the worker's planner queues it for a calendar never synced.
    await plan();
    await until('the first sync', async () => (await state(calendarId))?.synced_at);
    expect(await mirrored(calendarId)).toEqual([
      'Company holiday',
      'Quarterly planning',
      'Team standup',
      'Team standup (afternoon)',
    ]);
  });

  it('reads the subscribed calendar with every read tool', async () => {
    const { calendars } = (await tool('list_calendars', {})) as {
      calendars: { id: string; provider: string; canRead: boolean; canWrite: boolean; timeZone: string }[];
    };
    expect(calendars.find((c) => c.id === calendarId)).toMatchObject({
      provider: 'ics',
      canRead: true,
      canWrite: false,
      timeZone: 'Europe/Berlin',
    });
    const window = { timeMin: `${day(-1).iso}T00:00:00Z`, timeMax: `${day(5).iso}T00:00:00Z` };
    const listed = (await tool('list_events', { calendarId, ...window, format: 'json' })) as {
      events: EventOut[];
      syncedAt?: string;
    };
    expect(listed.events.map((e) => e.summary)).toEqual([
      'Team standup',
      'Team standup (afternoon)',
      'Team standup',
      'Quarterly planning',
      'Company holiday',
    ]);
    expect(listed.syncedAt).toBeDefined();
    const planning = listed.events.find((e) => e.summary === 'Quarterly planning') as EventOut;
    expect(planning.id).toBe(icsEventId('planning@feed.example'));
    const moved = listed.events[1] as EventOut;
    expect(moved.recurringEventId).toBe(icsEventId('standup@feed.example'));

    const got = (await tool('get_event', { calendarId, eventId: planning.id })) as { event: EventOut };
    expect(got.event).toMatchObject({ summary: 'Quarterly planning', location: 'Room Narwhal' });
    const instance = (await tool('get_event', { calendarId, eventId: moved.id })) as { event: EventOut };
    expect(instance.event.summary).toBe('Team standup (afternoon)');

    const found = (await tool('search_events', {
      query: 'Narwhal',
      calendarIds: [calendarId],
      format: 'json',
    })) as {
      events: EventOut[];
    };
    expect(found.events.map((e) => e.summary)).toEqual(['Quarterly planning']);

    const busyWindow = {
      timeMin: `${day(2).iso}T11:00:00Z`,
      timeMax: `${day(3).iso}T23:00:00Z`,
      timeZone: 'UTC',
    };
    const availability = (await tool('get_availability', { calendarIds: [calendarId], ...busyWindow })) as {
      busy: { start: string; end: string }[];
    };
    // The planning meeting is busy; the transparent all-day holiday is not.
    expect(availability.busy.map((b) => [Date.parse(b.start), Date.parse(b.end)])).toEqual([
      [Date.parse(`${day(2).iso}T12:00:00Z`), Date.parse(`${day(2).iso}T14:00:00Z`)],
    ]);
    const slots = (await tool('find_free_slots', {
      calendarIds: [calendarId],
      timeMin: `${day(2).iso}T11:00:00Z`,
      timeMax: `${day(2).iso}T15:00:00Z`,
      timeZone: 'UTC',
      minDurationMinutes: 30,
    })) as { slots: { start: string; end: string }[]; syncedAt?: string };
    // From the mirror (which says when it synced): a feed's copy hides nothing, unlike a Google reader's.
    expect(slots.syncedAt).toBeDefined();
    expect(slots.slots.map((s) => [Date.parse(s.start), Date.parse(s.end)])).toEqual([
      [Date.parse(`${day(2).iso}T11:00:00Z`), Date.parse(`${day(2).iso}T12:00:00Z`)],
      [Date.parse(`${day(2).iso}T14:00:00Z`), Date.parse(`${day(2).iso}T15:00:00Z`)],
    ]);

    const searched = (await tool('search', { query: 'Quarterly planning' })) as {
      results: { id: string; title: string }[];
    };
    const hit = searched.results.find((r) => r.title.startsWith('Quarterly planning'));
    expect(hit).toBeDefined();
    const fetched = (await tool('fetch', { id: hit?.id as string })) as {
      text: string;
      metadata: { calendar: string };
    };
    expect(fetched.text).toContain('Budget review for the next quarter');
  });

  it('is out of reach of keys not named in --keys and of other tenants, answered as for no calendar', async () => {
    const bystander = await gw.runtime.keys.create(tenant.tenantId, { name: 'bystander' });
    const stranger = await gw.seedTenant('Strangers');
    const fake = `cal_${'x'.repeat(calendarId.length - 4)}`;
    const planning = icsEventId('planning@feed.example');
    for (const secret of [bystander.secret, stranger.secret]) {
      const other = await connectClient(gw.mcpUrl, secret);
      try {
        for (const [name, args] of [
          ['list_events', { calendarId }],
          ['get_event', { calendarId, eventId: planning }],
        ] as const) {
          const real = await other.callTool({ name, arguments: args });
          const none = await other.callTool({ name, arguments: { ...args, calendarId: fake } });
          expect(real.isError, textOf(real)).toBe(true);
          expect(textOf(real).replaceAll(calendarId, fake)).toBe(textOf(none));
          expect(textOf(real)).not.toContain('Team feed');
        }
        const found = await other.callTool({ name: 'search_events', arguments: { query: 'Narwhal' } });
        expect(JSON.stringify(found)).not.toContain('Quarterly planning');
      } finally {
        await other.close();
      }
    }
  });

  it('refuses every write, even with a write grant, and never writes to the feed', async () => {
    await gw.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    const before = feeds.requests('/team.ics').length;
    const planning = icsEventId('planning@feed.example');
    const attempts: [string, Record<string, unknown>][] = [
      [
        'create_event',
        {
          calendarId,
          summary: 'Sneaky',
          start: { dateTime: `${day(2).iso}T16:00:00Z` },
          end: { dateTime: `${day(2).iso}T17:00:00Z` },
        },
      ],
      ['update_event', { calendarId, eventId: planning, summary: 'Renamed' }],
      ['delete_event', { calendarId, eventId: planning }],
      ['create_calendar', { summary: 'Beside the feed', onAccountOf: calendarId }],
    ];
    for (const [name, args] of attempts) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${textOf(result)}`).toBe(true);
      expect(textOf(result)).toContain(
        'is a subscribed iCalendar feed and cannot be changed through Calgate',
      );
    }
    const { calendars } = (await tool('list_calendars', {})) as {
      calendars: { id: string; canWrite: boolean }[];
    };
    expect(calendars.find((c) => c.id === calendarId)?.canWrite).toBe(false);
    expect(await mirrored(calendarId)).toContain('Quarterly planning');
    expect(
      feeds
        .requests('/team.ics')
        .slice(before)
        .every((r) => r.status === 200 || r.status === 304),
    ).toBe(true);
  });

  it('refreshes in the background: 304 while unchanged, the new body after the interval', async () => {
    const initial = await state(calendarId);
    expect(JSON.parse(initial?.sync_token ?? '{}')).toMatchObject({ etag: '"team-1"' });
    const ok = feeds.count('/team.ics', 200);
    // Within the interval the feed is not due, and a planner pass asks nothing.
    await plan();
    // Past the interval: due, asked with its ETag, answered 304, nothing changes.
    await until('the feed to be due', () => due(calendarId), (REFRESH_S + 3) * 1000);
    const notModified = feeds.count('/team.ics', 304);
    await plan();
    await until('a 304', async () => feeds.count('/team.ics', 304) > notModified);
    const asked = feeds.requests('/team.ics').at(-1);
    expect(asked?.headers['if-none-match']).toBe('"team-1"');
    expect(feeds.count('/team.ics', 200)).toBe(ok);
    await until('the 304 to be recorded', async () => !(await due(calendarId)));

    // The feed changes; the next refresh after the interval fetches the body once and syncs it.
    feeds.update('/team.ics', { body: teamFeed('v2'), etag: 'team-2' });
    await until('the feed to be due again', () => due(calendarId), (REFRESH_S + 3) * 1000);
    await plan();
    await until('the change in the mirror', async () =>
      (await mirrored(calendarId)).includes('Offsite retro'),
    );
    expect(feeds.count('/team.ics', 200)).toBe(ok + 1);
    expect(await mirrored(calendarId)).toEqual([
      'Offsite retro',
      'Quarterly planning (new room)',
      'Team standup',
      'Team standup (afternoon)',
    ]);
    const listed = (await tool('list_events', {
      calendarId,
      timeMin: `${day(-1).iso}T00:00:00Z`,
      timeMax: `${day(5).iso}T00:00:00Z`,
      format: 'json',
    })) as { events: EventOut[] };
    expect(listed.events.map((e) => e.summary)).toEqual([
      'Team standup',
      'Team standup (afternoon)',
      'Team standup',
      'Quarterly planning (new room)',
      'Offsite retro',
    ]);
  }, 60_000);

  it("lengthens the interval to the feed's REFRESH-INTERVAL, asking with If-Modified-Since", async () => {
    const lastModified = new Date(Date.now() - 3_600_000);
    feeds.publish('/holidays.ics', {
      body: vcalendar(
        ['REFRESH-INTERVAL;VALUE=DURATION:PT6S'],
        [['UID:new-year@feed.example', `DTSTART;VALUE=DATE:${day(1).ical}`, 'SUMMARY:Bank holiday']],
      ),
      lastModified,
    });
    const result = await subscribe(feeds.url('/holidays.ics'), 'Holidays');
    expect(result.code, result.err).toBe(0);
    const holidays = (JSON.parse(result.out) as { calendars: { id: string }[] }).calendars[0]?.id as string;
    await plan();
    const synced = await until('the first sync', async () => (await state(holidays))?.synced_at);
    const cursor = JSON.parse((await state(holidays))?.sync_token ?? '{}') as {
      refreshAfter: number;
      lastModified: string;
    };
    expect(cursor.lastModified).toBe(lastModified.toUTCString());
    // Six seconds, not ICS_REFRESH_INTERVAL's two.
    expect(cursor.refreshAfter - synced.getTime()).toBeGreaterThanOrEqual(5_500);
    const asked = feeds.requests('/holidays.ics').length;
    await new Promise((resolve) => setTimeout(resolve, (REFRESH_S + 1) * 1000));
    expect(await due(holidays)).toBe(false);
    await plan();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(feeds.requests('/holidays.ics').length).toBe(asked);
    await until('the feed to be due', () => due(holidays), 10_000);
    await plan();
    await until('a 304', async () => feeds.count('/holidays.ics', 304) > 0);
    expect(feeds.requests('/holidays.ics').at(-1)?.headers['if-modified-since']).toBe(
      lastModified.toUTCString(),
    );
  }, 60_000);

  it('subscribing again under the same name keeps the calendar and reads the new address from the start', async () => {
    feeds.publish('/holidays-uk.ics', {
      body: vcalendar(
        [],
        [['UID:boxing@feed.example', `DTSTART;VALUE=DATE:${day(2).ical}`, 'SUMMARY:Boxing Day']],
      ),
      etag: 'uk-1',
    });
    const before = (await icsConnections()).find((c) => c.accountEmail === 'Holidays');
    const again = await subscribe(feeds.url('/holidays-uk.ics'), 'Holidays');
    expect(again.code, again.err).toBe(0);
    const out = JSON.parse(again.out) as {
      connectionId: string;
      reconnected: boolean;
      calendars: { id: string }[];
    };
    expect(out).toMatchObject({ connectionId: before?.id, reconnected: true });
    const holidays = out.calendars[0]?.id as string;
    expect(await mirrored(holidays)).toEqual([]);
    await plan();
    await until('the new feed in the mirror', async () => (await mirrored(holidays)).includes('Boxing Day'));
    expect(await mirrored(holidays)).toEqual(['Boxing Day']);
    expect(
      feeds.requests('/holidays-uk.ics').every((r) => r.headers['if-modified-since'] === undefined),
    ).toBe(true);
  });

  it('records a failing refresh and shows it with the connection on the accounts page', async () => {
    feeds.publish('/flaky.ics', {
      body: vcalendar([], [['UID:one@feed.example', `DTSTART:${day(1).ical}T100000Z`, 'SUMMARY:One']]),
      etag: 'flaky-1',
    });
    const result = await subscribe(feeds.url('/flaky.ics'), 'Flaky feed');
    expect(result.code, result.err).toBe(0);
    const flaky = (JSON.parse(result.out) as { calendars: { id: string }[] }).calendars[0]?.id as string;
    await plan();
    await until('the first sync', async () => (await state(flaky))?.synced_at);
    feeds.update('/flaky.ics', { status: 404 });
    await until('the feed to be due', () => due(flaky), (REFRESH_S + 3) * 1000);
    await plan();
    const failed = await until('the failure', async () => {
      const now = await state(flaky);
      return now?.status === 'error' ? now : undefined;
    });
    expect(failed.error).toMatch(/answered 404: no calendar there/);
    // Reads say the same, rather than answering from an outdated copy.
    gw.forgetKeys(tenant.tenantId);
    const read = await client.callTool({
      name: 'list_events',
      arguments: {
        calendarId: flaky,
        timeMin: `${day(0).iso}T00:00:00Z`,
        timeMax: `${day(3).iso}T00:00:00Z`,
      },
    });
    expect(read.isError, textOf(read)).toBe(true);
    expect(textOf(read)).toMatch(/answered 404: no calendar there/);
    const owner = await sessionFor(gw, tenant.tenantId);
    const { status, body } = await api(gw, 'GET', '/api/v1/connections', { as: owner });
    expect(status).toBe(200);
    const connection = (
      body.connections as {
        provider: string;
        accountEmail: string;
        writable: boolean;
        calendars: { id: string; syncError: string | null }[];
      }[]
    ).find((c) => c.accountEmail === 'Flaky feed');
    expect(connection).toMatchObject({ provider: 'ics', writable: false });
    expect(connection?.calendars[0]?.syncError).toMatch(/answered 404: no calendar there/);
  }, 60_000);

  it('removes a subscription like any account: its calendar, grants and mirror go', async () => {
    const [team] = (await icsConnections()).filter((c) => c.accountEmail === 'Team feed');
    expect(team).toBeDefined();
    await gw.runtime.google.disconnect(tenant.tenantId, team?.id as string);
    const { rows } = await gw.db.pool.query('SELECT 1 FROM calendars WHERE id = $1', [calendarId]);
    expect(rows).toEqual([]);
    expect(await mirrored(calendarId)).toEqual([]);
    gw.forgetKeys(tenant.tenantId);
    const result = await client.callTool({ name: 'list_events', arguments: { calendarId } });
    expect(result.isError).toBe(true);
  });
});
