import { formatInstant, unwrap } from '@calgate/core';
import { describe, expect, it } from 'vitest';
import {
  compileSchedule,
  createSchedule,
  formatInterval,
  nextRun,
  nextRuns,
  PAST_TOLERANCE_MS,
  parseInterval,
  type ScheduleSpec,
  validatePrompt,
} from '../src/index.ts';
import { instant, message } from './schedule-support.ts';

const NOW = instant('2026-03-01T12:00:00Z');
const utc = (times: number[]) => times.map((t) => formatInstant(t));

describe('once', () => {
  it('runs once at the instant, given with any offset', () => {
    const created = unwrap(createSchedule({ kind: 'once', at: '2026-03-02T09:00:00+01:00' }, NOW));
    expect(formatInstant(created.firstRun)).toBe('2026-03-02T08:00:00Z');
    expect(created.schedule.spec).toEqual({ kind: 'once', at: instant('2026-03-02T08:00:00Z') });
    expect(utc(nextRuns(created.schedule, NOW, 5))).toEqual(['2026-03-02T08:00:00Z']);
    expect(nextRun(created.schedule, created.firstRun)).toBeNull();
    expect(nextRun(created.schedule, NOW, 1)).toBeNull();
  });

  it('refuses a time in the past beyond the tolerance, and accepts one within it', () => {
    expect(message(createSchedule({ kind: 'once', at: '2026-03-01T11:58:00Z' }, NOW))).toBe(
      "at '2026-03-01T11:58:00Z' is in the past (it is now 2026-03-01T12:00:00Z).",
    );
    const recent = unwrap(createSchedule({ kind: 'once', at: '2026-03-01T11:59:30Z' }, NOW));
    expect(recent.firstRun).toBe(NOW - 30_000);
    expect(PAST_TOLERANCE_MS).toBe(60_000);
  });

  it('requires an offset and a valid date-time', () => {
    expect(message(createSchedule({ kind: 'once', at: '2026-03-02T09:00:00' }, NOW))).toMatch(
      /^at: Invalid date-time '2026-03-02T09:00:00': a UTC offset is required/,
    );
    expect(message(createSchedule({ kind: 'once', at: 'tomorrow' }, NOW))).toMatch(
      /^at: Invalid date-time 'tomorrow'/,
    );
    expect(message(createSchedule({ kind: 'once', at: '2026-02-30T09:00:00Z' }, NOW))).toMatch(
      /2026-02 has days 01–28/,
    );
  });
});

describe('intervals', () => {
  it('parses units, combinations and plain seconds', () => {
    const cases: [string | number, number][] = [
      ['30s', 30_000],
      ['5m', 300_000],
      ['1h', 3_600_000],
      ['1h30m', 5_400_000],
      ['1h 30m', 5_400_000],
      ['2d', 172_800_000],
      ['1d2h3m4s', 93_784_000],
      ['1S', 1000],
      ['45', 45_000],
      [45, 45_000],
      [1, 1000],
    ];
    for (const [text, ms] of cases) {
      expect(unwrap(parseInterval(text))).toBe(ms);
    }
    expect(formatInterval(5_400_000)).toBe('1h30m');
    expect(formatInterval(93_784_000)).toBe('1d2h3m4s');
    expect(formatInterval(30_000)).toBe('30s');
    expect(formatInterval(86_400_000)).toBe('1d');
  });

  it('refuses zero, fractions, bad text and absurd lengths', () => {
    expect(message(parseInterval('0s'))).toBe(
      "Invalid interval '0s': the interval must be at least 1 second.",
    );
    expect(message(parseInterval(0))).toBe("Invalid interval '0': the interval must be at least 1 second.");
    expect(message(parseInterval('0'))).toMatch(/at least 1 second/);
    expect(message(parseInterval(1.5))).toMatch(/whole number of seconds/);
    expect(message(parseInterval(-5))).toMatch(/at least 1 second/);
    expect(message(parseInterval('5 minutes'))).toMatch(
      /^Invalid interval '5 minutes': expected e\.g\. '30s'/,
    );
    expect(message(parseInterval('30m1h'))).toMatch(/expected/);
    expect(message(parseInterval(''))).toMatch(/expected/);
    expect(message(parseInterval('1.5h'))).toMatch(/expected/);
    expect(message(parseInterval('4000d'))).toMatch(/at most 3650 days/);
  });

  it('starts one interval from now without a start, or at the start', () => {
    const plain = unwrap(createSchedule({ kind: 'interval', every: '5m' }, NOW));
    expect(formatInstant(plain.firstRun)).toBe('2026-03-01T12:05:00Z');
    expect(utc(nextRuns(plain.schedule, NOW, 3))).toEqual([
      '2026-03-01T12:05:00Z',
      '2026-03-01T12:10:00Z',
      '2026-03-01T12:15:00Z',
    ]);
    const started = unwrap(
      createSchedule({ kind: 'interval', every: '1h30m', startAt: '2026-03-02T09:00:00+01:00' }, NOW),
    );
    expect(formatInstant(started.firstRun)).toBe('2026-03-02T08:00:00Z');
    expect(utc(nextRuns(started.schedule, NOW, 2))).toEqual(['2026-03-02T08:00:00Z', '2026-03-02T09:30:00Z']);
    // After a run, and between runs, the grid stays anchored at the start.
    expect(utc(nextRuns(started.schedule, instant('2026-03-02T08:00:00Z'), 1))).toEqual([
      '2026-03-02T09:30:00Z',
    ]);
    expect(utc(nextRuns(started.schedule, instant('2026-03-02T10:00:00Z'), 1))).toEqual([
      '2026-03-02T11:00:00Z',
    ]);
  });

  it('counts real time across DST changes', () => {
    const hourly = unwrap(
      createSchedule({ kind: 'interval', every: 3600, startAt: '2026-03-08T00:00:00-05:00' }, NOW),
    );
    expect(nextRuns(hourly.schedule, NOW, 4).map((t) => formatInstant(t, 'America/New_York'))).toEqual([
      '2026-03-08T00:00:00-05:00',
      '2026-03-08T01:00:00-05:00',
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T04:00:00-04:00',
    ]);
  });

  it('refuses a start in the past and a bad interval', () => {
    expect(
      message(createSchedule({ kind: 'interval', every: '5m', startAt: '2026-02-28T12:00:00Z' }, NOW)),
    ).toBe("startAt '2026-02-28T12:00:00Z' is in the past (it is now 2026-03-01T12:00:00Z).");
    expect(message(createSchedule({ kind: 'interval', every: '0s' }, NOW))).toMatch(/at least 1 second/);
  });
});

describe('RRULE', () => {
  it('expands from a wall-clock DTSTART in the zone across DST, by RFC 5545', () => {
    const created = unwrap(
      createSchedule(
        { kind: 'rrule', rrule: 'FREQ=DAILY', dtstart: '2026-03-07T02:30:00', timeZone: 'America/New_York' },
        instant('2026-03-01T00:00:00Z'),
      ),
    );
    expect(created.schedule.spec).toMatchObject({ rrule: 'FREQ=DAILY', dtstart: '2026-03-07T02:30:00' });
    const out = nextRuns(created.schedule, instant('2026-03-06T00:00:00Z'), 3);
    // RFC 5545: a time in the gap moves forward by the gap's length.
    expect(out.map((t) => formatInstant(t, 'America/New_York'))).toEqual([
      '2026-03-07T02:30:00-05:00',
      '2026-03-08T03:30:00-04:00',
      '2026-03-09T02:30:00-04:00',
    ]);
  });

  it('keeps weekly local times across the EU change', () => {
    const created = unwrap(
      createSchedule(
        {
          kind: 'rrule',
          rrule: 'RRULE:FREQ=WEEKLY;BYDAY=MO,FR',
          dtstart: '2026-03-23T09:00:00',
          timeZone: 'Europe/Berlin',
        },
        NOW,
      ),
    );
    expect(created.schedule.spec.kind === 'rrule' && created.schedule.spec.rrule).toBe(
      'FREQ=WEEKLY;BYDAY=MO,FR',
    );
    expect(utc(nextRuns(created.schedule, NOW, 4))).toEqual([
      '2026-03-23T08:00:00Z',
      '2026-03-27T08:00:00Z',
      '2026-03-30T07:00:00Z',
      '2026-04-03T07:00:00Z',
    ]);
  });

  it('starts at the next instance when DTSTART is in the past, and reads a DTSTART with an offset', () => {
    const created = unwrap(
      createSchedule(
        {
          kind: 'rrule',
          rrule: 'FREQ=DAILY',
          dtstart: '2026-01-01T09:00:00+05:45',
          timeZone: 'Asia/Kathmandu',
        },
        NOW,
      ),
    );
    expect(created.schedule.spec).toMatchObject({ dtstart: '2026-01-01T09:00:00' });
    expect(formatInstant(created.firstRun, 'Asia/Kathmandu')).toBe('2026-03-02T09:00:00+05:45');
  });

  it('refuses bad rules, zones, DTSTARTs and rules with nothing left', () => {
    const rrule = (rule: string, dtstart = '2026-03-02T09:00:00', timeZone = 'UTC') =>
      message(createSchedule({ kind: 'rrule', rrule: rule, dtstart, timeZone }, NOW));
    expect(rrule('FREQ=SOMETIMES')).toMatch(/FREQ must be one of/);
    expect(rrule('FREQ=DAILY', '2026-03-02T09:00:00', 'Europe/Berln')).toMatch(
      /Unknown time zone 'Europe\/Berln'/,
    );
    expect(rrule('FREQ=DAILY', 'soon')).toMatch(/^dtstart: Invalid date-time 'soon'/);
    expect(rrule('FREQ=DAILY;COUNT=3', '2026-01-01T09:00:00')).toBe(
      "The RRULE 'FREQ=DAILY;COUNT=3' from 2026-01-01T09:00:00 UTC never runs after now (2026-03-01T12:00:00Z).",
    );
    expect(rrule('FREQ=DAILY;UNTIL=20260201T000000Z', '2026-01-01T09:00:00')).toMatch(/never runs after now/);
    expect(rrule('FREQ=MINUTELY;COUNT=200000')).toMatch(/COUNT may be at most 100,000/);
  });

  it('honours COUNT together with maxRepetitions', () => {
    const created = unwrap(
      createSchedule(
        {
          kind: 'rrule',
          rrule: 'FREQ=DAILY;COUNT=5',
          dtstart: '2026-03-02T09:00:00',
          timeZone: 'UTC',
          maxRepetitions: 3,
        },
        NOW,
      ),
    );
    expect(nextRuns(created.schedule, NOW, 10)).toHaveLength(3);
    expect(nextRuns(created.schedule, NOW, 10, 1)).toHaveLength(2);
    const uncapped = unwrap(
      createSchedule(
        { kind: 'rrule', rrule: 'FREQ=DAILY;COUNT=5', dtstart: '2026-03-02T09:00:00', timeZone: 'UTC' },
        NOW,
      ),
    );
    expect(utc(nextRuns(uncapped.schedule, instant('2026-03-04T09:00:00Z'), 10))).toEqual([
      '2026-03-05T09:00:00Z',
      '2026-03-06T09:00:00Z',
    ]);
  });
});

describe('maxRepetitions and endAt', () => {
  it('stops after maxRepetitions, counting the runs already made', () => {
    const { schedule } = unwrap(createSchedule({ kind: 'interval', every: '1m', maxRepetitions: 3 }, NOW));
    expect(nextRuns(schedule, NOW, 10)).toHaveLength(3);
    expect(nextRuns(schedule, NOW + 60_000, 10, 1)).toHaveLength(2);
    expect(nextRun(schedule, NOW + 120_000, 2)).toBe(NOW + 180_000);
    expect(nextRun(schedule, NOW + 180_000, 3)).toBeNull();
    const cron = unwrap(
      createSchedule({ kind: 'cron', cron: '0 9 * * *', timeZone: 'UTC', maxRepetitions: 2 }, NOW),
    ).schedule;
    expect(utc(nextRuns(cron, NOW, 5))).toEqual(['2026-03-02T09:00:00Z', '2026-03-03T09:00:00Z']);
  });

  it('stops at endAt, inclusive', () => {
    const { schedule, firstRun } = unwrap(
      createSchedule(
        { kind: 'cron', cron: '0 9 * * *', timeZone: 'UTC', endAt: '2026-03-04T09:00:00Z' },
        NOW,
      ),
    );
    expect(formatInstant(firstRun)).toBe('2026-03-02T09:00:00Z');
    expect(utc(nextRuns(schedule, NOW, 10))).toEqual([
      '2026-03-02T09:00:00Z',
      '2026-03-03T09:00:00Z',
      '2026-03-04T09:00:00Z',
    ]);
    expect(nextRun(schedule, instant('2026-03-04T09:00:00Z'))).toBeNull();
  });

  it('refuses maxRepetitions below 1 and an endAt not after the first run', () => {
    for (const maxRepetitions of [0, -1, 1.5]) {
      expect(message(createSchedule({ kind: 'interval', every: '1m', maxRepetitions }, NOW))).toBe(
        `maxRepetitions must be a whole number of at least 1, got ${maxRepetitions}.`,
      );
    }
    expect(
      message(
        createSchedule(
          { kind: 'cron', cron: '0 9 * * *', timeZone: 'Europe/Berlin', endAt: '2026-03-02T08:00:00Z' },
          NOW,
        ),
      ),
    ).toBe("endAt '2026-03-02T08:00:00Z' is not after the first run at 2026-03-02T09:00:00+01:00.");
    expect(
      message(createSchedule({ kind: 'once', at: '2026-03-02T09:00:00Z', endAt: 'never' }, NOW)),
    ).toMatch(/^endAt: Invalid date-time 'never'/);
  });
});

describe('stored specs', () => {
  it('round-trip through JSON and compute the same runs', () => {
    const requests = [
      { kind: 'once', at: '2026-03-05T10:00:00Z' },
      { kind: 'cron', cron: '*/15 9-17 * * MON-FRI', timeZone: 'America/New_York', maxRepetitions: 50 },
      { kind: 'interval', every: '90m', endAt: '2026-03-10T00:00:00Z' },
      {
        kind: 'rrule',
        rrule: 'FREQ=MONTHLY;BYDAY=-1FR',
        dtstart: '2026-03-27T16:00:00',
        timeZone: 'Australia/Lord_Howe',
      },
    ] as const;
    for (const request of requests) {
      const { schedule } = unwrap(createSchedule(request, NOW));
      const stored = JSON.parse(JSON.stringify(schedule.spec)) as ScheduleSpec;
      const loaded = unwrap(compileSchedule(stored));
      expect(nextRuns(loaded, NOW, 20)).toEqual(nextRuns(schedule, NOW, 20));
      expect(nextRuns(loaded, NOW, 20).length).toBeGreaterThan(0);
    }
  });

  it('refuses a damaged spec', () => {
    expect(message(compileSchedule({ kind: 'cron', cron: '* * *', timeZone: 'UTC' }))).toMatch(
      /expected 5 fields/,
    );
    expect(message(compileSchedule({ kind: 'interval', everyMs: 0, startAt: NOW }))).toMatch(
      /whole number of seconds/,
    );
    expect(message(compileSchedule({ kind: 'once', at: Number.NaN }))).toBe('at must be an instant.');
    expect(
      message(
        compileSchedule({
          kind: 'rrule',
          rrule: 'FREQ=DAILY',
          dtstart: '2026-03-02T09:00:00Z',
          timeZone: 'UTC',
        }),
      ),
    ).toMatch(/without an offset/);
    expect(message(compileSchedule({ kind: 'weekly' } as unknown as ScheduleSpec))).toBe(
      "Unknown schedule kind 'weekly'.",
    );
  });
});

describe('prompt text', () => {
  it('accepts ordinary text up to 10,000 characters, counted as code points', () => {
    expect(unwrap(validatePrompt('Review today’s calendar'))).toBe('Review today’s calendar');
    expect(unwrap(validatePrompt('x'.repeat(10_000)))).toHaveLength(10_000);
    expect(validatePrompt('😀'.repeat(10_000)).ok).toBe(true);
  });

  it('refuses empty, too long, NUL-bearing and non-text prompts', () => {
    expect(message(validatePrompt(''))).toBe(
      'The prompt is empty; give the text to deliver when the schedule fires.',
    );
    expect(message(validatePrompt(' \n\t'))).toMatch(/is empty/);
    expect(message(validatePrompt('x'.repeat(10_001)))).toBe(
      'The prompt is 10001 characters long; the limit is 10,000.',
    );
    expect(message(validatePrompt('ab\u0000c'))).toBe('The prompt contains a NUL character (at position 2).');
    expect(message(validatePrompt(42))).toBe('The prompt must be text.');
  });
});
