/**
 * The `ics` provider answers from the feed itself (what the mirror sends upstream): series
 * expanded with their overrides, single events and instances by id, free/busy without transparent
 * events, every write refused. The feed is asked at most once per reuse period, then with its ETag.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalendarRef, IcsCalendarProvider, icsEventId } from '../../src/index.ts';

const FEED = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Test//EN',
  'BEGIN:VEVENT',
  'UID:standup@example.com',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;TZID=Europe/Berlin:20270301T090000',
  'DTEND;TZID=Europe/Berlin:20270301T091500',
  'RRULE:FREQ=DAILY;COUNT=3',
  'SUMMARY:Standup',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:standup@example.com',
  'DTSTAMP:20260101T000000Z',
  'RECURRENCE-ID;TZID=Europe/Berlin:20270302T090000',
  'DTSTART;TZID=Europe/Berlin:20270302T150000',
  'DTEND;TZID=Europe/Berlin:20270302T151500',
  'SUMMARY:Standup (late)',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:holiday@example.com',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;VALUE=DATE:20270303',
  'DTEND;VALUE=DATE:20270304',
  'SUMMARY:Holiday',
  'TRANSP:TRANSPARENT',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

const CALENDAR: CalendarRef = { id: 'cal_feed', externalId: 'feed', timeZone: 'Europe/Berlin' };

describe('the ics provider', () => {
  let server: Server;
  let url = '';
  const seen: { status: number; headers: IncomingHttpHeaders }[] = [];
  let clock = Date.parse('2027-02-01T00:00:00Z');
  let provider: IcsCalendarProvider;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const unchanged = request.headers['if-none-match'] === '"v1"';
      seen.push({ status: unchanged ? 304 : 200, headers: request.headers });
      response.writeHead(unchanged ? 304 : 200, { etag: '"v1"', 'content-type': 'text/calendar' });
      response.end(unchanged ? '' : FEED);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/team.ics`;
    provider = new IcsCalendarProvider({
      url: async () => url,
      policy: { allowPrivate: true },
      reuseMs: 60_000,
      now: () => clock,
    });
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('lists the series expanded with its override, and masters with their exceptions', async () => {
    const page = await provider.listEvents(CALENDAR, {
      timeMin: '2027-03-01T00:00:00Z',
      timeMax: '2027-03-05T00:00:00Z',
      singleEvents: true,
      orderBy: 'startTime',
      maxResults: 10,
    });
    expect(page.items.map((event) => [event.summary, event.start.dateTime ?? event.start.date])).toEqual([
      ['Standup', '2027-03-01T09:00:00+01:00'],
      ['Standup (late)', '2027-03-02T15:00:00+01:00'],
      ['Holiday', '2027-03-03'],
      ['Standup', '2027-03-03T09:00:00+01:00'],
    ]);
    const masters = await provider.listEvents(CALENDAR, { singleEvents: false, maxResults: 10 });
    expect(masters.items.map((event) => event.id).sort()).toEqual(
      [
        icsEventId('standup@example.com'),
        // The moved occurrence as an exception, as Google lists them without singleEvents.
        `${icsEventId('standup@example.com')}_20270302T080000Z`,
        icsEventId('holiday@example.com'),
      ].sort(),
    );
  });

  it('gets a single event, the series and one of its instances by id', async () => {
    const series = icsEventId('standup@example.com');
    expect((await provider.getEvent(CALENDAR, series)).recurrence).toEqual(['RRULE:FREQ=DAILY;COUNT=3']);
    const third = await provider.getEvent(CALENDAR, `${series}_20270303T080000Z`);
    expect(third).toMatchObject({ summary: 'Standup', recurringEventId: series });
    await expect(provider.getEvent(CALENDAR, `${series}_20270309T080000Z`)).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('answers free/busy without the transparent holiday', async () => {
    const [result] = await provider.freeBusy([CALENDAR], '2027-03-03T00:00:00Z', '2027-03-04T00:00:00Z');
    expect(result?.busy).toEqual([{ start: '2027-03-03T08:00:00Z', end: '2027-03-03T08:15:00Z' }]);
  });

  it('refuses every write', async () => {
    for (const write of [
      () => provider.insertEvent(),
      () => provider.patchEvent(),
      () => provider.deleteEvent(),
      () => provider.quickAdd(),
    ]) {
      await expect(write()).rejects.toMatchObject({ code: 'permission_denied' });
    }
  });

  it('asks the feed once per reuse period, then with its ETag', async () => {
    expect(seen.map((request) => request.status)).toEqual([200]);
    clock += 61_000;
    await provider.listEvents(CALENDAR, { singleEvents: true, maxResults: 10 });
    expect(seen.map((request) => request.status)).toEqual([200, 304]);
    expect(seen[1]?.headers['if-none-match']).toBe('"v1"');
  });
});
