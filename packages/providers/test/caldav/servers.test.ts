/**
 * The CalDAV client and the iCalendar model against real servers: Radicale and Xandikos, each
 * started once for this file on free loopback ports, seeded by plain HTTP with hand-written
 * iCalendar text.
 */
import { CalgateError } from '@calgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CaldavClient,
  deleteInstanceIcs,
  eventsOfObjects,
  newEventIcs,
  patchEventIcs,
  readWindow,
} from '../../src/caldav/index.ts';
import { ics, startRadicale, startRedirector, startXandikos, type TestCaldavServer } from './servers.ts';

const WEEKLY = ics(
  'BEGIN:VEVENT',
  'UID:weekly-1@example.com',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;TZID=Europe/Berlin:20260105T090000',
  'DTEND;TZID=Europe/Berlin:20260105T100000',
  'SUMMARY:Standup',
  'RRULE:FREQ=WEEKLY;COUNT=5',
  'EXDATE;TZID=Europe/Berlin:20260126T090000',
  'ORGANIZER;CN=Ann:mailto:ann@example.com',
  'ATTENDEE;CN=Bo;PARTSTAT=ACCEPTED;X-KEEP=1:mailto:bo@example.com',
  'X-APP-PROP:kept',
  'BEGIN:VALARM',
  'ACTION:DISPLAY',
  'TRIGGER:-PT5M',
  'DESCRIPTION:soon',
  'END:VALARM',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:weekly-1@example.com',
  'DTSTAMP:20260101T000000Z',
  'RECURRENCE-ID;TZID=Europe/Berlin:20260112T090000',
  'DTSTART;TZID=Europe/Berlin:20260114T150000',
  'DTEND;TZID=Europe/Berlin:20260114T160000',
  'SUMMARY:Standup (Wednesday)',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:weekly-1@example.com',
  'DTSTAMP:20260101T000000Z',
  'RECURRENCE-ID;TZID=Europe/Berlin:20260119T090000',
  'DTSTART;TZID=Europe/Berlin:20260119T090000',
  'DTEND;TZID=Europe/Berlin:20260119T100000',
  'STATUS:CANCELLED',
  'END:VEVENT',
);

/** 23:30 floating on 9 July, read in Auckland: 11:30Z, but 23:30Z to a server that reads it as UTC. */
const FLOATING = ics(
  'BEGIN:VEVENT',
  'UID:floating-1',
  'DTSTAMP:20260101T000000Z',
  'DTSTART:20260709T233000',
  'DURATION:PT20M',
  'SUMMARY:Late call',
  'END:VEVENT',
);

const ALL_DAY = ics(
  'BEGIN:VEVENT',
  'UID:trip-1',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;VALUE=DATE:20260709',
  'DTEND;VALUE=DATE:20260712',
  'SUMMARY:Trip',
  'END:VEVENT',
);

const servers: [string, () => Promise<TestCaldavServer>][] = [
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
];

describe.each(servers)('%s', (_name, start) => {
  let server: TestCaldavServer;
  let client: CaldavClient;
  let work: string;
  let zoned: string;
  const previous = process.env.OUTBOUND_ALLOW_PRIVATE;

  beforeAll(async () => {
    process.env.OUTBOUND_ALLOW_PRIVATE = 'true';
    server = await start();
    work = `${server.home}work/`;
    zoned = `${server.home}auckland/`;
    await server.makeCalendar(new URL(work).pathname, { displayName: 'Work', color: '#3366ffff' });
    await server.makeCalendar(new URL(zoned).pathname, {
      displayName: 'Auckland',
      timeZone: 'Pacific/Auckland',
    });
    await server.seed(`${new URL(work).pathname}standup.ics`, WEEKLY);
    await server.seed(`${new URL(zoned).pathname}floating.ics`, FLOATING);
    await server.seed(`${new URL(zoned).pathname}trip.ics`, ALL_DAY);
    client = new CaldavClient({
      credentials: { username: server.username, password: server.password },
      policy: { allowPrivate: process.env.OUTBOUND_ALLOW_PRIVATE === 'true' },
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (previous === undefined) {
      delete process.env.OUTBOUND_ALLOW_PRIVATE;
    } else {
      process.env.OUTBOUND_ALLOW_PRIVATE = previous;
    }
  });

  it('discovers the calendars from the root, /.well-known/caldav, the principal and a calendar URL', async () => {
    const fromRoot = await client.discover(server.root);
    const names = fromRoot.calendars.map((c) => c.displayName);
    expect(names).toEqual(expect.arrayContaining(['Work', 'Auckland']));
    const workCalendar = fromRoot.calendars.find((c) => c.displayName === 'Work');
    expect(workCalendar).toMatchObject({ url: work, color: '#3366ff', writable: true });
    expect(fromRoot.principalUrl).toBe(`${server.root}alice/`);

    const fromWellKnown = await client.discover(`${server.root}.well-known/caldav`);
    expect(fromWellKnown.calendars.map((c) => c.url).sort()).toEqual(
      fromRoot.calendars.map((c) => c.url).sort(),
    );
    const fromPrincipal = await client.discover(`${server.root}alice/`);
    expect(fromPrincipal.calendars.map((c) => c.url).sort()).toEqual(
      fromRoot.calendars.map((c) => c.url).sort(),
    );
    const fromCalendar = await client.discover(work);
    expect(fromCalendar.calendars.map((c) => [c.url, c.displayName])).toEqual([[work, 'Work']]);
  });

  it('follows redirects to another host (iCloud partitions) and keeps talking to it', async () => {
    const front = await startRedirector(server.root);
    try {
      const account = await client.discover(front.url);
      expect(account.calendars.map((c) => c.url)).toContain(work);
      const wellKnown = await client.discover(`${front.url}.well-known/caldav`);
      expect(wellKnown.calendars.map((c) => c.url)).toContain(work);
    } finally {
      await front.stop();
    }
  });

  it('answers a wrong password with needs_reauth, and refuses loopback without OUTBOUND_ALLOW_PRIVATE', async () => {
    const wrong = new CaldavClient({
      credentials: { username: server.username, password: `${server.password}x` },
      policy: { allowPrivate: true },
    });
    const failure = await wrong.discover(server.root).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CalgateError);
    expect((failure as CalgateError).code).toBe('needs_reauth');
    expect((failure as CalgateError).message).not.toContain(server.password);

    const strict = new CaldavClient({
      credentials: { username: server.username, password: server.password },
      policy: { allowPrivate: false },
    });
    const refused = await strict.discover(server.root).catch((e: unknown) => e);
    expect((refused as CalgateError).code).toBe('permission_denied');
    expect((refused as CalgateError).message).toContain('OUTBOUND_ALLOW_PRIVATE=true');
  });

  it('lists a window with overrides, EXDATE and cancelled overrides applied by Calgate', async () => {
    const { events } = await readWindow(
      client,
      work,
      'Europe/Berlin',
      Date.parse('2026-01-01T00:00:00Z'),
      Date.parse('2026-02-15T00:00:00Z'),
    );
    expect(events.map((e) => [e.event.summary, e.event.start.dateTime])).toEqual([
      ['Standup', '2026-01-05T09:00:00+01:00'],
      ['Standup (Wednesday)', '2026-01-14T15:00:00+01:00'],
      // 19 Jan cancelled, 26 Jan excluded; COUNT=5 counted them, so 2 Feb is the last.
      ['Standup', '2026-02-02T09:00:00+01:00'],
    ]);
    expect(events[0]?.href).toBe(`${new URL(work).pathname}standup.ics`);
  });

  it('queries wider than the window and filters floating and all-day times in the calendar zone', async () => {
    // 9 July in Auckland.
    const from = Date.parse('2026-07-09T00:00:00+12:00');
    const to = Date.parse('2026-07-10T00:00:00+12:00');
    const { events } = await readWindow(client, zoned, 'Pacific/Auckland', from, to);
    expect(events.map((e) => [e.event.summary, e.event.start.dateTime ?? e.event.start.date])).toEqual([
      ['Trip', '2026-07-09'],
      ['Late call', '2026-07-09T23:30:00+12:00'],
    ]);
    // The trip ends at Auckland's midnight of 12 July: a window from then on misses it.
    const { events: after } = await readWindow(
      client,
      zoned,
      'Pacific/Auckland',
      Date.parse('2026-07-12T00:00:00+12:00'),
      Date.parse('2026-07-13T00:00:00+12:00'),
    );
    expect(after).toEqual([]);
  });

  it('reads the zones objects carry as the server stores them: Windows names, custom VTIMEZONE rules, Etc/UTC', async () => {
    const path = `${server.home}zones/`;
    const base = new URL(path).pathname;
    await server.makeCalendar(base, { displayName: 'Zones' });
    await server.seed(
      `${base}windows.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:win-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Tokyo Standard Time:20260710T090000',
        'DTEND;TZID=Tokyo Standard Time:20260710T100000',
        'SUMMARY:Windows zone',
        'END:VEVENT',
      ),
    );
    await server.seed(
      `${base}custom.ics`,
      ics(
        'BEGIN:VTIMEZONE',
        'TZID:Office Time',
        'BEGIN:STANDARD',
        'DTSTART:19701101T030000',
        'TZOFFSETFROM:+0130',
        'TZOFFSETTO:+0030',
        'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
        'END:STANDARD',
        'BEGIN:DAYLIGHT',
        'DTSTART:19700405T020000',
        'TZOFFSETFROM:+0030',
        'TZOFFSETTO:+0130',
        'RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU',
        'END:DAYLIGHT',
        'END:VTIMEZONE',
        'BEGIN:VEVENT',
        'UID:custom-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Office Time:20260710T090000',
        'DTEND;TZID=Office Time:20260710T100000',
        'SUMMARY:Custom zone',
        'END:VEVENT',
      ),
    );
    await server.seed(
      `${base}etc.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:etc-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Etc/UTC:20260710T090000',
        'DTEND;TZID=Etc/UTC:20260710T100000',
        'SUMMARY:Etc zone',
        'END:VEVENT',
      ),
    );
    const { events } = await readWindow(
      client,
      path,
      'UTC',
      Date.parse('2026-07-10T00:00:00Z'),
      Date.parse('2026-07-11T00:00:00Z'),
    );
    expect(events.map((e) => [e.event.summary, e.event.start.dateTime])).toEqual([
      ['Windows zone', '2026-07-10T09:00:00+09:00'],
      ['Custom zone', '2026-07-10T09:00:00+01:30'],
      ['Etc zone', '2026-07-10T09:00:00Z'],
    ]);
  });

  it('multigets objects by the hrefs the server gave', async () => {
    const listed = await client.calendarQuery(zoned);
    const hrefs = listed.map((o) => o.href).sort();
    expect(hrefs).toEqual([`${new URL(zoned).pathname}floating.ics`, `${new URL(zoned).pathname}trip.ics`]);
    const got = await client.multiget(zoned, hrefs);
    expect(got.map((o) => o.href).sort()).toEqual(hrefs);
    expect(
      eventsOfObjects(got, 'Pacific/Auckland', undefined, undefined)
        .events.map((e) => e.event.summary)
        .sort(),
    ).toEqual(['Late call', 'Trip']);
  });

  it('expands series that began long before the window, and leaves out an object it cannot expand, naming it', async () => {
    const path = `${server.home}heavy/`;
    await server.makeCalendar(new URL(path).pathname, { displayName: 'Heavy' });
    await server.seed(
      `${new URL(path).pathname}huge.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:huge-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:19900101T090000Z',
        'RRULE:FREQ=DAILY;COUNT=50000',
        'SUMMARY:Forever',
        'END:VEVENT',
      ),
    );
    await server.seed(`${new URL(path).pathname}trip.ics`, ALL_DAY);
    // A series that began years before the window (Xandikos's time-range filter misses it).
    await server.seed(
      `${new URL(path).pathname}old.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:old-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Europe/Berlin:20190704T090000',
        'DURATION:PT1H',
        'RRULE:FREQ=YEARLY',
        'SUMMARY:Anniversary',
        'END:VEVENT',
      ),
    );
    const read = await readWindow(
      client,
      path,
      'UTC',
      Date.parse('2026-07-01T00:00:00Z'),
      Date.parse('2026-08-01T00:00:00Z'),
    );
    expect(read.events.map((e) => [e.event.summary, e.event.start.dateTime ?? e.event.start.date])).toEqual([
      ['Anniversary', '2026-07-04T09:00:00+02:00'],
      ['Trip', '2026-07-09'],
    ]);
    expect(read.skipped).toEqual([
      {
        href: `${new URL(path).pathname}huge.ics`,
        reason: expect.stringContaining('more than 10000 instances'),
      },
    ]);
  });

  it('syncs with sync-collection tokens, and says when a token is no longer valid', async () => {
    const path = `${server.home}sync/`;
    await server.makeCalendar(new URL(path).pathname, { displayName: 'Sync' });
    await server.seed(`${new URL(path).pathname}a.ics`, FLOATING);
    const first = await client.syncCollection(path, undefined);
    if (first.kind !== 'changes') {
      throw new Error('expected changes');
    }
    expect(first.changed.map((c) => c.href)).toEqual([`${new URL(path).pathname}a.ics`]);
    expect(first.token).toBeDefined();

    await server.seed(`${new URL(path).pathname}b.ics`, ALL_DAY);
    await server.raw('DELETE', `${new URL(path).pathname}a.ics`);
    const next = await client.syncCollection(path, first.token);
    if (next.kind !== 'changes') {
      throw new Error('expected changes');
    }
    expect(next.changed.map((c) => c.href)).toEqual([`${new URL(path).pathname}b.ics`]);
    expect(next.removed).toEqual([`${new URL(path).pathname}a.ics`]);
    expect(next.token).not.toBe(first.token);

    const quiet = await client.syncCollection(path, next.token);
    expect(quiet).toMatchObject({ kind: 'changes', changed: [], removed: [] });

    const stale = await client.syncCollection(path, `${next.token}-no-such-token`);
    expect(stale).toEqual({ kind: 'token-invalid' });
  });

  it('falls back to getctag and ETags: the ctag moves on a change and ETags say which object', async () => {
    const path = `${server.home}ctag/`;
    await server.makeCalendar(new URL(path).pathname, { displayName: 'Ctag' });
    await server.seed(`${new URL(path).pathname}x.ics`, FLOATING);
    const before = await client.collectionState(path);
    const etagsBefore = await client.listEtags(path);
    expect(before.ctag).toBeDefined();
    expect(etagsBefore.map((e) => e.href)).toEqual([`${new URL(path).pathname}x.ics`]);
    await server.seed(`${new URL(path).pathname}x.ics`, FLOATING.replace('Late call', 'Later call'));
    const after = await client.collectionState(path);
    const etagsAfter = await client.listEtags(path);
    expect(after.ctag).not.toBe(before.ctag);
    expect(etagsAfter[0]?.etag).not.toBe(etagsBefore[0]?.etag);
  });

  it('creates under a name of its own with If-None-Match, then patches under If-Match keeping what it was not asked to change', async () => {
    const text = newEventIcs(
      {
        summary: 'Planning',
        start: { dateTime: '2026-03-02T10:00:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-03-02T11:00:00', timeZone: 'Europe/Berlin' },
      },
      'planning-uid@calgate',
      { calendarZone: 'Europe/Berlin' },
    );
    const created = await client.create(work, text);
    expect(created.href).not.toContain('planning-uid');
    expect(created.etag).toBeDefined();
    expect(created.data).toContain('DTSTART;TZID=Europe/Berlin:20260302T100000');
    expect(created.data).toContain('BEGIN:VTIMEZONE');
    // What create answers is the server's copy: its ETag is the one a read gives.
    expect((await client.get(created.href, work)).etag).toBe(created.etag);

    const standup = `${new URL(work).pathname}standup.ics`;
    const updated = await client.update(
      standup,
      work,
      (data) => patchEventIcs(data, undefined, { location: 'Room 7' }, { calendarZone: 'Europe/Berlin' }),
      { label: 'Standup' },
    );
    expect(updated.data).toContain('LOCATION:Room 7');
    for (const kept of [
      'ORGANIZER;CN=Ann:mailto:ann@example.com',
      'X-KEEP=1',
      'X-APP-PROP:kept',
      'TRIGGER:-PT5M',
    ]) {
      expect(updated.data.replace(/\r\n /g, '')).toContain(kept);
    }
  });

  it('on 412 re-reads and re-applies once, keeping the change made elsewhere; twice is a conflict naming the event', async () => {
    const path = `${new URL(work).pathname}race.ics`;
    await server.seed(
      path,
      ics(
        'BEGIN:VEVENT',
        'UID:race-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260401T090000Z',
        'DTEND:20260401T100000Z',
        'SUMMARY:Race',
        'END:VEVENT',
      ),
    );
    const stale = await client.get(path, work);
    // Someone else edits the event on the server.
    const elsewhere = stale.data.replace('SUMMARY:Race', 'SUMMARY:Race\r\nDESCRIPTION:edited elsewhere');
    await server.seed(path, elsewhere);
    const etag = stale.etag ?? '';
    const saved = await client.update(
      path,
      work,
      (data) => patchEventIcs(data, undefined, { location: 'Track' }, { calendarZone: 'UTC' }),
      { label: 'Race', known: { etag, data: stale.data } },
    );
    expect(saved.data).toContain('LOCATION:Track');
    expect(saved.data).toContain('DESCRIPTION:edited elsewhere');

    let round = 0;
    const failure = await client
      .update(
        path,
        work,
        async (data) => {
          round += 1;
          // Another writer gets in before every save.
          const current = await client.get(path, work);
          await server.seed(path, current.data.replace(/SUMMARY:[^\r]*/, `SUMMARY:Race ${round}`));
          return patchEventIcs(data, undefined, { location: `Lane ${round}` }, { calendarZone: 'UTC' });
        },
        { label: 'Race' },
      )
      .catch((e: unknown) => e);
    expect(round).toBe(2);
    expect((failure as CalgateError).code).toBe('conflict');
    expect((failure as CalgateError).message).toContain('"Race"');
  });

  it('edits one instance as an override in the same resource and deletes one with EXDATE', async () => {
    const path = `${new URL(work).pathname}series.ics`;
    await server.seed(
      path,
      ics(
        'BEGIN:VEVENT',
        'UID:series-1',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Europe/Berlin:20260601T080000',
        'DTEND;TZID=Europe/Berlin:20260601T083000',
        'SUMMARY:Gym',
        'RRULE:FREQ=DAILY;COUNT=3',
        'END:VEVENT',
      ),
    );
    const context = { calendarZone: 'Europe/Berlin' };
    await client.update(
      path,
      work,
      (data) =>
        patchEventIcs(
          data,
          '20260602T060000Z',
          { summary: 'Gym (late)', start: { dateTime: '2026-06-02T19:00:00' } },
          context,
        ),
      { label: 'Gym' },
    );
    const after = await client.update(
      path,
      work,
      (data) => deleteInstanceIcs(data, '20260603T060000Z', context),
      {
        label: 'Gym',
      },
    );
    expect(after.data).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20260602T080000');
    expect(after.data).toContain('EXDATE;TZID=Europe/Berlin:20260603T080000');
    const { events } = await readWindow(
      client,
      work,
      'Europe/Berlin',
      Date.parse('2026-06-01T00:00:00Z'),
      Date.parse('2026-06-05T00:00:00Z'),
    );
    expect(events.map((e) => [e.event.id, e.event.summary, e.event.start.dateTime])).toEqual([
      ['series-1_20260601T060000Z', 'Gym', '2026-06-01T08:00:00+02:00'],
      ['series-1_20260602T060000Z', 'Gym (late)', '2026-06-02T19:00:00+02:00'],
    ]);
  });

  it('deletes with If-Match: a stale ETag is refused, the current one removes the object', async () => {
    const path = `${new URL(work).pathname}gone.ics`;
    await server.seed(path, FLOATING.replace('floating-1', 'gone-1'));
    const first = await client.get(path, work);
    await server.seed(path, FLOATING.replace('floating-1', 'gone-1').replace('Late call', 'Changed'));
    const refused = await client
      .delete(path, work, { ifMatch: first.etag ?? '', label: 'Late call' })
      .catch((e: unknown) => e);
    expect((refused as CalgateError).code).toBe('precondition_failed');
    const current = await client.get(path, work);
    await client.delete(path, work, { ifMatch: current.etag ?? '' });
    const missing = await client.get(path, work).catch((e: unknown) => e);
    expect((missing as CalgateError).code).toBe('not_found');
  });
});

describe('Radicale privileges and zones', () => {
  let server: Awaited<ReturnType<typeof startRadicale>>;
  beforeAll(async () => {
    server = await startRadicale();
    await server.makeCalendar('/alice/berlin/', { displayName: 'Berlin', timeZone: 'Europe/Berlin' });
    await server.bob.makeCalendar('/bob/shared/', { displayName: 'Bob shared' });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('reads calendar-timezone and current-user-privilege-set: a shared calendar is read-only', async () => {
    const client = new CaldavClient({
      credentials: { username: server.username, password: server.password },
      policy: { allowPrivate: true },
    });
    const own = await client.discover(server.root);
    expect(own.calendars.find((c) => c.displayName === 'Berlin')).toMatchObject({
      timeZone: 'Europe/Berlin',
      writable: true,
    });
    const shared = await client.discover(`${server.root}bob/shared/`);
    expect(shared.calendars).toMatchObject([{ displayName: 'Bob shared', writable: false }]);
    const refused = await client
      .create(
        `${server.root}bob/shared/`,
        newEventIcs({ start: { date: '2026-01-01' }, end: { date: '2026-01-02' }, summary: 'x' }, 'x', {
          calendarZone: 'UTC',
        }),
      )
      .catch((e: unknown) => e);
    expect((refused as CalgateError).code).toBe('permission_denied');
  });
});
