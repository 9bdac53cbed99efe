import { formatInstant } from '@calgate/core';
import { describe, expect, it } from 'vitest';
import { createSchedule, nextRun, parseCron } from '../src/index.ts';
import { cronSchedule, instant, message, runs } from './schedule-support.ts';

const fields = (cron: string) => {
  const parsed = parseCron(cron);
  if (!parsed.ok) {
    throw parsed.error;
  }
  const { minutes, hours, daysOfMonth, months, daysOfWeek } = parsed.value;
  return { minutes, hours, daysOfMonth, months, daysOfWeek };
};

describe('cron syntax', () => {
  it('reads *, values, ranges, lists and steps in every field', () => {
    expect(fields('5 4 3 2 1')).toEqual({
      minutes: [5],
      hours: [4],
      daysOfMonth: [3],
      months: [2],
      daysOfWeek: [1],
    });
    const all = fields('* * * * *');
    expect(all.minutes).toHaveLength(60);
    expect(all.hours).toHaveLength(24);
    expect(all.daysOfMonth).toHaveLength(31);
    expect(all.months).toHaveLength(12);
    expect(all.daysOfWeek).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(fields('0-10/5,30 */6 1-7,15 */4 1-5')).toEqual({
      minutes: [0, 5, 10, 30],
      hours: [0, 6, 12, 18],
      daysOfMonth: [1, 2, 3, 4, 5, 6, 7, 15],
      months: [1, 5, 9],
      daysOfWeek: [1, 2, 3, 4, 5],
    });
    expect(fields('10/20 3/8 * * *')).toMatchObject({ minutes: [10, 30, 50], hours: [3, 11, 19] });
    expect(fields('*/7 * */10 * *')).toMatchObject({ minutes: [0, 7, 14, 21, 28, 35, 42, 49, 56] });
    expect(fields('0 0 */10 * *').daysOfMonth).toEqual([1, 11, 21, 31]);
    expect(fields('  0   9\t* *  1  ').daysOfWeek).toEqual([1]);
  });

  it('reads month and weekday names in any case, in lists and ranges; 7 is Sunday', () => {
    expect(fields('0 0 * JAN,jul,Dec *').months).toEqual([1, 7, 12]);
    expect(fields('0 0 * MAR-MAY *').months).toEqual([3, 4, 5]);
    expect(fields('0 9 * * MON-FRI').daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(fields('0 9 * * sat,SUN').daysOfWeek).toEqual([0, 6]);
    expect(fields('0 9 * * 7').daysOfWeek).toEqual([0]);
    expect(fields('0 9 * * 5-7').daysOfWeek).toEqual([0, 5, 6]);
    expect(fields('0 9 * * 0,7').daysOfWeek).toEqual([0]);
    expect(fields('0 9 * * MON-SUN'.replace('SUN', '7')).daysOfWeek).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('expands the @ macros', () => {
    expect(fields('@daily')).toEqual(fields('0 0 * * *'));
    expect(fields('@hourly')).toEqual(fields('0 * * * *'));
    expect(fields('@weekly')).toEqual(fields('0 0 * * 0'));
    expect(fields('@monthly')).toEqual(fields('0 0 1 * *'));
    expect(fields('@yearly')).toEqual(fields('0 0 1 1 *'));
    expect(fields('@annually')).toEqual(fields('0 0 1 1 *'));
  });

  it('names the field and the fault', () => {
    const cases: [string, string][] = [
      ['61 * * * *', 'minute field: 61 is out of range 0–59.'],
      ['* 24 * * *', 'hour field: 24 is out of range 0–23.'],
      ['* * 0 * *', 'day-of-month field: 0 is out of range 1–31.'],
      ['* * 32 * *', 'day-of-month field: 32 is out of range 1–31.'],
      ['* * * 13 *', 'month field: 13 is out of range 1–12.'],
      ['* * * 0 *', 'month field: 0 is out of range 1–12.'],
      ['* * * * 8', 'day-of-week field: 8 is out of range 0–7.'],
      ['* * * FOO *', "month field: unknown name 'FOO' (expected JAN–DEC)."],
      ['* * * * MOX', "day-of-week field: unknown name 'MOX' (expected SUN–SAT)."],
      ['*/0 * * * *', "minute field: step '0' in '*/0' must be a positive whole number."],
      ['* */x * * *', "hour field: step 'x' in '*/x' must be a positive whole number."],
      [
        '* 5-2 * * *',
        "hour field: range '5-2' runs backwards (5 > 2); write it in ascending order or as a list.",
      ],
      [
        '* * * * FRI-MON',
        "day-of-week field: range 'FRI-MON' runs backwards (5 > 1); write it in ascending order or as a list.",
      ],
      ['1,,2 * * * *', "minute field: empty list item in '1,,2'."],
      ['* * L * *', "day-of-month field: 'L' is not a number 1–31."],
      ['* * * * 1#2', "day-of-week field: '1#2' is not a number 0–7 or a name such as MON."],
      ['-5 * * * *', "minute field: '' is not a number 0–59."],
      ['JAN * * * *', "minute field: 'JAN' is not a number 0–59."],
    ];
    for (const [cron, problem] of cases) {
      const result = parseCron(cron);
      expect(message(result)).toBe(`Invalid cron expression '${cron}': ${problem}`);
      expect(result.ok || result.error.code).toBe('invalid_argument');
    }
    expect(message(parseCron('* * * *'))).toMatch(/expected 5 fields, got 4/);
    expect(message(parseCron('* * * * * *'))).toMatch(/expected 5 fields, got 6/);
    expect(message(parseCron(''))).toMatch(/it is empty/);
    expect(message(parseCron('@reboot'))).toMatch(/unknown macro '@reboot'/);
  });

  it('refuses an unknown zone and an expression that never runs', () => {
    const now = instant('2026-01-01T00:00:00Z');
    expect(
      message(createSchedule({ kind: 'cron', cron: '0 9 * * *', timeZone: 'Mars/Olympus' }, now)),
    ).toMatch(/Unknown time zone 'Mars\/Olympus'/);
    for (const cron of ['0 0 30 2 *', '0 0 31 4,6,9,11 *', '0 0 30,31 FEB *']) {
      expect(message(createSchedule({ kind: 'cron', cron, timeZone: 'UTC' }, now))).toBe(
        `The cron expression '${cron}' never runs: no date matches its day-of-month, month and day-of-week fields.`,
      );
    }
    expect(message(createSchedule({ kind: 'cron', cron: '61 * * * *', timeZone: 'UTC' }, now))).toContain(
      'minute field: 61 is out of range 0–59',
    );
  });
});

describe('cron next runs (UTC)', () => {
  it('fires every minute, on steps, and at fixed times', () => {
    expect(runs('* * * * *', 'UTC', '2026-05-05T10:00:30Z', 3)).toEqual([
      '2026-05-05T10:01:00Z',
      '2026-05-05T10:02:00Z',
      '2026-05-05T10:03:00Z',
    ]);
    expect(runs('*/20 */6 * * *', 'UTC', '2026-05-05T06:40:00Z', 4)).toEqual([
      '2026-05-05T12:00:00Z',
      '2026-05-05T12:20:00Z',
      '2026-05-05T12:40:00Z',
      '2026-05-05T18:00:00Z',
    ]);
    expect(runs('0 9 * * *', 'UTC', '2026-05-05T09:00:00Z', 2)).toEqual([
      '2026-05-06T09:00:00Z',
      '2026-05-07T09:00:00Z',
    ]);
  });

  it('runs strictly after the given instant', () => {
    const schedule = cronSchedule('0 9 * * *', 'UTC');
    expect(formatInstant(nextRun(schedule, instant('2026-05-05T08:59:59.999Z')) as number)).toBe(
      '2026-05-05T09:00:00Z',
    );
    expect(formatInstant(nextRun(schedule, instant('2026-05-05T09:00:00Z')) as number)).toBe(
      '2026-05-06T09:00:00Z',
    );
  });

  it('skips to the right weekday, month and year', () => {
    // 2026-05-08 is a Friday.
    expect(runs('0 9 * * MON-FRI', 'UTC', '2026-05-08T10:00:00Z', 2)).toEqual([
      '2026-05-11T09:00:00Z',
      '2026-05-12T09:00:00Z',
    ]);
    expect(runs('0 9 * * SAT,SUN', 'UTC', '2026-05-04T10:00:00Z', 2)).toEqual([
      '2026-05-09T09:00:00Z',
      '2026-05-10T09:00:00Z',
    ]);
    expect(runs('0 0 * * 7', 'UTC', '2026-05-04T10:00:00Z', 1)).toEqual(['2026-05-10T00:00:00Z']);
    expect(runs('15 6 1 JAN,JUL *', 'UTC', '2026-02-01T00:00:00Z', 3)).toEqual([
      '2026-07-01T06:15:00Z',
      '2027-01-01T06:15:00Z',
      '2027-07-01T06:15:00Z',
    ]);
    expect(runs('0 0 31 * *', 'UTC', '2026-01-31T00:00:00Z', 3)).toEqual([
      '2026-03-31T00:00:00Z',
      '2026-05-31T00:00:00Z',
      '2026-07-31T00:00:00Z',
    ]);
    expect(runs('0 12 29 2 *', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2028-02-29T12:00:00Z',
      '2032-02-29T12:00:00Z',
    ]);
  });

  it('combines restricted day-of-month and day-of-week with OR, as Vixie cron does', () => {
    // The 13th of any month, or any Friday: 2026-03-06 and 2026-03-13 are Fridays.
    expect(runs('0 0 13 * FRI', 'UTC', '2026-03-01T00:00:00Z', 4)).toEqual([
      '2026-03-06T00:00:00Z',
      '2026-03-13T00:00:00Z',
      '2026-03-20T00:00:00Z',
      '2026-03-27T00:00:00Z',
    ]);
    expect(runs('0 0 1,15 * MON', 'UTC', '2026-06-01T00:00:00Z', 4)).toEqual([
      '2026-06-08T00:00:00Z',
      '2026-06-15T00:00:00Z',
      '2026-06-22T00:00:00Z',
      '2026-06-29T00:00:00Z',
    ]);
  });

  it('combines them with AND when either field starts with *', () => {
    // Days 1, 11, 21, 31 that are also Mondays.
    expect(runs('0 0 */10 * MON', 'UTC', '2026-05-01T00:00:00Z', 3)).toEqual([
      '2026-05-11T00:00:00Z',
      '2026-06-01T00:00:00Z',
      '2026-08-31T00:00:00Z',
    ]);
    expect(runs('0 0 13 * */7', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2026-09-13T00:00:00Z',
      '2026-12-13T00:00:00Z',
    ]);
  });

  it('jumps by fields instead of walking minutes, even for rare dates', () => {
    const started = performance.now();
    // A 29 February that is a Sunday: decades apart.
    expect(runs('0 0 29 2 */7', 'UTC', '2026-01-01T00:00:00Z', 3)).toEqual([
      '2032-02-29T00:00:00Z',
      '2060-02-29T00:00:00Z',
      '2088-02-29T00:00:00Z',
    ]);
    expect(runs('59 23 31 12 *', 'UTC', '2026-01-01T00:00:00Z', 50)).toHaveLength(50);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('cron in zones without DST changes', () => {
  it('reads the expression in the zone, including a quarter-hour offset', () => {
    expect(runs('0 9 * * *', 'Asia/Kathmandu', '2026-05-05T00:00:00Z', 1)).toEqual([
      '2026-05-05T09:00:00+05:45',
    ]);
    const schedule = cronSchedule('0 9 * * *', 'Asia/Kathmandu');
    expect(formatInstant(nextRun(schedule, instant('2026-05-05T00:00:00Z')) as number)).toBe(
      '2026-05-05T03:15:00Z',
    );
    expect(runs('*/30 23 * * *', 'Asia/Kolkata', '2026-05-05T17:00:00Z', 3)).toEqual([
      '2026-05-05T23:00:00+05:30',
      '2026-05-05T23:30:00+05:30',
      '2026-05-06T23:00:00+05:30',
    ]);
  });
});
