/**
 * iCalendar as other clients write it, stored on real Radicale and Xandikos (each started once
 * for this file) by the independent client `seed` and read back by Calgate: UNTIL in UTC, RDATE,
 * an IANA TZID carrying the VTIMEZONE Apple Calendar writes, and creating over an object that is
 * already there.
 */
import { CalgateError } from '@calgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaldavClient, newEventIcs, readWindow } from '../../src/caldav/index.ts';
import { ics, startRadicale, startXandikos, type TestCaldavServer } from './servers.ts';

/** America/New_York as Apple Calendar (macOS) writes it into every object that uses the zone. */
const APPLE_NEW_YORK = [
  'BEGIN:VTIMEZONE',
  'TZID:America/New_York',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:-0500',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
  'DTSTART:20070311T020000',
  'TZNAME:EDT',
  'TZOFFSETTO:-0400',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:-0400',
  'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
  'DTSTART:20071104T020000',
  'TZNAME:EST',
  'TZOFFSETTO:-0500',
  'END:STANDARD',
  'END:VTIMEZONE',
];

/** An Apple Calendar object: its own PRODID, CALSCALE and X-APPLE properties around the event. */
const apple = (...event: string[]) =>
  [
    'BEGIN:VCALENDAR',
    'METHOD:PUBLISH',
    'VERSION:2.0',
    'PRODID:-//Apple Inc.//macOS 14.4//EN',
    'CALSCALE:GREGORIAN',
    ...APPLE_NEW_YORK,
    'BEGIN:VEVENT',
    'TRANSP:OPAQUE',
    'DTSTAMP:20260101T120000Z',
    'CREATED:20260101T120000Z',
    'LAST-MODIFIED:20260101T120000Z',
    'SEQUENCE:0',
    'X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC',
    ...event,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

/** Each event's start as a UTC instant, in order. */
const instants = (events: { event: { summary?: string; start: { dateTime?: string; date?: string } } }[]) =>
  events.map((e) => [e.event.summary, new Date(Date.parse(e.event.start.dateTime ?? '')).toISOString()]);

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('objects other clients write, on %s', (_name, start) => {
  let server: TestCaldavServer;
  let client: CaldavClient;
  let url: string;
  let base: string;

  beforeAll(async () => {
    server = await start();
    url = `${server.home}formats/`;
    base = new URL(url).pathname;
    await server.makeCalendar(base, { displayName: 'Formats' });
    client = new CaldavClient({
      credentials: { username: server.username, password: server.password },
      policy: { allowPrivate: true },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('includes the instance that falls exactly on a UTC UNTIL, for zoned and UTC starts', async () => {
    await server.seed(
      `${base}until-zoned.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:until-zoned@hand',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Europe/Berlin:20260302T090000',
        'DTEND;TZID=Europe/Berlin:20260302T093000',
        // 09:00 in Berlin on 4 March is 08:00Z: the third instance sits on UNTIL.
        'RRULE:FREQ=DAILY;UNTIL=20260304T080000Z',
        'SUMMARY:Zoned until',
        'END:VEVENT',
      ),
    );
    await server.seed(
      `${base}until-utc.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:until-utc@hand',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260310T170000Z',
        'DURATION:PT45M',
        'RRULE:FREQ=WEEKLY;UNTIL=20260324T170000Z',
        'SUMMARY:UTC until',
        'END:VEVENT',
      ),
    );
    const { events, skipped } = await readWindow(
      client,
      url,
      'UTC',
      Date.parse('2026-03-01T00:00:00Z'),
      Date.parse('2026-04-15T00:00:00Z'),
    );
    expect(skipped).toEqual([]);
    expect(instants(events)).toEqual([
      ['Zoned until', '2026-03-02T08:00:00.000Z'],
      ['Zoned until', '2026-03-03T08:00:00.000Z'],
      ['Zoned until', '2026-03-04T08:00:00.000Z'],
      ['UTC until', '2026-03-10T17:00:00.000Z'],
      ['UTC until', '2026-03-17T17:00:00.000Z'],
      ['UTC until', '2026-03-24T17:00:00.000Z'],
    ]);
    // The window that holds only the instance on UNTIL still finds it.
    const last = await readWindow(
      client,
      url,
      'UTC',
      Date.parse('2026-03-24T00:00:00Z'),
      Date.parse('2026-03-25T00:00:00Z'),
    );
    expect(instants(last.events)).toEqual([['UTC until', '2026-03-24T17:00:00.000Z']]);
  });

  it('adds RDATE instances, with a TZID, in UTC and floating, to a rule and on their own', async () => {
    const path = `${server.home}rdates/`;
    await server.makeCalendar(new URL(path).pathname, { displayName: 'Rdates' });
    await server.seed(
      `${new URL(path).pathname}with-rule.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:rdate-rule@hand',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;TZID=Europe/Berlin:20260406T100000',
        'DTEND;TZID=Europe/Berlin:20260406T110000',
        'RRULE:FREQ=WEEKLY;COUNT=2',
        'RDATE;TZID=Europe/Berlin:20260409T140000',
        'RDATE:20260415T120000Z',
        'SUMMARY:Review',
        'END:VEVENT',
      ),
    );
    await server.seed(
      `${new URL(path).pathname}only-rdates.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:rdate-only@hand',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260501T090000Z',
        'DTEND:20260501T093000Z',
        'RDATE:20260505T090000Z,20260512T150000Z',
        'RDATE;TZID=America/New_York:20260520T090000',
        'SUMMARY:Checkup',
        'END:VEVENT',
      ),
    );
    const { events, skipped } = await readWindow(
      client,
      path,
      'UTC',
      Date.parse('2026-04-01T00:00:00Z'),
      Date.parse('2026-06-01T00:00:00Z'),
    );
    expect(skipped).toEqual([]);
    expect(instants(events)).toEqual([
      ['Review', '2026-04-06T08:00:00.000Z'],
      ['Review', '2026-04-09T12:00:00.000Z'],
      ['Review', '2026-04-13T08:00:00.000Z'],
      ['Review', '2026-04-15T12:00:00.000Z'],
      ['Checkup', '2026-05-01T09:00:00.000Z'],
      ['Checkup', '2026-05-05T09:00:00.000Z'],
      ['Checkup', '2026-05-12T15:00:00.000Z'],
      ['Checkup', '2026-05-20T13:00:00.000Z'],
    ]);
    // Every instance, RDATE ones too, keeps the master's length.
    for (const { event } of events) {
      const length = Date.parse(event.end.dateTime ?? '') - Date.parse(event.start.dateTime ?? '');
      expect(length).toBe(event.summary === 'Review' ? 3_600_000 : 1_800_000);
    }
    // An RDATE instance alone in a window (a server's time-range filter may not see it).
    const alone = await readWindow(
      client,
      path,
      'UTC',
      Date.parse('2026-05-20T00:00:00Z'),
      Date.parse('2026-05-21T00:00:00Z'),
    );
    expect(instants(alone.events)).toEqual([['Checkup', '2026-05-20T13:00:00.000Z']]);

    // Floating start and RDATEs (no TZID, no Z): all read in the calendar's zone (Auckland, +12 in June).
    await server.seed(
      `${new URL(path).pathname}floating-rdates.ics`,
      ics(
        'BEGIN:VEVENT',
        'UID:rdate-floating@hand',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260601T090000',
        'DURATION:PT1H',
        'RDATE:20260603T140000,20260605T090000',
        'SUMMARY:Floating',
        'END:VEVENT',
      ),
    );
    const floating = await readWindow(
      client,
      path,
      'Pacific/Auckland',
      Date.parse('2026-05-31T12:00:00Z'),
      Date.parse('2026-06-07T12:00:00Z'),
    );
    expect(instants(floating.events)).toEqual([
      ['Floating', '2026-05-31T21:00:00.000Z'],
      ['Floating', '2026-06-03T02:00:00.000Z'],
      ['Floating', '2026-06-04T21:00:00.000Z'],
    ]);
  });

  it('reads DTSTART;TZID=America/New_York with the VTIMEZONE Apple Calendar writes at the right instants across both DST changes', async () => {
    const path = `${server.home}apple/`;
    await server.makeCalendar(new URL(path).pathname, { displayName: 'Apple' });
    await server.seed(
      `${new URL(path).pathname}5E6F1A2B-spring.ics`,
      apple(
        'UID:5E6F1A2B-7C8D-4E9F-A0B1-C2D3E4F5A6B7',
        'DTSTART;TZID=America/New_York:20260306T090000',
        'DTEND;TZID=America/New_York:20260306T100000',
        'RRULE:FREQ=DAILY;COUNT=5',
        'SUMMARY:Spring forward',
      ),
    );
    await server.seed(
      `${new URL(path).pathname}9A8B7C6D-fall.ics`,
      apple(
        'UID:9A8B7C6D-5E4F-4A3B-9C2D-1E0F9A8B7C6D',
        'DTSTART;TZID=America/New_York:20261030T183000',
        'DTEND;TZID=America/New_York:20261030T193000',
        'RRULE:FREQ=DAILY;COUNT=4',
        'SUMMARY:Fall back',
      ),
    );
    const spring = await readWindow(
      client,
      path,
      'Europe/Berlin',
      Date.parse('2026-03-01T00:00:00Z'),
      Date.parse('2026-03-15T00:00:00Z'),
    );
    expect(spring.skipped).toEqual([]);
    // 8 March 2026 is the US change to daylight time: 09:00 is 14:00Z before it, 13:00Z after.
    expect(instants(spring.events)).toEqual([
      ['Spring forward', '2026-03-06T14:00:00.000Z'],
      ['Spring forward', '2026-03-07T14:00:00.000Z'],
      ['Spring forward', '2026-03-08T13:00:00.000Z'],
      ['Spring forward', '2026-03-09T13:00:00.000Z'],
      ['Spring forward', '2026-03-10T13:00:00.000Z'],
    ]);
    expect(spring.events.map((e) => e.event.start.dateTime)).toEqual([
      '2026-03-06T09:00:00-05:00',
      '2026-03-07T09:00:00-05:00',
      '2026-03-08T09:00:00-04:00',
      '2026-03-09T09:00:00-04:00',
      '2026-03-10T09:00:00-04:00',
    ]);
    expect(spring.events[0]?.event.start.timeZone).toBe('America/New_York');
    const fall = await readWindow(
      client,
      path,
      'Europe/Berlin',
      Date.parse('2026-10-25T00:00:00Z'),
      Date.parse('2026-11-05T00:00:00Z'),
    );
    // 1 November 2026 is the change back to standard time.
    expect(instants(fall.events)).toEqual([
      ['Fall back', '2026-10-30T22:30:00.000Z'],
      ['Fall back', '2026-10-31T22:30:00.000Z'],
      ['Fall back', '2026-11-01T23:30:00.000Z'],
      ['Fall back', '2026-11-02T23:30:00.000Z'],
    ]);
  });

  it('answers creating over an object that already exists as already_exists, leaving it as it was', async () => {
    const name = 'taken.ics';
    const original = ics(
      'BEGIN:VEVENT',
      'UID:taken@hand',
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20260801T090000Z',
      'DTEND:20260801T100000Z',
      'SUMMARY:First writer',
      'END:VEVENT',
    );
    await server.seed(`${base}${name}`, original);
    const before = await client.get(`${base}${name}`, url);
    const failure = await client
      .create(
        url,
        newEventIcs(
          {
            summary: 'Second writer',
            start: { dateTime: '2026-08-01T12:00:00Z' },
            end: { dateTime: '2026-08-01T13:00:00Z' },
          },
          'second@calgate',
          { calendarZone: 'UTC' },
        ),
        name,
      )
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CalgateError);
    expect((failure as CalgateError).code).toBe('already_exists');
    expect((failure as CalgateError).message).toBe(
      `The CalDAV server already has an object at ${base}${name}.`,
    );
    const after = await client.get(`${base}${name}`, url);
    expect(after.etag).toBe(before.etag);
    expect(after.data).toContain('SUMMARY:First writer');
    expect(after.data).not.toContain('Second writer');
  });
});
