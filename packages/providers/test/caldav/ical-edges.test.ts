import { describe, expect, it } from 'vitest';
import {
  deleteInstanceIcs,
  expandResource,
  ianaNameFor,
  newEventIcs,
  parseCalendarText,
  parseInstanceKey,
  patchEventIcs,
  resourceMaster,
} from '../../src/caldav/ical/index.ts';

const wrap = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');

function list(text: string, from: string, to: string, zone = 'Europe/Berlin') {
  return parseCalendarText(text, zone).resources.flatMap((r) =>
    expandResource(r, { from: Date.parse(from), to: Date.parse(to) }),
  );
}

const CUSTOM_TZ = [
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
];

describe('zones', () => {
  it('maps TZIDs as calendar software writes them', () => {
    expect(ianaNameFor('Europe/Berlin')).toBe('Europe/Berlin');
    expect(ianaNameFor('"Europe/Berlin"')).toBe('Europe/Berlin');
    expect(ianaNameFor('/mozilla.org/20050126_1/America/New_York')).toBe('America/New_York');
    expect(ianaNameFor('/freeassociation.sourceforge.net/Tzfile/Europe/Paris')).toBe('Europe/Paris');
    expect(ianaNameFor('Pacific Standard Time')).toBe('America/Los_Angeles');
    expect(ianaNameFor('Etc/UTC')).toBe('Etc/UTC');
    expect(ianaNameFor('Office Time')).toBeUndefined();
  });

  it('reads an IANA TZID without a VTIMEZONE, and a custom TZID whose VTIMEZONE names an IANA location', () => {
    const text = wrap(
      'BEGIN:VTIMEZONE',
      'TZID:Custom Berlin',
      'X-LIC-LOCATION:Europe/Berlin',
      'BEGIN:STANDARD',
      'DTSTART:19700101T000000',
      'TZOFFSETFROM:+0100',
      'TZOFFSETTO:+0100',
      'END:STANDARD',
      'END:VTIMEZONE',
      'BEGIN:VEVENT',
      'UID:a',
      'DTSTART;TZID=Custom Berlin:20260701T090000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:b',
      'DTSTART;TZID=Asia/Kolkata:20260701T090000',
      'END:VEVENT',
    );
    expect(list(text, '2026-06-01T00:00:00Z', '2026-08-01T00:00:00Z').map((e) => [e.id, e.start])).toEqual([
      ['a', { dateTime: '2026-07-01T09:00:00+02:00', timeZone: 'Europe/Berlin' }],
      ['b', { dateTime: '2026-07-01T09:00:00+05:30', timeZone: 'Asia/Kolkata' }],
    ]);
  });

  it('moves a time in a DST gap forward by the gap, as RFC 5545 says', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:gap',
      'DTSTART;TZID=Europe/Berlin:20260328T023000',
      'DURATION:PT1H',
      'RRULE:FREQ=DAILY;COUNT=3',
      'END:VEVENT',
    );
    expect(list(text, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z').map((e) => e.start.dateTime)).toEqual([
      '2026-03-28T02:30:00+01:00',
      '2026-03-29T03:30:00+02:00',
      '2026-03-30T02:30:00+02:00',
    ]);
  });
});

describe('recurrence edges', () => {
  it('honours a DATE UNTIL, RDATE periods, and leaves out overrides of excluded instances', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:d',
      'DTSTART;VALUE=DATE:20260601',
      'RRULE:FREQ=DAILY;UNTIL=20260603',
      'EXDATE;VALUE=DATE:20260602',
      'RDATE;VALUE=DATE:20260610',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:d',
      'RECURRENCE-ID;VALUE=DATE:20260602',
      'DTSTART;VALUE=DATE:20260605',
      'SUMMARY:ghost',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:p',
      'DTSTART:20260601T080000Z',
      'DTEND:20260601T090000Z',
      'RDATE;VALUE=PERIOD:20260603T080000Z/PT1H',
      'END:VEVENT',
    );
    expect(list(text, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z').map((e) => e.id)).toEqual([
      'd_20260601',
      'd_20260603',
      'd_20260610',
      'p_20260601T080000Z',
      'p_20260603T080000Z',
    ]);
  });

  it('lists a resource holding only overrides (an invitation to one occurrence)', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:lonely',
      'RECURRENCE-ID:20260601T080000Z',
      'DTSTART:20260601T100000Z',
      'DTEND:20260601T110000Z',
      'SUMMARY:Just this one',
      'END:VEVENT',
    );
    const events = list(text, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z');
    expect(events.map((e) => [e.id, e.summary, e.start.dateTime, e.originalStartTime?.dateTime])).toEqual([
      ['lonely_20260601T080000Z', 'Just this one', '2026-06-01T10:00:00Z', '2026-06-01T08:00:00Z'],
    ]);
    const resource = parseCalendarText(text, 'UTC').resources[0];
    expect(resource && resourceMaster(resource)).toBeUndefined();
  });

  it('expands a bounded series without a window, and refuses an endless one', () => {
    const bounded = parseCalendarText(
      wrap(
        'BEGIN:VEVENT',
        'UID:b',
        'DTSTART;TZID=Europe/Berlin:20260601T080000',
        'RRULE:FREQ=DAILY;COUNT=3',
        'END:VEVENT',
      ),
      'UTC',
    ).resources[0];
    const endless = parseCalendarText(
      wrap(
        'BEGIN:VEVENT',
        'UID:e',
        'DTSTART;TZID=Europe/Berlin:20260601T080000',
        'RRULE:FREQ=DAILY',
        'END:VEVENT',
      ),
      'UTC',
    ).resources[0];
    if (bounded === undefined || endless === undefined) {
      throw new Error('not parsed');
    }
    expect(expandResource(bounded).map((e) => e.id)).toEqual([
      'b_20260601T060000Z',
      'b_20260602T060000Z',
      'b_20260603T060000Z',
    ]);
    expect(() => expandResource(endless)).toThrow(/more than 10000 instances/);
  });

  it('reads a byte-order mark, bare LF line ends and several VCALENDARs in one text', () => {
    const one = wrap('BEGIN:VEVENT', 'UID:one', 'DTSTART:20260601T080000Z', 'END:VEVENT');
    const two = wrap('BEGIN:VEVENT', 'UID:two', 'DTSTART:20260602T080000Z', 'END:VEVENT');
    const text = `\uFEFF${one}${two}`.replace(/\r\n/g, '\n');
    expect(list(text, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z').map((e) => e.id)).toEqual([
      'one',
      'two',
    ]);
  });

  it('does not list a cancelled single event', () => {
    const text = wrap('BEGIN:VEVENT', 'UID:c', 'DTSTART:20260601T080000Z', 'STATUS:CANCELLED', 'END:VEVENT');
    expect(list(text, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z')).toEqual([]);
  });

  it('parses instance keys', () => {
    expect(parseInstanceKey('20260105T080000Z')).toEqual({
      allDay: false,
      key: Date.parse('2026-01-05T08:00:00Z'),
    });
    expect(parseInstanceKey('20260105')).toEqual({ allDay: true, key: Date.parse('2026-01-05T00:00:00Z') });
    expect(parseInstanceKey('2026-01-05')).toBeUndefined();
  });
});

describe('writing edges', () => {
  const context = { calendarZone: 'Europe/Berlin', now: Date.parse('2026-01-01T00:00:00Z') };

  it('writes all-day events as DATE values and UTC ones with Z, without a VTIMEZONE', () => {
    const allDay = newEventIcs(
      { start: { date: '2026-07-10' }, end: { date: '2026-07-13' }, summary: 'Trip' },
      'u1',
      context,
    );
    expect(allDay).toContain('DTSTART;VALUE=DATE:20260710');
    expect(allDay).toContain('DTEND;VALUE=DATE:20260713');
    expect(allDay).not.toContain('VTIMEZONE');
    const utc = newEventIcs(
      {
        start: { dateTime: '2026-07-10T09:00:00Z', timeZone: 'UTC' },
        end: { dateTime: '2026-07-10T10:00:00Z', timeZone: 'UTC' },
      },
      'u2',
      context,
    );
    expect(utc).toContain('DTSTART:20260710T090000Z');
    expect(utc).not.toContain('VTIMEZONE');
    // A dateTime with an offset and no timeZone is written in the calendar's zone.
    const offset = newEventIcs(
      { start: { dateTime: '2026-07-10T09:00:00+02:00' }, end: { dateTime: '2026-07-10T10:00:00+02:00' } },
      'u3',
      context,
    );
    expect(offset).toContain('DTSTART;TZID=Europe/Berlin:20260710T090000');
    expect(() =>
      newEventIcs(
        { start: { date: '2026-07-10' }, end: { dateTime: '2026-07-10T10:00:00Z' } },
        'u4',
        context,
      ),
    ).toThrow(/both be dates/);
    expect(() =>
      newEventIcs({ start: { dateTime: 'soon' }, end: { dateTime: 'later' } }, 'u5', context),
    ).toThrow(/start.dateTime 'soon'/);
  });

  it('edits and deletes instances of an all-day series and of a custom-zone series in their own forms', () => {
    const allDay = wrap(
      'BEGIN:VEVENT',
      'UID:ad',
      'DTSTART;VALUE=DATE:20260601',
      'RRULE:FREQ=DAILY;COUNT=3',
      'END:VEVENT',
    );
    const edited = patchEventIcs(allDay, '20260602', { summary: 'Middle' }, context);
    expect(edited).toContain('RECURRENCE-ID;VALUE=DATE:20260602');
    const deleted = deleteInstanceIcs(edited, '20260603', context);
    expect(deleted).toContain('EXDATE;VALUE=DATE:20260603');
    expect(
      list(deleted, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z').map((e) => [e.id, e.summary]),
    ).toEqual([
      ['ad_20260601', undefined],
      ['ad_20260602', 'Middle'],
    ]);

    const custom = wrap(
      ...CUSTOM_TZ,
      'BEGIN:VEVENT',
      'UID:cz',
      'DTSTART;TZID=Office Time:20260601T090000',
      'DTEND;TZID=Office Time:20260601T100000',
      'RRULE:FREQ=DAILY;COUNT=3',
      'END:VEVENT',
    );
    // 09:00 at +01:30 is 07:30Z.
    const customEdited = patchEventIcs(custom, '20260602T073000Z', { location: 'Annex' }, context);
    expect(customEdited).toContain('RECURRENCE-ID;TZID=Office Time:20260602T090000');
    const customDeleted = deleteInstanceIcs(customEdited, '20260603T073000Z', context);
    expect(customDeleted).toContain('EXDATE;TZID=Office Time:20260603T090000');
    expect(
      list(customDeleted, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z').map((e) => [
        e.start.dateTime,
        e.location,
      ]),
    ).toEqual([
      ['2026-06-01T09:00:00+01:30', undefined],
      ['2026-06-02T09:00:00+01:30', 'Annex'],
    ]);
  });

  it('changes attendees keeping the parameters of those who stay, and keeps DURATION when only the start moves', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:att',
      'DTSTART;TZID=Europe/Berlin:20260601T090000',
      'DURATION:PT45M',
      'ATTENDEE;CN=Bo;PARTSTAT=ACCEPTED;X-NOTE=keep:mailto:bo@example.com',
      'ATTENDEE;CN=Cy:mailto:cy@example.com',
      'END:VEVENT',
    );
    const patched = patchEventIcs(
      text,
      undefined,
      {
        attendees: [
          { email: 'BO@example.com' },
          { email: 'dee@example.com', displayName: 'Dee', optional: true },
        ],
        start: { dateTime: '2026-06-01T10:00:00' },
      },
      context,
    );
    const unfolded = patched.replace(/\r\n /g, '');
    expect(unfolded).toContain('X-NOTE=keep');
    expect(unfolded).toContain('PARTSTAT=ACCEPTED');
    expect(unfolded).not.toContain('cy@example.com');
    expect(unfolded).toMatch(/ATTENDEE;[^\r]*CN=Dee[^\r]*:mailto:dee@example.com/);
    expect(unfolded).toContain('ROLE=OPT-PARTICIPANT');
    expect(unfolded).toContain('DURATION:PT45M');
    expect(list(patched, '2026-05-01T00:00:00Z', '2026-07-01T00:00:00Z')[0]?.end.dateTime).toBe(
      '2026-06-01T10:45:00+02:00',
    );
  });

  it('refuses to edit an occurrence the series does not have', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:s',
      'DTSTART:20260601T080000Z',
      'RRULE:FREQ=DAILY;COUNT=2',
      'END:VEVENT',
    );
    expect(() => patchEventIcs(text, '20260603T080000Z', { summary: 'x' }, context)).toThrow(/no occurrence/);
    expect(() => patchEventIcs(text, '20260601', { summary: 'x' }, context)).toThrow(/no occurrence/);
    expect(() => patchEventIcs(text, '20260601T080000Z', { recurrence: [] }, context)).toThrow(
      /whole series/,
    );
  });
});
