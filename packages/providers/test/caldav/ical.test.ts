import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import {
  deleteInstanceIcs,
  expandResource,
  newEventIcs,
  parseCalendarText,
  patchEventIcs,
  resourceMaster,
} from '../../src/caldav/ical/index.ts';

const wrap = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');

function events(text: string, from: string, to: string, zone = 'Europe/Berlin') {
  const parsed = parseCalendarText(text, zone);
  return parsed.resources.flatMap((resource) =>
    expandResource(resource, { from: Date.parse(from), to: Date.parse(to) }),
  );
}

const starts = (list: { start: { dateTime?: string; date?: string } }[]) =>
  list.map((e) => e.start.dateTime ?? e.start.date);

describe('reading recurrence', () => {
  it('counts COUNT before EXDATE, adds RDATE and honours UNTIL inclusively in UTC', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:count',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=Europe/Berlin:20260105T090000',
      'DTEND;TZID=Europe/Berlin:20260105T100000',
      'RRULE:FREQ=WEEKLY;COUNT=4',
      'EXDATE;TZID=Europe/Berlin:20260112T090000',
      'RDATE;TZID=Europe/Berlin:20260301T150000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:until',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=America/New_York:20260302T090000',
      'DURATION:PT30M',
      'RRULE:FREQ=DAILY;UNTIL=20260305T140000Z',
      'END:VEVENT',
    );
    const list = events(text, '2026-01-01T00:00:00Z', '2026-04-01T00:00:00Z');
    expect(list.filter((e) => e.iCalUID === 'count').map((e) => e.start.dateTime)).toEqual([
      '2026-01-05T09:00:00+01:00',
      '2026-01-19T09:00:00+01:00',
      '2026-01-26T09:00:00+01:00',
      '2026-03-01T15:00:00+01:00',
    ]);
    const until = list.filter((e) => e.iCalUID === 'until');
    // 09:00 EST = 14:00Z: the last one sits exactly on UNTIL and is included.
    expect(starts(until)).toEqual([
      '2026-03-02T09:00:00-05:00',
      '2026-03-03T09:00:00-05:00',
      '2026-03-04T09:00:00-05:00',
      '2026-03-05T09:00:00-05:00',
    ]);
    expect(until[0]?.end.dateTime).toBe('2026-03-02T09:30:00-05:00');
    expect(until[0]?.id).toBe('until_20260302T140000Z');
    expect(until[0]?.recurringEventId).toBe('until');
  });

  it('puts overrides in place: moved to another day, renamed, cancelled ones not listed', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:ov',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=Europe/Berlin:20260105T090000',
      'DTEND;TZID=Europe/Berlin:20260105T100000',
      'SUMMARY:Standup',
      'RRULE:FREQ=WEEKLY;COUNT=4',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:ov',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID;TZID=Europe/Berlin:20260112T090000',
      'DTSTART;TZID=Europe/Berlin:20260114T160000',
      'DTEND;TZID=Europe/Berlin:20260114T170000',
      'SUMMARY:Standup (moved)',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:ov',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID;TZID=Europe/Berlin:20260119T090000',
      'DTSTART;TZID=Europe/Berlin:20260119T090000',
      'DTEND;TZID=Europe/Berlin:20260119T100000',
      'STATUS:CANCELLED',
      'END:VEVENT',
      // Moved from outside the window into it.
      'BEGIN:VEVENT',
      'UID:ov',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID;TZID=Europe/Berlin:20260126T090000',
      'DTSTART;TZID=Europe/Berlin:20260113T120000',
      'DTEND;TZID=Europe/Berlin:20260113T130000',
      'SUMMARY:Renamed',
      'END:VEVENT',
    );
    const list = events(text, '2026-01-10T00:00:00Z', '2026-01-20T00:00:00Z');
    expect(list.map((e) => [e.summary, e.start.dateTime, e.originalStartTime?.dateTime, e.id])).toEqual([
      ['Renamed', '2026-01-13T12:00:00+01:00', '2026-01-26T09:00:00+01:00', 'ov_20260126T080000Z'],
      ['Standup (moved)', '2026-01-14T16:00:00+01:00', '2026-01-12T09:00:00+01:00', 'ov_20260112T080000Z'],
    ]);
    const all = events(text, '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');
    expect(all.map((e) => e.summary)).toEqual(['Standup', 'Renamed', 'Standup (moved)']);
  });

  it('reads Windows zone names, custom VTIMEZONEs by their own rules, Etc/UTC, Z and floating times', () => {
    const text = wrap(
      'BEGIN:VTIMEZONE',
      'TZID:Half Hour Land',
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
      'UID:win',
      'DTSTART;TZID=W. Europe Standard Time:20260701T090000',
      'DTEND;TZID=W. Europe Standard Time:20260701T100000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:custom',
      'DTSTART;TZID=Half Hour Land:20260329T090000',
      'DTEND;TZID=Half Hour Land:20260329T100000',
      'RRULE:FREQ=WEEKLY;COUNT=2',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:etc',
      'DTSTART;TZID=Etc/UTC:20260701T090000',
      'DTEND;TZID=Etc/UTC:20260701T100000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:z',
      'DTSTART:20260701T090000Z',
      'DTEND:20260701T100000Z',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:floating',
      'DTSTART:20260701T090000',
      'DTEND:20260701T100000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:vendor',
      'DTSTART;TZID=/mozilla.org/20050126_1/America/New_York:20260701T090000',
      'DTEND;TZID=/mozilla.org/20050126_1/America/New_York:20260701T100000',
      'END:VEVENT',
    );
    const byUid = Object.fromEntries(
      events(text, '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', 'Asia/Tokyo').map((e) => [
        e.id,
        [e.start.dateTime, e.start.timeZone],
      ]),
    );
    expect(byUid).toEqual({
      win: ['2026-07-01T09:00:00+02:00', 'Europe/Berlin'],
      // Before and after the custom zone's own DST start (first Sunday of April).
      custom_20260329T083000Z: ['2026-03-29T09:00:00+00:30', undefined],
      custom_20260405T073000Z: ['2026-04-05T09:00:00+01:30', undefined],
      etc: ['2026-07-01T09:00:00Z', 'Etc/UTC'],
      z: ['2026-07-01T09:00:00Z', 'UTC'],
      floating: ['2026-07-01T09:00:00+09:00', 'Asia/Tokyo'],
      vendor: ['2026-07-01T09:00:00-04:00', 'America/New_York'],
    });
  });

  it('reads DATE values, multi-day all-day events and DURATION on dates, filtering in the calendar zone', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:trip',
      'DTSTART;VALUE=DATE:20260710',
      'DTEND;VALUE=DATE:20260713',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:weekly',
      'DTSTART;VALUE=DATE:20260701',
      'DURATION:P2D',
      'RRULE:FREQ=WEEKLY;COUNT=3',
      'EXDATE;VALUE=DATE:20260708',
      'END:VEVENT',
    );
    const list = events(text, '2026-07-12T00:00:00+09:00', '2026-07-20T00:00:00+09:00', 'Asia/Tokyo');
    expect(list.map((e) => [e.id, e.start.date, e.end.date])).toEqual([
      ['trip', '2026-07-10', '2026-07-13'],
      ['weekly_20260715', '2026-07-15', '2026-07-17'],
    ]);
    // The trip ends at Tokyo's midnight of the 13th: a window from then on misses it.
    expect(events(text, '2026-07-13T00:00:00+09:00', '2026-07-14T00:00:00+09:00', 'Asia/Tokyo')).toEqual([]);
  });

  it('gives the master with its recurrence lines and all fields', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:m',
      'DTSTART;TZID=Europe/Berlin:20260105T090000',
      'DTEND;TZID=Europe/Berlin:20260105T100000',
      'RRULE:FREQ=DAILY;COUNT=3',
      'EXDATE;TZID=Europe/Berlin:20260106T090000',
      'ORGANIZER;CN=Ann:mailto:ann@example.com',
      'ATTENDEE;CN=Bo;ROLE=OPT-PARTICIPANT;PARTSTAT=ACCEPTED:mailto:bo@example.com',
      'TRANSP:TRANSPARENT',
      'CLASS:PRIVATE',
      'BEGIN:VALARM',
      'ACTION:DISPLAY',
      'TRIGGER:-PT15M',
      'END:VALARM',
      'END:VEVENT',
    );
    const resource = parseCalendarText(text, 'UTC').resources[0];
    if (resource === undefined) {
      throw new Error('no resource');
    }
    const master = resourceMaster(resource);
    expect(master).toMatchObject({
      id: 'm',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3', 'EXDATE;TZID=Europe/Berlin:20260106T090000'],
      organizer: { email: 'ann@example.com', displayName: 'Ann' },
      attendees: [{ email: 'bo@example.com', displayName: 'Bo', optional: true, responseStatus: 'accepted' }],
      transparency: 'transparent',
      visibility: 'private',
      reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 15 }] },
    });
  });

  it('refuses text that is not iCalendar', () => {
    expect(() => parseCalendarText('hello', 'UTC')).toThrow(/could not be read/);
  });
});

describe('writing', () => {
  const context = { calendarZone: 'Europe/Berlin', now: Date.parse('2026-01-01T00:00:00Z') };

  it('writes new events with DTSTART;TZID and the VTIMEZONE in the object', () => {
    const text = newEventIcs(
      {
        summary: 'Lunch',
        start: { dateTime: '2026-07-01T12:00:00', timeZone: 'America/New_York' },
        end: { dateTime: '2026-07-01T13:00:00', timeZone: 'America/New_York' },
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=2'],
        attendees: [{ email: 'x@example.com' }],
      },
      'new-1',
      context,
    );
    expect(text).toContain('DTSTART;TZID=America/New_York:20260701T120000');
    expect(text).toContain('BEGIN:VTIMEZONE\r\nTZID:America/New_York');
    expect(text.indexOf('BEGIN:VTIMEZONE')).toBeLessThan(text.indexOf('BEGIN:VEVENT'));
    const list = events(text, '2026-06-01T00:00:00Z', '2026-08-01T00:00:00Z');
    expect(starts(list)).toEqual(['2026-07-01T12:00:00-04:00', '2026-07-08T12:00:00-04:00']);
  });

  it('writes every recurrence line of a new event: RRULE, EXDATE and RDATE together', () => {
    const text = newEventIcs(
      {
        summary: 'Standup',
        start: { dateTime: '2026-03-02T09:00:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-03-02T09:15:00', timeZone: 'Europe/Berlin' },
        recurrence: [
          'RRULE:FREQ=DAILY;COUNT=3',
          'EXDATE;TZID=Europe/Berlin:20260303T090000',
          'RDATE;TZID=Europe/Berlin:20260310T090000',
        ],
      },
      'imported-uid@example.com',
      context,
    );
    expect(text).toContain('UID:imported-uid@example.com');
    expect(text).toContain('RRULE:FREQ=DAILY;COUNT=3');
    expect(text).toContain('EXDATE;TZID=Europe/Berlin:20260303T090000');
    expect(text).toContain('RDATE;TZID=Europe/Berlin:20260310T090000');
    expect(starts(events(text, '2026-03-01T00:00:00Z', '2026-03-20T00:00:00Z'))).toEqual([
      '2026-03-02T09:00:00+01:00',
      '2026-03-04T09:00:00+01:00',
      '2026-03-10T09:00:00+01:00',
    ]);
  });

  const series = wrap(
    'BEGIN:VEVENT',
    'UID:keep',
    'DTSTAMP:20250101T000000Z',
    'SEQUENCE:2',
    'DTSTART;TZID=Europe/Berlin:20260105T090000',
    'DTEND;TZID=Europe/Berlin:20260105T100000',
    'SUMMARY:Review',
    'RRULE:FREQ=WEEKLY;COUNT=4',
    'ORGANIZER;CN=Ann;X-ORG=1:mailto:ann@example.com',
    'ATTENDEE;CN=Bo;PARTSTAT=ACCEPTED;RSVP=TRUE;X-KEEP=yes:mailto:bo@example.com',
    'X-CUSTOM;X-P=1:kept',
    'BEGIN:VALARM',
    'ACTION:DISPLAY',
    'TRIGGER:-PT10M',
    'DESCRIPTION:soon',
    'END:VALARM',
    'END:VEVENT',
  );

  it('patches the master keeping ORGANIZER, attendee parameters, VALARM and X- properties', () => {
    const text = patchEventIcs(series, undefined, { summary: 'Review (new)', location: 'Room 4' }, context);
    const vevent = ICAL.Component.fromString(text).getFirstSubcomponent('vevent');
    expect(vevent?.getFirstPropertyValue('summary')).toBe('Review (new)');
    expect(vevent?.getFirstPropertyValue('location')).toBe('Room 4');
    expect(vevent?.getFirstPropertyValue('sequence')).toBe(3);
    expect(text).toContain('ORGANIZER;CN=Ann;X-ORG=1:mailto:ann@example.com');
    expect(text).toContain('X-KEEP=yes');
    expect(text).toContain('RSVP=TRUE');
    expect(text).toContain('X-CUSTOM;X-P=1:kept');
    expect(text).toContain('TRIGGER:-PT10M');
    // A new start alone keeps the length.
    const moved = patchEventIcs(series, undefined, { start: { dateTime: '2026-01-05T11:00:00' } }, context);
    expect(moved).toContain('DTSTART;TZID=Europe/Berlin:20260105T110000');
    expect(moved).toContain('DTEND;TZID=Europe/Berlin:20260105T120000');
  });

  it('edits one instance as a RECURRENCE-ID override in the same resource, deletes one with EXDATE', () => {
    const edited = patchEventIcs(
      series,
      '20260112T080000Z',
      { summary: 'Moved review', start: { dateTime: '2026-01-13T15:00:00+01:00' } },
      context,
    );
    expect(edited).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20260112T090000');
    const list = events(edited, '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');
    expect(list.map((e) => [e.summary, e.start.dateTime, e.end.dateTime])).toEqual([
      ['Review', '2026-01-05T09:00:00+01:00', '2026-01-05T10:00:00+01:00'],
      ['Moved review', '2026-01-13T15:00:00+01:00', '2026-01-13T16:00:00+01:00'],
      ['Review', '2026-01-19T09:00:00+01:00', '2026-01-19T10:00:00+01:00'],
      ['Review', '2026-01-26T09:00:00+01:00', '2026-01-26T10:00:00+01:00'],
    ]);
    // The override keeps what the master had (attendee parameters, alarms).
    const override = ICAL.Component.fromString(edited)
      .getAllSubcomponents('vevent')
      .find((c) => c.hasProperty('recurrence-id'));
    expect(override?.toString()).toContain('X-KEEP=yes');
    expect(override?.hasProperty('rrule')).toBe(false);

    const deleted = deleteInstanceIcs(edited, '20260112T080000Z', context);
    expect(deleted).toContain('EXDATE;TZID=Europe/Berlin:20260112T090000');
    expect(deleted).not.toContain('RECURRENCE-ID');
    expect(starts(events(deleted, '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'))).toEqual([
      '2026-01-05T09:00:00+01:00',
      '2026-01-19T09:00:00+01:00',
      '2026-01-26T09:00:00+01:00',
    ]);
    expect(() => deleteInstanceIcs(series, '20260113T080000Z', context)).toThrow(/no occurrence/);
  });
});
