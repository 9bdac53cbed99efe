import { describe, expect, it } from 'vitest';
import { expandSeries, seriesEnd } from '../src/index.ts';

const berlin = (recurrence: string[]) => ({
  recurrence,
  start: { dateTime: '2026-01-05T09:00:00', timeZone: 'Europe/Berlin' },
  end: { dateTime: '2026-01-05T10:00:00', timeZone: 'Europe/Berlin' },
  defaultTimeZone: 'UTC',
});

describe('expandSeries', () => {
  it('expands a weekly series with EXDATE in every accepted form', () => {
    const result = expandSeries(
      berlin([
        'RRULE:FREQ=DAILY;COUNT=6',
        'EXDATE;TZID=Europe/Berlin:20260106T090000',
        'EXDATE;VALUE=DATE:20260107',
        'EXDATE:20260108T080000Z',
      ]),
    );
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value.map((i) => i.start.dateTime)).toEqual([
        '2026-01-05T09:00:00+01:00',
        '2026-01-09T09:00:00+01:00',
        '2026-01-10T09:00:00+01:00',
      ]);
      expect(result.value[0]).toMatchObject({
        end: { dateTime: '2026-01-05T10:00:00+01:00', timeZone: 'Europe/Berlin' },
        originalStart: { dateTime: '2026-01-05T09:00:00+01:00', timeZone: 'Europe/Berlin' },
        key: '20260105T080000Z',
      });
    }
  });

  it('adds RDATEs, de-duplicates and windows by overlap', () => {
    const result = expandSeries(
      berlin(['RRULE:FREQ=WEEKLY;COUNT=3', 'RDATE;TZID=Europe/Berlin:20260107T150000,20260112T090000']),
      {
        from: Date.parse('2026-01-05T08:30:00Z'),
        to: Date.parse('2026-01-12T08:00:00Z'),
      },
    );
    expect(result.ok && result.value.map((i) => i.start.dateTime)).toEqual([
      '2026-01-05T09:00:00+01:00',
      '2026-01-07T15:00:00+01:00',
    ]);
  });

  it('keeps wall-clock time across DST for timed series', () => {
    const result = expandSeries(berlin(['RRULE:FREQ=WEEKLY;BYDAY=MO']), {
      from: Date.parse('2026-03-20T00:00:00Z'),
      to: Date.parse('2026-04-01T00:00:00Z'),
    });
    expect(result.ok && result.value.map((i) => i.start.dateTime)).toEqual([
      '2026-03-23T09:00:00+01:00',
      '2026-03-30T09:00:00+02:00',
    ]);
    expect(result.ok && result.value.map((i) => i.key)).toEqual(['20260323T080000Z', '20260330T070000Z']);
  });

  it('expands all-day series to dates, across DST, with date keys', () => {
    const result = expandSeries(
      {
        recurrence: ['RRULE:FREQ=DAILY;COUNT=4', 'EXDATE;VALUE=DATE:20260329'],
        start: { date: '2026-03-28' },
        end: { date: '2026-03-29' },
        defaultTimeZone: 'Europe/Berlin',
      },
      {},
    );
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value.map((i) => [i.start.date, i.end.date, i.key])).toEqual([
        ['2026-03-28', '2026-03-29', '20260328'],
        ['2026-03-30', '2026-03-31', '20260330'],
        ['2026-03-31', '2026-04-01', '20260331'],
      ]);
      // Midnight to midnight in Berlin: 24 hours, then 23 would be the 29th (excluded).
      expect(result.value[0] && new Date(result.value[0].startMs).toISOString()).toBe(
        '2026-03-27T23:00:00.000Z',
      );
    }
  });

  it('limits the number of instances', () => {
    const result = expandSeries(berlin(['RRULE:FREQ=DAILY']), { limit: 5 });
    expect(result.ok && result.value).toHaveLength(5);
  });

  it('reports bad lines precisely', () => {
    const cases: [string[], string][] = [
      [['RRULE:FREQ=SOMETIMES'], 'FREQ must be one of'],
      [['EXDATE;TZID=Moon/Base:20260105T090000'], "Unknown TZID 'Moon/Base'"],
      [['EXDATE:2026-01-05'], 'expected YYYYMMDD'],
      [['EXRULE:FREQ=DAILY'], 'EXRULE is deprecated'],
      [['FOO:BAR'], 'Unknown recurrence line'],
      [['EXDATE;VALUE=DATE:20260105T090000'], 'VALUE=DATE'],
    ];
    for (const [lines, message] of cases) {
      const result = expandSeries(berlin(lines));
      expect(result.ok, lines.join()).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe('invalid_argument');
        expect(result.error.message).toContain(message);
      }
    }
    const mixed = expandSeries({
      recurrence: [],
      start: { date: '2026-01-05' },
      end: { dateTime: '2026-01-05T10:00:00Z' },
      defaultTimeZone: 'UTC',
    });
    expect(mixed.ok).toBe(false);
  });

  it('errors clearly on an unbounded series without a window', () => {
    const result = expandSeries(berlin(['RRULE:FREQ=DAILY']));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.message).toContain('more than 10000 instances');
    }
  });
});

describe('seriesEnd', () => {
  it('is the end of the last instance for COUNT', () => {
    expect(seriesEnd(berlin(['RRULE:FREQ=DAILY;COUNT=3']))).toEqual({
      ok: true,
      value: Date.parse('2026-01-07T09:00:00Z'),
    });
  });
  it('finds the last instance before UNTIL', () => {
    expect(seriesEnd(berlin(['RRULE:FREQ=WEEKLY;UNTIL=20260125T000000Z']))).toEqual({
      ok: true,
      value: Date.parse('2026-01-19T09:00:00Z'),
    });
  });
  it('is null for an unbounded series, and the event end without a rule', () => {
    expect(seriesEnd(berlin(['RRULE:FREQ=DAILY']))).toEqual({ ok: true, value: null });
    expect(seriesEnd(berlin([]))).toEqual({ ok: true, value: Date.parse('2026-01-05T09:00:00Z') });
  });
  it('counts RDATEs beyond the rule', () => {
    expect(seriesEnd(berlin(['RRULE:FREQ=DAILY;COUNT=2', 'RDATE:20270101T120000Z']))).toEqual({
      ok: true,
      value: Date.parse('2027-01-01T13:00:00Z'),
    });
  });
});
