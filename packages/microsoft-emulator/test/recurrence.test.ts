import { describe, expect, it } from 'vitest';
import { occurrenceDates, type PatternedRecurrence, recurrenceProblem } from '../src/recurrence.ts';
import { instantOf, isoDate, localAt, parseDate } from '../src/time.ts';

const dates = (rec: PatternedRecurrence, until = '2030-12-31') =>
  [...occurrenceDates(rec, parseDate(until) as number)].map(isoDate);

const range = (startDate: string, rest: Partial<PatternedRecurrence['range']> = {}) => ({
  type: 'noEnd' as const,
  startDate,
  ...rest,
});

describe('patternedRecurrence expansion', () => {
  it('daily every 2 days, numbered', () => {
    expect(
      dates({
        pattern: { type: 'daily', interval: 2 },
        range: range('2026-01-30', { type: 'numbered', numberOfOccurrences: 3 }),
      }),
    ).toEqual(['2026-01-30', '2026-02-01', '2026-02-03']);
  });

  it('weekly on several days every other week, weeks starting on firstDayOfWeek, endDate inclusive', () => {
    // 2026-03-04 is a Wednesday. Weeks start on Monday: week 0 is Mar 2–8, week 2 is Mar 16–22.
    const rec: PatternedRecurrence = {
      pattern: {
        type: 'weekly',
        interval: 2,
        daysOfWeek: ['monday', 'wednesday', 'sunday'],
        firstDayOfWeek: 'monday',
      },
      range: range('2026-03-04', { type: 'endDate', endDate: '2026-03-18' }),
    };
    expect(dates(rec)).toEqual(['2026-03-04', '2026-03-08', '2026-03-16', '2026-03-18']);
    // With weeks starting on Sunday, Sunday Mar 8 opens week 1 (skipped) and Mar 15 opens week 2.
    rec.pattern.firstDayOfWeek = 'sunday';
    expect(dates(rec)).toEqual(['2026-03-04', '2026-03-15', '2026-03-16', '2026-03-18']);
  });

  it('absoluteMonthly on the 31st falls on the last day of shorter months', () => {
    expect(
      dates({
        pattern: { type: 'absoluteMonthly', interval: 1, dayOfMonth: 31 },
        range: range('2026-01-31', { type: 'numbered', numberOfOccurrences: 4 }),
      }),
    ).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']);
  });

  it('relativeMonthly: the last Friday, and the first weekday', () => {
    expect(
      dates({
        pattern: { type: 'relativeMonthly', interval: 1, daysOfWeek: ['friday'], index: 'last' },
        range: range('2026-01-01', { type: 'numbered', numberOfOccurrences: 3 }),
      }),
    ).toEqual(['2026-01-30', '2026-02-27', '2026-03-27']);
    expect(
      dates({
        pattern: {
          type: 'relativeMonthly',
          interval: 2,
          daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
          index: 'first',
        },
        range: range('2026-08-01', { type: 'numbered', numberOfOccurrences: 2 }),
      }),
    ).toEqual(['2026-08-03', '2026-10-01']);
  });

  it('absoluteYearly and relativeYearly', () => {
    expect(
      dates({
        pattern: { type: 'absoluteYearly', interval: 1, month: 2, dayOfMonth: 29 },
        range: range('2024-02-29', { type: 'numbered', numberOfOccurrences: 3 }),
      }),
    ).toEqual(['2024-02-29', '2025-02-28', '2026-02-28']);
    expect(
      dates({
        pattern: {
          type: 'relativeYearly',
          interval: 1,
          month: 11,
          daysOfWeek: ['thursday'],
          index: 'fourth',
        },
        range: range('2026-01-01', { type: 'endDate', endDate: '2027-12-31' }),
      }),
    ).toEqual(['2026-11-26', '2027-11-25']);
  });

  it('noEnd stops at the horizon asked for; dates before startDate never count', () => {
    expect(
      dates(
        {
          pattern: { type: 'weekly', interval: 1, daysOfWeek: ['monday', 'friday'] },
          range: range('2026-06-03'),
        },
        '2026-06-12',
      ),
    ).toEqual(['2026-06-05', '2026-06-08', '2026-06-12']);
  });

  it('refuses what Graph refuses', () => {
    const weekly = { pattern: { type: 'weekly' as const, interval: 1 }, range: range('2026-01-01') };
    expect(recurrenceProblem(weekly)).toMatch(/needs daysOfWeek/);
    expect(
      recurrenceProblem({ pattern: { type: 'daily', interval: 0 }, range: range('2026-01-01') }),
    ).toMatch(/interval/);
    expect(
      recurrenceProblem({
        pattern: { type: 'daily', interval: 1 },
        range: range('2026-01-01', { type: 'numbered' }),
      }),
    ).toMatch(/numberOfOccurrences/);
    expect(
      recurrenceProblem({ pattern: { type: 'hourly' as never, interval: 1 }, range: range('2026-01-01') }),
    ).toMatch(/not supported/);
  });
});

describe('wall clocks', () => {
  it('keeps 09:00 local across a DST change and moves a time in the gap forward', () => {
    const before = instantOf(
      { year: 2026, month: 3, day: 28, hour: 9, minute: 0, second: 0 },
      'Europe/Berlin',
    );
    const after = instantOf(
      { year: 2026, month: 3, day: 30, hour: 9, minute: 0, second: 0 },
      'Europe/Berlin',
    );
    expect(new Date(before).toISOString()).toBe('2026-03-28T08:00:00.000Z');
    expect(new Date(after).toISOString()).toBe('2026-03-30T07:00:00.000Z');
    const gap = instantOf({ year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0 }, 'Europe/Berlin');
    expect(localAt(gap, 'Europe/Berlin')).toBe('2026-03-29T03:30:00.0000000');
    const repeated = instantOf(
      { year: 2026, month: 10, day: 25, hour: 2, minute: 30, second: 0 },
      'Europe/Berlin',
    );
    expect(new Date(repeated).toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });
});
