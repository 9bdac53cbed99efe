/**
 * Every other tool on CalDAV calendars, over MCP (the official SDK client) against real Radicale
 * and Xandikos servers, each outcome read back from the server where it is written there: quick
 * add, batch updates, attendees and replies, availability, search and fetch, rules and
 * timesheets, prompts around events, export (resource and secret feed, also of a subscribed
 * feed), import by URL, and book_slot reading the server afresh while the mirror is stale.
 * Objects are seeded by an independent client (plain PUTs) before the account is connected;
 * MIRROR_MAX_STALENESS is long, so after the first sync only Calgate's own writes reach the mirror.
 */
import { until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { main } from '../src/cli.ts';
import { call as api, sessionFor } from './api-client.ts';
import { caldavEnv, calendarNamed, collectionObjects, connectCaldavAccount } from './caldav-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { type FeedServer, startFeedServer, vcalendar } from './ics-feed-server.ts';
import { startWebhookReceiver } from './scheduler-fixture.ts';
import { testDays } from './test-days.ts';
import { callOk } from './tool-calls.ts';

const { at, date } = testDays(3);
/** `at(days, hours)` as an iCalendar UTC date-time. */
const utc = (days: number, hours: number) => at(days, hours).replace(/[-:]/g, '');
/** Day `days` as an iCalendar DATE. */
const ymd = (days: number) => date(days).replace(/-/g, '');
const BERLIN = 'Europe/Berlin';

interface EventOut {
  id: string;
  summary?: string;
  location?: string;
  start: { dateTime?: string; date?: string };
  attendees?: { email: string; responseStatus?: string }[];
}

/** One object of hand-written VEVENTs (master and overrides share the UID). */
function object(...events: string[][]): string {
  return vcalendar([], events);
}

/** What the independent client writes before the account is connected (the account is `alice`). */
function seeds(): Record<string, string> {
  return {
    'review.ics': object(
      [
        'UID:review@hand',
        `DTSTART;TZID=${BERLIN}:${ymd(0)}T100000`,
        `DTEND;TZID=${BERLIN}:${ymd(0)}T110000`,
        'RRULE:FREQ=WEEKLY;COUNT=4',
        `EXDATE;TZID=${BERLIN}:${ymd(14)}T100000`,
        'SUMMARY:Weekly review',
        'DESCRIPTION:Quarterly numbers and hiring',
      ],
      [
        'UID:review@hand',
        `RECURRENCE-ID;TZID=${BERLIN}:${ymd(7)}T100000`,
        `DTSTART;TZID=${BERLIN}:${ymd(7)}T150000`,
        `DTEND;TZID=${BERLIN}:${ymd(7)}T160000`,
        'SUMMARY:Weekly review (moved)',
      ],
    ),
    'invite.ics': object([
      'UID:budget@hand',
      `DTSTART:${utc(1, 9)}`,
      `DTEND:${utc(1, 10)}`,
      'SUMMARY:Budget meeting',
      'ORGANIZER;CN=Olga:mailto:olga@example.com',
      'ATTENDEE;CN=Olga;ROLE=CHAIR;PARTSTAT=ACCEPTED:mailto:olga@example.com',
      'ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:alice',
    ]),
    'planning.ics': object([
      'UID:planning@hand',
      `DTSTART:${utc(1, 13)}`,
      `DTEND:${utc(1, 14)}`,
      'SUMMARY:Planning with Pat',
      'ATTENDEE;CN=Pat Lee;ROLE=OPT-PARTICIPANT;PARTSTAT=TENTATIVE;X-DESK=4B:mailto:pat@example.com',
      'ATTENDEE;CN=Quinn:mailto:quinn@example.com',
    ]),
    'board.ics': object([
      'UID:board@hand',
      `DTSTART:${utc(-2, 16)}`,
      `DTEND:${utc(-2, 17)}`,
      'SUMMARY:Board prep',
    ]),
    'acme-sync.ics': object([
      'UID:acme-1@hand',
      `DTSTART:${utc(2, 9)}`,
      `DTEND:${utc(2, 10.5)}`,
      'SUMMARY:Acme sync',
    ]),
    // An invitation the account declined: free time, and left out of timesheets.
    'acme-lunch.ics': object([
      'UID:acme-lunch@hand',
      `DTSTART:${utc(2, 11)}`,
      `DTEND:${utc(2, 12)}`,
      'SUMMARY:Acme lunch',
      'ORGANIZER:mailto:olga@example.com',
      'ATTENDEE;PARTSTAT=ACCEPTED:mailto:olga@example.com',
      'ATTENDEE;PARTSTAT=DECLINED:mailto:alice',
    ]),
    'acme-design.ics': object([
      'UID:acme-2@hand',
      `DTSTART:${utc(3, 13)}`,
      `DTEND:${utc(3, 14)}`,
      'SUMMARY:Acme design',
    ]),
    'lab-a.ics': object([
      'UID:lab-a@hand',
      `DTSTART:${utc(2, 13)}`,
      `DTEND:${utc(2, 14)}`,
      'SUMMARY:Lab A',
      'X-LAB:keep me',
    ]),
    'offsite.ics': object([
      'UID:offsite@hand',
      `DTSTART;VALUE=DATE:${ymd(6)}`,
      `DTEND;VALUE=DATE:${ymd(7)}`,
      'SUMMARY:Offsite',
    ]),
    'lab-b.ics': object(['UID:lab-b@hand', `DTSTART:${utc(2, 15)}`, `DTEND:${utc(2, 16)}`, 'SUMMARY:Lab B']),
  };
}

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('every other tool on a CalDAV calendar on %s', (_name, start) => {
  let server: TestCaldavServer;
  let feeds: FeedServer;
  let gw: TestGateway;
  let env: Record<string, string>;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let client: Client;
  let calendarId = '';
  let copyId = '';
  let work = '';
  let copy = '';
  let closeReceiver = async () => {};

  const call = (name: string, args: Record<string, unknown>) => callOk(client, name, args);
  const list = async (timeMin: string, timeMax: string, calendar = calendarId) =>
    (await call('list_events', { calendarId: calendar, timeMin, timeMax, format: 'json', maxResults: 100 }))
      .events as EventOut[];
  const stored = async (path: string) => (await server.raw('GET', path)).text();
  const withUid = async (collection: string, uid: string) =>
    [...(await collectionObjects(server, collection)).values()].filter((text) => text.includes(`UID:${uid}`));

  beforeAll(async () => {
    server = await start();
    work = new URL(`${server.home}work/`).pathname;
    copy = new URL(`${server.home}copy/`).pathname;
    await server.makeCalendar(work, { displayName: 'Work', timeZone: BERLIN });
    await server.makeCalendar(copy, { displayName: 'Copy', timeZone: BERLIN });
    for (const [name, text] of Object.entries(seeds())) {
      await server.seed(`${work}${name}`, text);
    }
    feeds = await startFeedServer();
    env = caldavEnv();
    gw = await startTestGateway({ ...env, WORKER_IN_PROCESS: 'true', MIRROR_MAX_STALENESS: '3600' });
    tenant = await gw.seedTenant('Alice');
    // Xandikos keeps no calendar zone: its calendars take the workspace's, the same here.
    await gw.runtime.tenancy.updateTenant(tenant.tenantId, { timeZone: BERLIN });
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, {
      toolsets: ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'],
      // Seeded events name outside organisers; this test is about CalDAV, not the injection guard.
      hijackPolicy: 'off',
    });
    const connected = await connectCaldavAccount(gw, env, server, tenant);
    // Neither server names an address for the account: Calgate knows it as its username at its
    // server, and the invitations below name it `mailto:alice`, without a domain.
    expect(connected.accountEmail).toBe(`alice@${new URL(server.root).host}`);
    calendarId = calendarNamed(connected, 'Work') as string;
    copyId = calendarNamed(connected, 'Copy') as string;
    expect(calendarId && copyId).toBeTruthy();
    closeReceiver = (await startWebhookReceiver(gw, tenant.tenantId)).close;
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
    // Every answer below comes from the mirror once the first syncs (asked for by a read) are done.
    await list(at(0, 0), at(1, 0));
    await list(at(0, 0), at(1, 0), copyId);
    await until(async () => {
      const { rows } = await gw.db.pool.query(
        'SELECT 1 FROM mirror_sync_state WHERE calendar_id = ANY($1) AND sync_token IS NOT NULL',
        [[calendarId, copyId]],
      );
      return rows.length === 2;
    }, 45_000);
  }, 90_000);

  afterAll(async () => {
    await client?.close();
    await closeReceiver();
    await gw?.stop();
    await feeds?.close();
    await server?.stop();
  });

  it('quick_add_event writes the sentence as an event in the calendar zone on the server', async () => {
    const added = (await call('quick_add_event', {
      calendarId,
      text: `Lunch with Ann ${date(4)} at 12:30 at Cafe Rio`,
    })) as { event: EventOut };
    expect(added.event.summary).toBe('Lunch with Ann');
    const text = await stored(`${work}${added.event.id}.ics`);
    expect(text).toContain('SUMMARY:Lunch with Ann');
    expect(text).toContain(`DTSTART;TZID=${BERLIN}:${ymd(4)}T123000`);
    expect(text).toContain('LOCATION:Cafe Rio');
  });

  it('batch_update_events patches objects another client wrote, keeping what it was not asked to change', async () => {
    const day = await list(at(2, 0), at(3, 0));
    const id = (summary: string) => day.find((e) => e.summary === summary)?.id;
    const out = await call('batch_update_events', {
      calendarId,
      updates: [
        { eventId: id('Lab A'), location: 'North wing' },
        { eventId: id('Lab B'), summary: 'Lab B (cancelled)', transparency: 'transparent' },
      ],
    });
    expect(out).toMatchObject({ succeeded: 2, failed: 0 });
    const a = await stored(`${work}lab-a.ics`);
    expect(a).toContain('LOCATION:North wing');
    expect(a).toContain('SUMMARY:Lab A');
    expect(a).toContain('X-LAB:keep me');
    const b = await stored(`${work}lab-b.ics`);
    expect(b).toContain('SUMMARY:Lab B (cancelled)');
    expect(b).toContain('TRANSP:TRANSPARENT');
  });

  it('manage_attendees adds and removes, keeping the parameters of the attendees it leaves', async () => {
    const planning = (await list(at(1, 13), at(1, 14))).find((e) => e.summary === 'Planning with Pat');
    const out = await call('manage_attendees', {
      calendarId,
      eventId: planning?.id,
      addAttendees: ['rex@example.com'],
      removeAttendees: ['Quinn@example.com'],
    });
    expect(out).toMatchObject({ added: ['rex@example.com'], removed: ['quinn@example.com'] });
    const text = (await stored(`${work}planning.ics`)).replace(/\r\n[ \t]/g, '');
    const attendees = text.split('\r\n').filter((line) => line.startsWith('ATTENDEE'));
    expect(attendees).toHaveLength(2);
    const pat = attendees.find((line) => line.toLowerCase().endsWith('mailto:pat@example.com')) ?? '';
    // Xandikos rewrites objects after a PUT and quotes a CN with a space.
    for (const parameter of [
      /CN="?Pat Lee"?[;:]/,
      /ROLE=OPT-PARTICIPANT/,
      /PARTSTAT=TENTATIVE/,
      /X-DESK=4B/,
    ]) {
      expect(pat).toMatch(parameter);
    }
    expect(attendees.some((line) => line.toLowerCase().endsWith('mailto:rex@example.com'))).toBe(true);
    expect(text.toLowerCase()).not.toContain('quinn');
  });

  it("respond_to_event sets the account's PARTSTAT on an invitation another client wrote", async () => {
    const budget = (await list(at(1, 9), at(1, 10))).find((e) => e.summary === 'Budget meeting');
    const out = await call('respond_to_event', { calendarId, eventId: budget?.id, response: 'tentative' });
    expect(out).toMatchObject({ attendee: 'alice', response: 'tentative' });
    const text = (await stored(`${work}invite.ics`)).replace(/\r\n[ \t]/g, '');
    const lines = text.split('\r\n');
    const mine = lines.find((line) => line.startsWith('ATTENDEE') && line.endsWith('mailto:alice')) ?? '';
    expect(mine).toContain('PARTSTAT=TENTATIVE');
    expect(mine).toContain('RSVP=TRUE');
    const olga = lines.find((line) => line.startsWith('ATTENDEE') && line.endsWith('olga@example.com')) ?? '';
    expect(olga).toContain('PARTSTAT=ACCEPTED');
    expect(olga).toContain('ROLE=CHAIR');
    expect(text).toContain('ORGANIZER;CN=Olga:mailto:olga@example.com');
    const again = (await list(at(1, 9), at(1, 10))).find((e) => e.summary === 'Budget meeting');
    expect(again?.attendees?.find((a) => a.email === 'alice')?.responseStatus).toBe('tentative');
  });

  it('get_availability: busy from the CalDAV events, named only with privacy full', async () => {
    const window = { calendarIds: [calendarId], timeMin: at(2, 8), timeMax: at(2, 12), timeZone: 'UTC' };
    const opaque = (await call('get_availability', window)) as { busy: Record<string, unknown>[] };
    expect(opaque.busy).toEqual([{ start: at(2, 9), end: at(2, 10.5), sourceCount: 0 }]);
    expect(JSON.stringify(opaque)).not.toContain('Acme');
    const full = (await call('get_availability', { ...window, privacy: 'full' })) as {
      busy: { start: string; end: string; sourceCount: number; events?: { summary?: string }[] }[];
    };
    expect(full.busy.map((b) => [b.start, b.end, b.sourceCount, b.events?.map((e) => e.summary)])).toEqual([
      [at(2, 9), at(2, 10.5), 1, ['Acme sync']],
    ]);
  });

  it('search_events, and search then fetch as OpenAI-style connectors call them', async () => {
    const found = (await call('search_events', {
      calendarIds: [calendarId],
      query: 'hiring',
      timeMin: at(0, 0),
      timeMax: at(28, 0),
      format: 'json',
    })) as { events: EventOut[] };
    // The series' occurrences less the EXDATE and the override, whose VEVENT has no description.
    expect(found.events.map((e) => e.summary)).toEqual(['Weekly review', 'Weekly review']);
    const hits = (await call('search', { query: 'hiring' })) as { results: { id: string; title: string }[] };
    expect(hits.results).toHaveLength(1);
    expect(hits.results[0]?.title).toMatch(/^Weekly review \(/);
    const doc = (await call('fetch', { id: hits.results[0]?.id })) as { title: string; text: string };
    expect(doc.title).toBe(hits.results[0]?.title);
    expect(doc.text).toContain('Quarterly numbers and hiring');
  });

  it('rules and timesheets: preview, create and apply a rule, file one event by hand, count the hours', async () => {
    const window = { calendarIds: [calendarId], timeMin: at(2, 0), timeMax: at(4, 0) };
    const preview = (await call('preview_rule', { ...window, query: 'title:acme' })) as {
      matches: { summary: string }[];
    };
    expect(preview.matches.map((m) => m.summary)).toEqual(['Acme sync', 'Acme lunch', 'Acme design']);
    const { project } = (await call('create_project', { name: 'Acme' })) as { project: { id: string } };
    await call('create_rule', { query: 'title:acme', projectId: project.id });
    const applied = await call('apply_rules', window);
    expect(applied).toMatchObject({ occurrences: 5, classified: 3, pending: 2 });
    expect(applied.errors ?? []).toEqual([]);
    const lab = (await list(at(2, 13), at(2, 14))).find((e) => e.summary === 'Lab A') as EventOut;
    await call('classify_event', { calendarId, eventId: lab.id, projectId: project.id });
    const summary = (await call('get_time_summary', { ...window, groupBy: 'project', timeZone: 'UTC' })) as {
      totals: { projectId: string | null; hours: number }[];
      excluded: Record<string, number>;
    };
    // Acme sync, Acme design and Lab A; the Acme lunch the account declined is left out.
    expect(summary.totals.find((t) => t.projectId === project.id)?.hours).toBe(3.5);
    expect(summary.excluded).toMatchObject({ declined: 1 });
  });

  it('schedule_prompt_around_events plans its next run from a CalDAV event', async () => {
    const made = await call('schedule_prompt_around_events', {
      prompt: 'Prepare the board pack',
      query: 'title:"board prep"',
      offsetMinutes: -30,
      calendarIds: [calendarId],
    });
    expect(made.kind).toBe('around_events');
    expect(Date.parse(String(made.nextRun))).toBe(Date.parse(at(-2, 15.5)));
    await call('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  });

  it('exports the calendar as events.ics: a series with its override and EXDATE, imported again the same', async () => {
    const read = await client.readResource({ uri: `calgate://calendars/${calendarId}/events.ics` });
    const text = String((read.contents[0] as { text?: string }).text).replace(/\r\n[ \t]/g, '');
    expect(text).toContain('UID:review@hand');
    expect(text).toContain('RRULE:FREQ=WEEKLY;COUNT=4');
    expect(text).toContain(`EXDATE;TZID=${BERLIN}:${ymd(14)}T100000`);
    expect(text).toContain(`RECURRENCE-ID;TZID=${BERLIN}:${ymd(7)}T100000`);
    expect(text).toContain('SUMMARY:Weekly review (moved)');
    const imported = await call('import_events', { calendarId: copyId, ics: text });
    expect(imported).toMatchObject({ updated: 0, skipped: 0, errors: [] });
    const series = await withUid(copy, 'review@hand');
    expect(series).toHaveLength(1);
    expect(series[0]).toContain(`EXDATE;TZID=${BERLIN}:${ymd(14)}T100000`);
    expect(series[0]).toContain(`RECURRENCE-ID;TZID=${BERLIN}:${ymd(7)}T100000`);
    const shape = (events: EventOut[]) =>
      events.map((e) => [e.summary, Date.parse(e.start.dateTime ?? `${e.start.date}T00:00:00Z`)]);
    expect(shape(await list(at(0, 0), at(28, 0), copyId))).toEqual(shape(await list(at(0, 0), at(28, 0))));
  });

  it('serves a secret feed address for a CalDAV calendar and for a subscribed feed', async () => {
    const owner = await sessionFor(gw, tenant.tenantId);
    const feedOf = async (id: string) => {
      const made = await api(gw, 'POST', `/api/v1/calendars/${id}/feed`, { as: owner });
      expect(made.status).toBe(200);
      const served = await fetch(`${gw.url}${new URL(String(made.body.feed.url)).pathname}`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toMatch(/^text\/calendar/);
      return (await served.text()).replace(/\r\n[ \t]/g, '');
    };
    const text = await feedOf(calendarId);
    expect(text).toContain('X-WR-CALNAME:Work');
    expect(text).toContain('RRULE:FREQ=WEEKLY;COUNT=4');
    expect(text).toContain(`EXDATE;TZID=${BERLIN}:${ymd(14)}T100000`);
    expect(text).toContain('SUMMARY:Weekly review (moved)');
    expect(text).toContain('SUMMARY:Budget meeting');

    feeds.publish('/club.ics', {
      etag: 'club-1',
      body: vcalendar(
        ['X-WR-CALNAME:Chess club'],
        [['UID:club@feed', `DTSTART:${utc(5, 18)}`, `DTEND:${utc(5, 20)}`, 'SUMMARY:Chess night']],
      ),
    });
    let out = '';
    let err = '';
    const code = await main(
      [
        'connect',
        'ics',
        '--tenant',
        tenant.tenantId,
        '--url',
        feeds.url('/club.ics'),
        '--name',
        'Club',
        '--json',
      ],
      { ...env, DATABASE_URL: gw.db.url },
      { out: (t) => (out += t), err: (t) => (err += t) },
    );
    expect(code, err).toBe(0);
    const club = (JSON.parse(out) as { calendars: { id: string }[] }).calendars[0]?.id as string;
    const clubText = await feedOf(club);
    expect(clubText).toContain('X-WR-CALNAME:Club');
    expect(clubText).toContain('UID:club@feed');
    expect(clubText).toContain(`DTSTART:${utc(5, 18)}`);
  });

  it('import_events by URL writes every VEVENT to the server, and importing again adds nothing', async () => {
    feeds.publish('/school.ics', {
      etag: 'school-1',
      body: vcalendar(
        [],
        [
          [
            'UID:school-run@feed',
            `DTSTART;TZID=${BERLIN}:${ymd(8)}T080000`,
            `DTEND;TZID=${BERLIN}:${ymd(8)}T083000`,
            'RRULE:FREQ=DAILY;COUNT=3',
            'SUMMARY:School run',
          ],
          [
            'UID:school-run@feed',
            `RECURRENCE-ID;TZID=${BERLIN}:${ymd(9)}T080000`,
            `DTSTART;TZID=${BERLIN}:${ymd(9)}T090000`,
            `DTEND;TZID=${BERLIN}:${ymd(9)}T093000`,
            'SUMMARY:School run (late start)',
          ],
          ['UID:parents@feed', `DTSTART:${utc(9, 17)}`, `DTEND:${utc(9, 19)}`, 'SUMMARY:Parents evening'],
        ],
      ),
    });
    const url = feeds.url('/school.ics').replace(/^http:/, 'webcal:');
    const first = await call('import_events', { calendarId, url });
    expect(first).toMatchObject({ imported: 2, updated: 0, skipped: 0, errors: [] });
    const series = await withUid(work, 'school-run@feed');
    expect(series).toHaveLength(1);
    expect(series[0]).toContain('RRULE:FREQ=DAILY;COUNT=3');
    expect(series[0]).toContain(`RECURRENCE-ID;TZID=${BERLIN}:${ymd(9)}T080000`);
    expect(await withUid(work, 'parents@feed')).toHaveLength(1);
    const summaries = async () =>
      (await list(at(8, 0), at(11, 0))).map((e) => e.summary).filter((s) => /School|Parents/.test(s ?? ''));
    expect(await summaries()).toEqual([
      'School run',
      'School run (late start)',
      'Parents evening',
      'School run',
    ]);
    const again = await call('import_events', { calendarId, url });
    expect(again).toMatchObject({ imported: 0, errors: [] });
    expect(await withUid(work, 'school-run@feed')).toHaveLength(1);
    expect(await summaries()).toHaveLength(4);
  });

  it('book_slot reads the server afresh: a clash written there just now is refused though the mirror has not synced', async () => {
    // The first sync is done (beforeAll), so listings come from the mirror for the next hour.
    await server.seed(
      `${work}clash.ics`,
      object(['UID:clash@hand', `DTSTART:${utc(5, 10)}`, `DTEND:${utc(5, 11)}`, 'SUMMARY:Added elsewhere']),
    );
    expect((await list(at(5, 0), at(6, 0))).map((e) => e.summary)).not.toContain('Added elsewhere');
    const refused = await client.callTool({
      name: 'book_slot',
      arguments: { calendarId, start: at(5, 10.5), end: at(5, 11), summary: 'Client call' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^Not booked: the slot overlaps the event 'Added elsewhere'/);
    expect(
      [...(await collectionObjects(server, work)).values()].some((t) => t.includes('SUMMARY:Client call')),
    ).toBe(false);
    const ledger = async () =>
      (
        await gw.db.pool.query<{ status: string }>('SELECT status FROM bookings WHERE calendar_id = $1', [
          calendarId,
        ])
      ).rows.map((row) => row.status);
    expect(await ledger()).toEqual([]);
    // Right after the clash the slot books, into the ledger and onto the server.
    const booked = await call('book_slot', {
      calendarId,
      start: at(5, 11),
      end: at(5, 11.5),
      summary: 'Client call',
    });
    expect(await stored(`${work}${booked.eventId}.ics`)).toContain('SUMMARY:Client call');
    expect(await ledger()).toEqual(['confirmed']);
    // Read afresh too, an all-day event covers its day in the calendar's zone (Berlin), not in UTC.
    const early = await client.callTool({
      name: 'book_slot',
      arguments: { calendarId, start: at(5, 23), end: at(5, 23.5), summary: 'Too early' },
    });
    expect(textOf(early)).toMatch(/^Not booked: the slot overlaps the event 'Offsite'/);
    await call('book_slot', { calendarId, start: at(6, 23), end: at(6, 23.5), summary: 'After the offsite' });
    expect(await ledger()).toEqual(['confirmed', 'confirmed']);
  });
});
