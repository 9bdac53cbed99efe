import { describe, expect, it } from 'vitest';
import {
  graphRangeBound,
  preferTimeZone,
  readGraphTime,
  toEventDate,
  toEventDateTime,
  toGraphTime,
  toTimestamp,
} from '../../src/microsoft/times.ts';

function value<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

describe('reading Graph times', () => {
  it('reads the wall clock in the named Windows zone, seven fractional digits and all', () => {
    const read = value(
      readGraphTime({ dateTime: '2026-03-29T09:00:00.0000000', timeZone: 'W. Europe Standard Time' }),
    );
    expect(read.zone).toBe('Europe/Berlin');
    expect(new Date(read.instant).toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(
      value(
        toEventDateTime({ dateTime: '2026-03-29T09:00:00.0000000', timeZone: 'W. Europe Standard Time' }),
      ),
    ).toEqual({
      dateTime: '2026-03-29T09:00:00+02:00',
      timeZone: 'Europe/Berlin',
    });
  });

  it('is UTC without a zone, and never the machine zone that new Date(text) would use', () => {
    const read = value(readGraphTime({ dateTime: '2026-01-05T08:30:00.0000000' }));
    expect(read.instant).toBe(Date.UTC(2026, 0, 5, 8, 30));
    expect(value(readGraphTime({ dateTime: '2026-01-05T08:30:00.1234567', timeZone: 'UTC' })).instant).toBe(
      Date.UTC(2026, 0, 5, 8, 30, 0, 123),
    );
  });

  it("writes the instant in the event's own zone when Graph answered in another", () => {
    expect(
      value(
        toEventDateTime({ dateTime: '2026-07-01T07:00:00.0000000', timeZone: 'UTC' }, 'America/New_York'),
      ),
    ).toEqual({ dateTime: '2026-07-01T03:00:00-04:00', timeZone: 'America/New_York' });
  });

  it('resolves DST gaps and repeated hours as core does', () => {
    // 02:30 does not exist in Berlin on 2026-03-29: it moves forward by the gap, to 03:30 CEST.
    const gap = value(
      readGraphTime({ dateTime: '2026-03-29T02:30:00.0000000', timeZone: 'W. Europe Standard Time' }),
    );
    expect(new Date(gap.instant).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    // 02:30 happens twice on 2026-10-25: the first (CEST) is meant.
    const overlap = value(
      readGraphTime({ dateTime: '2026-10-25T02:30:00.0000000', timeZone: 'W. Europe Standard Time' }),
    );
    expect(new Date(overlap.instant).toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });

  it('refuses an unreadable date-time or zone with an error naming it', () => {
    const bad = readGraphTime({ dateTime: '29/03/2026 09:00', timeZone: 'UTC' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.message).toMatch(/^Microsoft Graph answered an unreadable time/);
    }
    const zone = readGraphTime({ dateTime: '2026-03-29T09:00:00', timeZone: 'Nowhere Standard Time' });
    expect(zone.ok).toBe(false);
    expect(readGraphTime(undefined).ok).toBe(false);
  });

  it('reads all-day events as their date parts, end exclusive', () => {
    const start = { dateTime: '2026-03-29T00:00:00.0000000', timeZone: 'W. Europe Standard Time' };
    const end = { dateTime: '2026-03-30T00:00:00.0000000', timeZone: 'W. Europe Standard Time' };
    expect(value(toEventDate(start, 'Europe/Berlin'))).toEqual({ date: '2026-03-29' });
    expect(value(toEventDate(end, 'Europe/Berlin'))).toEqual({ date: '2026-03-30' });
    expect(value(toEventDate(start))).toEqual({ date: '2026-03-29' });
  });

  it("reads an all-day event Graph answered in another zone on its own zone's dates", () => {
    // Midnight in Tokyo is 15:00 the day before in UTC.
    expect(
      value(toEventDate({ dateTime: '2026-05-01T15:00:00.0000000', timeZone: 'UTC' }, 'Asia/Tokyo')),
    ).toEqual({
      date: '2026-05-02',
    });
  });

  it('turns Graph timestamps into RFC 3339 instants', () => {
    expect(toTimestamp('2026-03-01T10:00:00.1234567Z')).toBe('2026-03-01T10:00:00.123Z');
    expect(toTimestamp('2026-03-01T10:00:00Z')).toBe('2026-03-01T10:00:00.000Z');
    expect(toTimestamp(undefined)).toBeUndefined();
    expect(toTimestamp('yesterday')).toBeUndefined();
  });
});

describe('writing Graph times', () => {
  it("sends the wall clock in the event's zone with its Windows name", () => {
    expect(
      value(toGraphTime({ dateTime: '2026-03-29T09:00:00+02:00', timeZone: 'Europe/Amsterdam' }, 'UTC')),
    ).toEqual({
      value: { dateTime: '2026-03-29T09:00:00', timeZone: 'W. Europe Standard Time' },
      zone: 'Europe/Amsterdam',
      allDay: false,
    });
  });

  it("reads an offset in the zone given, and a local time in the calendar's zone", () => {
    expect(
      value(toGraphTime({ dateTime: '2026-03-29T07:00:00Z', timeZone: 'Europe/Berlin' }, 'UTC')).value,
    ).toEqual({
      dateTime: '2026-03-29T09:00:00',
      timeZone: 'W. Europe Standard Time',
    });
    expect(value(toGraphTime({ dateTime: '2026-07-01T09:15:00' }, 'America/Chicago')).value).toEqual({
      dateTime: '2026-07-01T09:15:00',
      timeZone: 'Central Standard Time',
    });
  });

  it('sends an all-day date as midnight in its zone', () => {
    expect(value(toGraphTime({ date: '2026-12-24' }, 'Europe/London'))).toEqual({
      value: { dateTime: '2026-12-24T00:00:00', timeZone: 'GMT Standard Time' },
      zone: 'Europe/London',
      allDay: true,
    });
  });

  it('refuses zones Outlook cannot store and malformed values', () => {
    const troll = toGraphTime({ dateTime: '2026-03-29T09:00:00', timeZone: 'Antarctica/Troll' }, 'UTC');
    expect(troll.ok).toBe(false);
    if (!troll.ok) {
      expect(troll.error.message).toMatch(/no Windows equivalent/);
    }
    expect(toGraphTime({ date: '2026-02-30' }, 'UTC').ok).toBe(false);
    expect(toGraphTime({}, 'UTC').ok).toBe(false);
    expect(toGraphTime({ dateTime: 'soon' }, 'UTC').ok).toBe(false);
  });

  it('round-trips: what is sent reads back as the same instant', () => {
    for (const [dateTime, zone] of [
      ['2026-03-29T09:00:00+02:00', 'Europe/Berlin'],
      ['2026-11-01T01:30:00-04:00', 'America/New_York'],
      ['2026-06-15T23:45:00+05:45', 'Asia/Kathmandu'],
    ] as const) {
      const sent = value(toGraphTime({ dateTime, timeZone: zone }, 'UTC'));
      expect(value(readGraphTime(sent.value)).instant).toBe(Date.parse(dateTime));
    }
  });

  it('writes calendarView bounds as UTC instants', () => {
    expect(graphRangeBound(Date.UTC(2026, 2, 29, 7))).toBe('2026-03-29T07:00:00Z');
  });

  it('asks Graph for times in a zone by its Windows name', () => {
    expect(value(preferTimeZone('Europe/Amsterdam'))).toBe('outlook.timezone="W. Europe Standard Time"');
    expect(value(preferTimeZone('UTC'))).toBe('outlook.timezone="UTC"');
    expect(preferTimeZone('Antarctica/Troll').ok).toBe(false);
  });
});
