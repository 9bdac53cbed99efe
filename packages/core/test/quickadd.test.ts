import { describe, expect, it } from 'vitest';
import { parseQuickAdd, type QuickAddEvent } from '../src/index.ts';

/** Wednesday 2026-11-18, 10:30 in New York, 21:15 in Kathmandu. */
const NOW = Date.parse('2026-11-18T15:30:00Z');
const NY = 'America/New_York';
const KTM = 'Asia/Kathmandu';

const timed = (start: string, end: string, zone: string) => ({
  start: { dateTime: start, timeZone: zone },
  end: { dateTime: end, timeZone: zone },
});
const allDay = (start: string, end: string) => ({ start: { date: start }, end: { date: end } });

const cases: [string, string, Partial<QuickAddEvent>][] = [
  [
    'Lunch with Ann tomorrow at noon',
    NY,
    { summary: 'Lunch with Ann', ...timed('2026-11-19T12:00:00-05:00', '2026-11-19T13:00:00-05:00', NY) },
  ],
  [
    'Dentist Friday 2pm',
    NY,
    { summary: 'Dentist', ...timed('2026-11-20T14:00:00-05:00', '2026-11-20T15:00:00-05:00', NY) },
  ],
  [
    'Meeting 2026-12-03 14:00-15:30 at Room 4',
    NY,
    {
      summary: 'Meeting',
      location: 'Room 4',
      ...timed('2026-12-03T14:00:00-05:00', '2026-12-03T15:30:00-05:00', NY),
    },
  ],
  [
    'Call with Bob next Tuesday at 10',
    NY,
    { summary: 'Call with Bob', ...timed('2026-11-24T10:00:00-05:00', '2026-11-24T11:00:00-05:00', NY) },
  ],
  [
    'Party on Dec 24 at 7pm',
    NY,
    { summary: 'Party', ...timed('2026-12-24T19:00:00-05:00', '2026-12-24T20:00:00-05:00', NY) },
  ],
  [
    'Review today 16:00 for 45 minutes',
    NY,
    { summary: 'Review', ...timed('2026-11-18T16:00:00-05:00', '2026-11-18T16:45:00-05:00', NY) },
  ],
  ['Holiday on 2026-12-24', NY, { summary: 'Holiday', ...allDay('2026-12-24', '2026-12-25') }],
  [
    'Offsite for 2 hours Dec 1 at 9am',
    NY,
    { summary: 'Offsite', ...timed('2026-12-01T09:00:00-05:00', '2026-12-01T11:00:00-05:00', NY) },
  ],
  [
    "Lunch at Luigi's with Ann tomorrow 1pm",
    NY,
    {
      summary: 'Lunch with Ann',
      location: "Luigi's",
      ...timed('2026-11-19T13:00:00-05:00', '2026-11-19T14:00:00-05:00', NY),
    },
  ],
  // A time without a date that has passed today is tomorrow's.
  [
    'Gym at 7am',
    NY,
    { summary: 'Gym', ...timed('2026-11-19T07:00:00-05:00', '2026-11-19T08:00:00-05:00', NY) },
  ],
  [
    'Standup 11:00',
    NY,
    { summary: 'Standup', ...timed('2026-11-18T11:00:00-05:00', '2026-11-18T12:00:00-05:00', NY) },
  ],
  [
    'Workshop 7-9pm Thursday',
    NY,
    { summary: 'Workshop', ...timed('2026-11-19T19:00:00-05:00', '2026-11-19T21:00:00-05:00', NY) },
  ],
  [
    'Flight Dec 5 10pm-1am',
    NY,
    { summary: 'Flight', ...timed('2026-12-05T22:00:00-05:00', '2026-12-06T01:00:00-05:00', NY) },
  ],
  ['Conference Dec 3 for 3 days', NY, { summary: 'Conference', ...allDay('2026-12-03', '2026-12-06') }],
  [
    'Dinner tonight',
    NY,
    { summary: 'Dinner', ...timed('2026-11-18T19:00:00-05:00', '2026-11-18T20:00:00-05:00', NY) },
  ],
  [
    'Sync tomorrow morning',
    NY,
    { summary: 'Sync', ...timed('2026-11-19T09:00:00-05:00', '2026-11-19T10:00:00-05:00', NY) },
  ],
  [
    'Game night Friday 8pm',
    NY,
    { summary: 'Game night', ...timed('2026-11-20T20:00:00-05:00', '2026-11-20T21:00:00-05:00', NY) },
  ],
  // A month and day already past this year is next year's.
  [
    'Kickoff Jan 5 9:30am',
    NY,
    { summary: 'Kickoff', ...timed('2027-01-05T09:30:00-05:00', '2027-01-05T10:30:00-05:00', NY) },
  ],
  [
    'Planning on 24th of December 2027 at 3:30pm for 1.5 hours',
    NY,
    { summary: 'Planning', ...timed('2027-12-24T15:30:00-05:00', '2027-12-24T17:00:00-05:00', NY) },
  ],
  [
    'Sprint review Mon 10am for half an hour',
    NY,
    { summary: 'Sprint review', ...timed('2026-11-23T10:00:00-05:00', '2026-11-23T10:30:00-05:00', NY) },
  ],
  // Across DST: the wall-clock range keeps its hours; "for 2 hours" is two real hours.
  [
    'Night shift 2026-11-01 0:30-3:00',
    NY,
    { summary: 'Night shift', ...timed('2026-11-01T00:30:00-04:00', '2026-11-01T03:00:00-05:00', NY) },
  ],
  [
    'Backup 2026-11-01 at 1:30am for 2 hours',
    NY,
    { summary: 'Backup', ...timed('2026-11-01T01:30:00-04:00', '2026-11-01T02:30:00-05:00', NY) },
  ],
  // In the spring-forward gap, 2:30 becomes 3:30 (RFC 5545).
  [
    'Early call 2026-03-08 2:30am',
    NY,
    { summary: 'Early call', ...timed('2026-03-08T03:30:00-04:00', '2026-03-08T04:30:00-04:00', NY) },
  ],
  // Kathmandu (+05:45): "today" is already Wednesday evening there.
  [
    'Tea tomorrow at 4pm',
    KTM,
    { summary: 'Tea', ...timed('2026-11-19T16:00:00+05:45', '2026-11-19T17:00:00+05:45', KTM) },
  ],
  ['Puja today', KTM, { summary: 'Puja', ...allDay('2026-11-18', '2026-11-19') }],
  [
    'Call at 9pm',
    KTM,
    { summary: 'Call', ...timed('2026-11-19T21:00:00+05:45', '2026-11-19T22:00:00+05:45', KTM) },
  ],
  [
    'Trek Friday 6:15am for 3 hours',
    KTM,
    { summary: 'Trek', ...timed('2026-11-20T06:15:00+05:45', '2026-11-20T09:15:00+05:45', KTM) },
  ],
];

describe('parseQuickAdd', () => {
  it.each(cases)('%s (%s)', (text, zone, expected) => {
    const result = parseQuickAdd(text, { now: NOW, timeZone: zone });
    expect(result.ok ? result.value : result.error.message).toEqual(expected);
  });

  it.each([
    ['Call Bob', /No date or time found in 'Call Bob'.*tomorrow at 10am/],
    ['Standup every weekday 9:30am for 15 minutes', /recurring event/],
    ['Party Feb 30', /'Feb 30' is not a calendar date/],
    ['Call at 25:00', /not a valid time/],
    ['Call Bob tomorrow for 30 minutes', /needs a start time/],
    ['   ', /text is empty/],
  ])('refuses %j clearly', (text, message) => {
    const result = parseQuickAdd(text, { now: NOW, timeZone: NY });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('invalid_argument');
      expect(result.error.message).toMatch(message);
    }
  });

  it('rejects an unknown zone', () => {
    const result = parseQuickAdd('Lunch tomorrow at noon', { now: NOW, timeZone: 'Mars/Olympus' });
    expect(result.ok ? '' : result.error.code).toBe('invalid_argument');
  });

  it('reads like Google in lenient mode: no date is today, no time is all day', () => {
    const lenient = (text: string) => parseQuickAdd(text, { now: NOW, timeZone: NY, mode: 'lenient' });
    expect(lenient('Call Bob')).toEqual({
      ok: true,
      value: { summary: 'Call Bob', ...allDay('2026-11-18', '2026-11-19') },
    });
    expect(lenient('Gym at 7am')).toMatchObject({
      value: { start: { dateTime: '2026-11-18T07:00:00-05:00' } },
    });
  });

  it('never lets a title swallow the hole marker or control characters', () => {
    const result = parseQuickAdd('Lunch\u0001\u0007 tomorrow at noon', { now: NOW, timeZone: NY });
    expect(result.ok ? result.value.summary : '').toBe('Lunch');
  });
});
