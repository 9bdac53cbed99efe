/**
 * A subscribed iCalendar feed drives the event mirror (icsSyncSource): a local HTTP server serves
 * the feed with an ETag and answers 304 to a matching If-None-Match; the first sync stores every
 * event (series with overrides, cancelled occurrences), a sync before the refresh interval asks
 * nothing, one after it hears 304 and changes nothing, and a changed feed is synced in full (an
 * event gone from the feed is gone from the mirror). REFRESH-INTERVAL lengthens the interval.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalEventStore, MirrorRepository } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CalendarRef,
  icsSyncSource,
  LocalCalendarProvider,
  MirroredCalendarProvider,
  readIcsCursor,
  type SyncSource,
  syncMirror,
} from '../../src/index.ts';
import { type LocalFixture, localFixture } from '../local-fixtures.ts';

const ZONE = 'Europe/Berlin';
const HOUR = 3_600_000;

function feed(version: 'v1' | 'v2'): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Test//EN',
    'REFRESH-INTERVAL;VALUE=DURATION:PT6H',
  ];
  lines.push(
    'BEGIN:VEVENT',
    'UID:standup@example.com',
    'DTSTAMP:20260101T000000Z',
    'DTSTART;TZID=Europe/Berlin:20260302T090000',
    'DTEND;TZID=Europe/Berlin:20260302T091500',
    'RRULE:FREQ=DAILY;COUNT=4',
    'SUMMARY:Standup',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:standup@example.com',
    'DTSTAMP:20260101T000000Z',
    'RECURRENCE-ID;TZID=Europe/Berlin:20260303T090000',
    'DTSTART;TZID=Europe/Berlin:20260303T150000',
    'DTEND;TZID=Europe/Berlin:20260303T151500',
    'SUMMARY:Standup (late)',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:standup@example.com',
    'DTSTAMP:20260101T000000Z',
    'RECURRENCE-ID;TZID=Europe/Berlin:20260304T090000',
    'STATUS:CANCELLED',
    'DTSTART;TZID=Europe/Berlin:20260304T090000',
    'END:VEVENT',
  );
  if (version === 'v1') {
    lines.push(
      'BEGIN:VEVENT',
      'UID:holiday@example.com',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;VALUE=DATE:20260306',
      'DTEND;VALUE=DATE:20260307',
      'SUMMARY:Holiday',
      'END:VEVENT',
    );
  } else {
    lines.push(
      'BEGIN:VEVENT',
      'UID:review@example.com',
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20260305T140000Z',
      'DURATION:PT1H',
      'SUMMARY:Review',
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

describe('a subscribed iCalendar feed in the mirror', () => {
  let fixture: LocalFixture;
  let mirror: MirrorRepository;
  let server: Server;
  let url = '';
  let version: 'v1' | 'v2' = 'v1';
  const answers: number[] = [];
  let clock = Date.parse('2026-03-01T00:00:00Z');

  beforeAll(async () => {
    fixture = await localFixture();
    mirror = new MirrorRepository(fixture.db);
    server = createServer((request, response) => {
      const etag = `"${version}"`;
      if (request.headers['if-none-match'] === etag) {
        answers.push(304);
        response.writeHead(304, { etag });
        response.end();
        return;
      }
      answers.push(200);
      response.writeHead(200, { 'content-type': 'text/calendar', etag });
      response.end(feed(version));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/team.ics`;
  }, 120_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await fixture?.db.close();
  });

  const source = (): SyncSource =>
    icsSyncSource({
      url,
      policy: { allowPrivate: true },
      timeZone: ZONE,
      floorMs: 15 * 60_000,
      intervalMs: HOUR,
      now: () => clock,
    });

  const sync = (calendar: CalendarRef) =>
    syncMirror({
      source: source(),
      calendarId: calendar.id,
      tenantId: 'tnt_x',
      externalId: calendar.externalId,
      store: mirror,
    });

  async function listed(calendar: CalendarRef) {
    const local = new LocalCalendarProvider(new LocalEventStore(fixture.db));
    const provider = new MirroredCalendarProvider(
      local,
      source().format,
      { tenantId: 'tnt_x', connectionId: 'con_x', auth: 'oauth' },
      {
        mirror,
        maxStalenessMs: 365 * 24 * HOUR,
        sync: async () => {},
        requestSync: async () => {},
        touch: () => {},
      },
    );
    const page = await provider.listEvents(calendar, {
      timeMin: '2026-03-01T00:00:00Z',
      timeMax: '2026-04-01T00:00:00Z',
      singleEvents: true,
      orderBy: 'startTime',
      maxResults: 50,
    });
    expect(page.syncedAt).toBeDefined();
    return page.items.map((event) => [event.summary, event.start.dateTime ?? event.start.date]);
  }

  it('stores the feed, then asks with its ETag, hears 304 and changes nothing, and follows a change in full', async () => {
    const calendar = await fixture.newCalendar(ZONE);
    const first = await sync(calendar);
    expect(first).toMatchObject({ mode: 'full' });
    expect(answers).toEqual([200]);
    expect(await listed(calendar)).toEqual([
      ['Standup', '2026-03-02T09:00:00+01:00'],
      ['Standup (late)', '2026-03-03T15:00:00+01:00'],
      ['Standup', '2026-03-05T09:00:00+01:00'],
      ['Holiday', '2026-03-06'],
    ]);
    // REFRESH-INTERVAL (6 hours) lengthens the hour the subscription would wait.
    const cursor = readIcsCursor(String((await mirror.syncState(calendar.id))?.syncToken));
    expect(cursor).toMatchObject({ etag: '"v1"', refreshAfter: clock + 6 * HOUR });

    // Before the interval: the feed is not asked.
    clock += HOUR;
    await sync(calendar);
    expect(answers).toEqual([200]);

    // After it, unchanged: a 304, nothing changes.
    clock += 6 * HOUR;
    const unchanged = await sync(calendar);
    expect(unchanged).toMatchObject({ mode: 'incremental', upserted: 0, deleted: 0 });
    expect(answers).toEqual([200, 304]);

    // The feed changes: one fetch, a full sync; the holiday left the feed and the mirror.
    version = 'v2';
    clock += 7 * HOUR;
    const changed = await sync(calendar);
    expect(changed).toMatchObject({ mode: 'full', restarted: true });
    expect(answers).toEqual([200, 304, 200]);
    expect(await listed(calendar)).toEqual([
      ['Standup', '2026-03-02T09:00:00+01:00'],
      ['Standup (late)', '2026-03-03T15:00:00+01:00'],
      ['Standup', '2026-03-05T09:00:00+01:00'],
      ['Review', '2026-03-05T14:00:00Z'],
    ]);
  });

  it('a loopback feed is refused without OUTBOUND_ALLOW_PRIVATE, and the failure is recorded', async () => {
    const calendar = await fixture.newCalendar(ZONE);
    const strict = icsSyncSource({
      url,
      policy: { allowPrivate: false },
      timeZone: ZONE,
      floorMs: 0,
      intervalMs: HOUR,
    });
    await expect(
      syncMirror({
        source: strict,
        calendarId: calendar.id,
        tenantId: 'tnt_x',
        externalId: calendar.externalId,
        store: mirror,
      }),
    ).rejects.toThrow(/loopback address.*OUTBOUND_ALLOW_PRIVATE=true/);
    expect((await mirror.syncState(calendar.id))?.error).toMatch(/refused/);
  });
});
