import { LocalEventStore } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventInput, LocalCalendarProvider } from '../src/index.ts';
import { type LocalFixture, localFixture, rejectsWith } from './local-fixtures.ts';

let fx: LocalFixture;
let provider: LocalCalendarProvider;
/** Wednesday 2026-11-18 10:30 in New York. */
const NOW = Date.parse('2026-11-18T15:30:00Z');
const NY = 'America/New_York';

beforeAll(async () => {
  fx = await localFixture();
  provider = new LocalCalendarProvider(new LocalEventStore(fx.db), { now: () => NOW });
});

afterAll(async () => {
  await fx.db.close();
});

const ny = (start: string, end: string, extra: Partial<EventInput> = {}): EventInput => ({
  summary: 'Busy',
  start: { dateTime: start, timeZone: NY },
  end: { dateTime: end, timeZone: NY },
  ...extra,
});

describe('local free/busy', () => {
  it('counts opaque, accepted, all-day and recurring time across the end of DST, and nothing else', async () => {
    const cal = await fx.newCalendar(NY);
    // Straddles the window start: clipped.
    await provider.insertEvent(cal, ny('2026-10-30T23:00:00', '2026-10-31T01:00:00'));
    // Two overlapping events merge.
    await provider.insertEvent(cal, ny('2026-10-31T10:00:00', '2026-10-31T11:00:00'));
    await provider.insertEvent(cal, ny('2026-10-31T10:30:00', '2026-10-31T11:30:00'));
    await provider.insertEvent(
      cal,
      ny('2026-10-31T12:00:00', '2026-10-31T13:00:00', { transparency: 'transparent' }),
    );
    await provider.insertEvent(
      cal,
      ny('2026-10-31T16:00:00', '2026-10-31T17:00:00', {
        attendees: [
          { email: 'me@example.com', self: true, responseStatus: 'declined' },
          { email: 'boss@example.com', responseStatus: 'accepted' },
        ],
      }),
    );
    const cancelled = await provider.insertEvent(cal, ny('2026-10-31T18:00:00', '2026-10-31T19:00:00'));
    await provider.deleteEvent(cal, cancelled.id);
    // Someone else declined: still busy for this calendar.
    await provider.insertEvent(
      cal,
      ny('2026-11-02T08:00:00', '2026-11-02T09:00:00', {
        attendees: [
          { email: 'me@example.com', self: true, responseStatus: 'accepted' },
          { email: 'guest@example.com', responseStatus: 'declined' },
        ],
      }),
    );
    // The day of the change has 25 hours.
    await provider.insertEvent(cal, {
      summary: 'Away',
      start: { date: '2026-11-01' },
      end: { date: '2026-11-02' },
    });
    const series = await provider.insertEvent(
      cal,
      ny('2026-10-30T09:00:00', '2026-10-30T09:30:00', { recurrence: ['RRULE:FREQ=DAILY;COUNT=5'] }),
    );
    await provider.deleteEvent(cal, `${series.id}_20261102T140000Z`);

    const [result] = await provider.freeBusy([cal], '2026-10-31T04:00:00Z', '2026-11-03T05:00:00Z');
    expect(result).toEqual({
      calendarId: cal.id,
      busy: [
        { start: '2026-10-31T04:00:00Z', end: '2026-10-31T05:00:00Z' },
        { start: '2026-10-31T13:00:00Z', end: '2026-10-31T13:30:00Z' },
        { start: '2026-10-31T14:00:00Z', end: '2026-10-31T15:30:00Z' },
        { start: '2026-11-01T04:00:00Z', end: '2026-11-02T05:00:00Z' },
        { start: '2026-11-02T13:00:00Z', end: '2026-11-02T14:00:00Z' },
      ],
    });
  });

  it('answers per calendar, in the order asked, and refuses a bad window', async () => {
    const a = await fx.newCalendar(NY);
    const b = await fx.newCalendar('Asia/Kathmandu');
    await provider.insertEvent(b, {
      summary: 'Dashain',
      start: { date: '2026-10-20' },
      end: { date: '2026-10-22' },
    });
    const results = await provider.freeBusy([b, a], '2026-10-19T00:00:00Z', '2026-10-25T00:00:00Z');
    expect(results).toEqual([
      { calendarId: b.id, busy: [{ start: '2026-10-19T18:15:00Z', end: '2026-10-21T18:15:00Z' }] },
      { calendarId: a.id, busy: [] },
    ]);
    await rejectsWith(
      provider.freeBusy([a], '2026-10-25T00:00:00Z', '2026-10-19T00:00:00Z'),
      'invalid_argument',
    );
    await rejectsWith(provider.freeBusy([a], 'yesterday', '2026-10-19T00:00:00Z'), 'invalid_argument');
  });
});

describe('local quick add', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    [
      'Lunch with Ann tomorrow at noon',
      NY,
      { summary: 'Lunch with Ann', start: { dateTime: '2026-11-19T12:00:00-05:00', timeZone: NY } },
    ],
    [
      'Meeting 2026-12-03 14:00-15:30 at Room 4',
      NY,
      {
        summary: 'Meeting',
        location: 'Room 4',
        end: { dateTime: '2026-12-03T15:30:00-05:00', timeZone: NY },
      },
    ],
    [
      'Holiday on 2026-12-24',
      'Asia/Kathmandu',
      { summary: 'Holiday', start: { date: '2026-12-24' }, end: { date: '2026-12-25' } },
    ],
    [
      'Tea today at 9pm',
      'Asia/Kathmandu',
      { summary: 'Tea', start: { dateTime: '2026-11-18T21:00:00+05:45', timeZone: 'Asia/Kathmandu' } },
    ],
  ];

  it.each(cases)('%s (%s) creates a stored event', async (text, zone, expected) => {
    const cal = await fx.newCalendar(zone);
    const created = await provider.quickAdd(cal, text);
    expect(created).toMatchObject({ status: 'confirmed', ...expected });
    expect(await provider.getEvent(cal, created.id)).toEqual(created);
  });

  it('refuses a sentence without date or time and stores nothing', async () => {
    const cal = await fx.newCalendar(NY);
    const error = await rejectsWith(provider.quickAdd(cal, 'Call Bob'), 'invalid_argument');
    expect(error.message).toContain("No date or time found in 'Call Bob'");
    expect((await provider.listEvents(cal, { maxResults: 10, singleEvents: true })).items).toEqual([]);
  });
});

describe('local colours', () => {
  it("offers Google's standard palette", async () => {
    const palette = await provider.colors();
    expect(Object.keys(palette.event)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
    expect(Object.keys(palette.calendar)).toHaveLength(24);
    expect(palette.event['11']).toEqual({ background: '#dc2127', foreground: '#1d1d1d' });
    expect(palette.calendar['1']).toEqual({ background: '#ac725e', foreground: '#1d1d1d' });
  });
});
