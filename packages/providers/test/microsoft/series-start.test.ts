/**
 * A series whose start is just after midnight where it recurs falls on another date in UTC: Graph
 * reads `range.startDate` (and `endDate`) as dates in the series' own zone, so Calgate writes the
 * LOCAL date of the start, and the pattern's weekday is the local one, however the start was given
 * (with the zone's offset, in UTC, or in the calendar's zone by default).
 */
import { describe, expect, it } from 'vitest';
import { toGraphEvent } from '../../src/microsoft/mapping.ts';

function value<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

const WEEKLY = ['RRULE:FREQ=WEEKLY;COUNT=3'];

describe('a series starting on another date in UTC than where it recurs', () => {
  it('00:30 at +02:00 (Berlin, Monday 4 May; Sunday 3 May in UTC) writes startDate 2026-05-04 and Monday', () => {
    const body = value(
      toGraphEvent(
        {
          start: { dateTime: '2026-05-04T00:30:00+02:00', timeZone: 'Europe/Berlin' },
          end: { dateTime: '2026-05-04T01:30:00+02:00', timeZone: 'Europe/Berlin' },
          recurrence: WEEKLY,
        },
        { calendarZone: 'UTC' },
      ),
    );
    expect(body.start).toEqual({ dateTime: '2026-05-04T00:30:00', timeZone: 'W. Europe Standard Time' });
    expect(body.recurrence).toEqual({
      pattern: { type: 'weekly', interval: 1, daysOfWeek: ['monday'], firstDayOfWeek: 'monday' },
      range: {
        type: 'numbered',
        startDate: '2026-05-04',
        numberOfOccurrences: 3,
        recurrenceTimeZone: 'W. Europe Standard Time',
      },
    });
  });

  it('the same instant written in UTC, or with no zone on a Berlin calendar, gives the same local date', () => {
    for (const [start, calendarZone] of [
      [{ dateTime: '2026-05-03T22:30:00Z', timeZone: 'Europe/Berlin' }, 'UTC'],
      [{ dateTime: '2026-05-03T22:30:00Z' }, 'Europe/Berlin'],
    ] as const) {
      const body = value(toGraphEvent({ start, recurrence: WEEKLY }, { calendarZone }));
      expect(body.start, JSON.stringify(start)).toEqual({
        dateTime: '2026-05-04T00:30:00',
        timeZone: 'W. Europe Standard Time',
      });
      expect(body.recurrence?.range.startDate, JSON.stringify(start)).toBe('2026-05-04');
      expect(body.recurrence?.pattern.daysOfWeek).toEqual(['monday']);
    }
  });

  it('west of UTC the other way round: 23:30 at -04:00 (New York, Monday 4 May; Tuesday in UTC)', () => {
    const body = value(
      toGraphEvent(
        { start: { dateTime: '2026-05-05T03:30:00Z', timeZone: 'America/New_York' }, recurrence: WEEKLY },
        { calendarZone: 'UTC' },
      ),
    );
    expect(body.start).toEqual({ dateTime: '2026-05-04T23:30:00', timeZone: 'Eastern Standard Time' });
    expect(body.recurrence?.range).toMatchObject({
      startDate: '2026-05-04',
      recurrenceTimeZone: 'Eastern Standard Time',
    });
    expect(body.recurrence?.pattern.daysOfWeek).toEqual(['monday']);
  });

  it('a patch that sets only the rule reads the series start it keeps in the calendar zone', () => {
    const body = value(
      toGraphEvent(
        { recurrence: ['RRULE:FREQ=DAILY;COUNT=5'] },
        { calendarZone: 'Europe/Berlin', currentStart: { dateTime: '2026-05-03T22:30:00Z' } },
      ),
    );
    expect(body.recurrence?.range).toEqual({
      type: 'numbered',
      startDate: '2026-05-04',
      numberOfOccurrences: 5,
      recurrenceTimeZone: 'W. Europe Standard Time',
    });
  });

  it("UNTIL is read as the last local date: 22:30 UTC on 6 May is 00:30 on 7 May in Berlin, that day's occurrence included", () => {
    const body = value(
      toGraphEvent(
        {
          start: { dateTime: '2026-05-04T00:30:00+02:00', timeZone: 'Europe/Berlin' },
          recurrence: ['RRULE:FREQ=DAILY;UNTIL=20260506T223000Z'],
        },
        { calendarZone: 'UTC' },
      ),
    );
    expect(body.recurrence?.range).toEqual({
      type: 'endDate',
      startDate: '2026-05-04',
      endDate: '2026-05-07',
      recurrenceTimeZone: 'W. Europe Standard Time',
    });
  });
});
