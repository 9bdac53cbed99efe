import { describe, expect, it } from 'vitest';
import { expandRule, formatInstant, formatRRule, type LocalDateTime, parseRRule } from '../src/index.ts';

const start = (text: string): LocalDateTime => {
  const [d, t = '00:00:00'] = text.split('T') as [string, string?];
  const [year, month, day] = d.split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = t.split(':').map(Number) as [number, number, number];
  return { year, month, day, hour, minute, second };
};

function expand(rule: string, dtstart: string, zone = 'UTC', options: Parameters<typeof expandRule>[3] = {}) {
  const parsed = parseRRule(rule);
  if (!parsed.ok) {
    throw parsed.error;
  }
  const result = expandRule(parsed.value, start(dtstart), zone, options);
  if (!result.ok) {
    throw result.error;
  }
  return result.value.map((o) => formatInstant(o.instant, zone));
}

describe('parseRRule', () => {
  it('parses every part', () => {
    const r = parseRRule(
      'RRULE:FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2;BYWEEKNO=-1,20;BYYEARDAY=-1,100;BYDAY=MO,TU;BYHOUR=9;BYMINUTE=30;BYSECOND=15;BYSETPOS=1,-1;WKST=SU',
    );
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value).toMatchObject({
        freq: 'YEARLY',
        interval: 2,
        count: 10,
        byMonth: [1, 2],
        byWeekNo: [-1, 20],
        byYearDay: [-1, 100],
        byDay: [{ weekday: 0 }, { weekday: 1 }],
        byHour: [9],
        byMinute: [30],
        bySecond: [15],
        bySetPos: [1, -1],
        wkst: 6,
      });
    }
  });
  it('parses ordinals and UNTIL forms', () => {
    const r = parseRRule('FREQ=MONTHLY;BYDAY=1MO,-1FR,+2WE;UNTIL=20261231T235959Z');
    expect(r.ok && r.value.byDay).toEqual([
      { weekday: 0, n: 1 },
      { weekday: 4, n: -1 },
      { weekday: 2, n: 2 },
    ]);
    expect(r.ok && r.value.until).toEqual({ kind: 'utc', instant: Date.parse('2026-12-31T23:59:59Z') });
    const d = parseRRule('FREQ=DAILY;UNTIL=20260105');
    expect(d.ok && d.value.until).toEqual({ kind: 'date', date: { year: 2026, month: 1, day: 5 } });
  });
  it('round-trips through formatRRule', () => {
    const text = 'FREQ=MONTHLY;INTERVAL=2;COUNT=5;BYMONTHDAY=-1;BYDAY=1MO,FR;BYSETPOS=-1;WKST=SU';
    const r = parseRRule(text);
    expect(r.ok && formatRRule(r.value)).toBe(text);
  });
  it.each([
    ['', 'empty'],
    ['BYDAY=MO', 'FREQ is required'],
    ['FREQ=FORTNIGHTLY', 'FREQ must be one of'],
    ['FREQ=DAILY;FOO=1', "unknown part 'FOO'"],
    ['FREQ=DAILY;COUNT=2;COUNT=3', 'COUNT appears more than once'],
    ['FREQ=DAILY;COUNT=0', 'COUNT must be a positive integer'],
    ['FREQ=DAILY;INTERVAL=-1', 'INTERVAL must be a positive integer'],
    ['FREQ=DAILY;COUNT=3;UNTIL=20260101', 'COUNT and UNTIL cannot both'],
    ['FREQ=DAILY;UNTIL=2026-01-01', 'UNTIL must be a date'],
    ['FREQ=DAILY;UNTIL=20260230', 'not a calendar date'],
    ['FREQ=WEEKLY;BYDAY=XX', "got 'XX'"],
    ['FREQ=WEEKLY;BYDAY=1MO', 'needs FREQ=MONTHLY or YEARLY'],
    ['FREQ=MONTHLY;BYDAY=6MO', '1 to 5'],
    ['FREQ=MONTHLY;BYDAY=0MO', 'ordinal in BYDAY'],
    ['FREQ=MONTHLY;BYMONTHDAY=0', 'BYMONTHDAY value 0 is out of range'],
    ['FREQ=MONTHLY;BYMONTHDAY=32', 'out of range'],
    ['FREQ=DAILY;BYHOUR=24', 'BYHOUR value 24'],
    ['FREQ=DAILY;BYSECOND=60', 'leap seconds'],
    ['FREQ=DAILY;BYMONTH=13', 'BYMONTH value 13'],
    ['FREQ=MONTHLY;BYWEEKNO=1', 'BYWEEKNO is only allowed with FREQ=YEARLY'],
    ['FREQ=DAILY;BYYEARDAY=1', 'BYYEARDAY is not allowed with FREQ=DAILY'],
    ['FREQ=WEEKLY;BYMONTHDAY=1', 'BYMONTHDAY is not allowed with FREQ=WEEKLY'],
    ['FREQ=YEARLY;BYWEEKNO=1;BYDAY=1MO', 'cannot be combined with BYWEEKNO'],
    ['FREQ=DAILY;BYSETPOS=1', 'BYSETPOS needs another BYxxx part'],
    ['FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30,31', 'never occurs'],
    ['FREQ=DAILY;WKST=XY', 'WKST must be one of'],
    ['FREQ=DAILY;COUNT', 'not NAME=VALUE'],
  ])('rejects %j with a specific message', (rule, message) => {
    const r = parseRRule(rule);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('invalid_argument');
      expect(r.error.message).toContain(message);
    }
  });
});

describe('expandRule', () => {
  it('daily with COUNT and INTERVAL', () => {
    expect(expand('FREQ=DAILY;INTERVAL=2;COUNT=3', '2026-01-30T09:00:00')).toEqual([
      '2026-01-30T09:00:00Z',
      '2026-02-01T09:00:00Z',
      '2026-02-03T09:00:00Z',
    ]);
  });
  it('weekly on several days with UNTIL (inclusive)', () => {
    expect(expand('FREQ=WEEKLY;BYDAY=MO,WE,FR;UNTIL=20260112T090000Z', '2026-01-05T09:00:00')).toEqual([
      '2026-01-05T09:00:00Z',
      '2026-01-07T09:00:00Z',
      '2026-01-09T09:00:00Z',
      '2026-01-12T09:00:00Z',
    ]);
  });
  it('a date UNTIL includes the whole day', () => {
    expect(expand('FREQ=DAILY;UNTIL=20260107', '2026-01-05T23:00:00', 'Europe/Berlin')).toHaveLength(3);
  });
  it('WKST changes which days an every-other-week rule picks (RFC 5545 example)', () => {
    const mo = expand('FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO', '1997-08-05T09:00:00');
    const su = expand('FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU', '1997-08-05T09:00:00');
    expect(mo.map((s) => s.slice(0, 10))).toEqual(['1997-08-05', '1997-08-10', '1997-08-19', '1997-08-24']);
    expect(su.map((s) => s.slice(0, 10))).toEqual(['1997-08-05', '1997-08-17', '1997-08-19', '1997-08-31']);
  });
  it('monthly on the last Friday and the first Monday', () => {
    expect(
      expand('FREQ=MONTHLY;BYDAY=-1FR;COUNT=3', '2026-01-30T10:00:00').map((s) => s.slice(0, 10)),
    ).toEqual(['2026-01-30', '2026-02-27', '2026-03-27']);
    expect(
      expand('FREQ=MONTHLY;BYDAY=1MO;COUNT=3', '2026-01-05T10:00:00').map((s) => s.slice(0, 10)),
    ).toEqual(['2026-01-05', '2026-02-02', '2026-03-02']);
  });
  it('skips months without the day (31st) and uses negative month days', () => {
    expect(expand('FREQ=MONTHLY;COUNT=4', '2026-01-31T10:00:00').map((s) => s.slice(0, 10))).toEqual([
      '2026-01-31',
      '2026-03-31',
      '2026-05-31',
      '2026-07-31',
    ]);
    expect(
      expand('FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=3', '2026-01-31T10:00:00').map((s) => s.slice(0, 10)),
    ).toEqual(['2026-01-31', '2026-02-28', '2026-03-31']);
  });
  it('yearly on Feb 29 only in leap years', () => {
    expect(expand('FREQ=YEARLY;COUNT=3', '2024-02-29T12:00:00').map((s) => s.slice(0, 10))).toEqual([
      '2024-02-29',
      '2028-02-29',
      '2032-02-29',
    ]);
  });
  it('BYYEARDAY and BYWEEKNO, negative too', () => {
    expect(
      expand('FREQ=YEARLY;BYYEARDAY=1,-1;COUNT=3', '2026-01-01T00:00:00').map((s) => s.slice(0, 10)),
    ).toEqual(['2026-01-01', '2026-12-31', '2027-01-01']);
    // ISO week 1 of 2026 starts on Monday 2025-12-29; week 53 of 2026 exists (2026-12-28).
    expect(
      expand('FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO;COUNT=2', '2025-12-29T00:00:00').map((s) => s.slice(0, 10)),
    ).toEqual(['2025-12-29', '2027-01-04']);
    expect(
      expand('FREQ=YEARLY;BYWEEKNO=-1;BYDAY=TH;COUNT=2', '2026-12-31T00:00:00').map((s) => s.slice(0, 10)),
    ).toEqual(['2026-12-31', '2027-12-30']);
  });
  it('BYSETPOS picks the last weekday of the month', () => {
    expect(
      expand('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=3', '2026-01-30T17:00:00').map((s) =>
        s.slice(0, 10),
      ),
    ).toEqual(['2026-01-30', '2026-02-27', '2026-03-31']);
  });
  it('BYHOUR/BYMINUTE expand daily rules', () => {
    expect(expand('FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0,30;COUNT=5', '2026-01-05T09:00:00')).toEqual([
      '2026-01-05T09:00:00Z',
      '2026-01-05T09:30:00Z',
      '2026-01-05T17:00:00Z',
      '2026-01-05T17:30:00Z',
      '2026-01-06T09:00:00Z',
    ]);
  });
  it('hourly and minutely rules', () => {
    expect(expand('FREQ=HOURLY;INTERVAL=5;COUNT=4', '2026-01-05T20:00:00')).toEqual([
      '2026-01-05T20:00:00Z',
      '2026-01-06T01:00:00Z',
      '2026-01-06T06:00:00Z',
      '2026-01-06T11:00:00Z',
    ]);
    expect(expand('FREQ=MINUTELY;INTERVAL=20;BYHOUR=9;COUNT=4', '2026-01-05T09:00:00')).toEqual([
      '2026-01-05T09:00:00Z',
      '2026-01-05T09:20:00Z',
      '2026-01-05T09:40:00Z',
      '2026-01-06T09:00:00Z',
    ]);
    const unreachable = parseRRule('FREQ=HOURLY;INTERVAL=2;BYHOUR=3');
    expect(unreachable.ok && expandRule(unreachable.value, start('2026-01-05T10:00:00'), 'UTC').ok).toBe(
      false,
    );
  });
  it('keeps wall-clock time across DST and applies the gap rule', () => {
    expect(expand('FREQ=DAILY;COUNT=3', '2026-03-07T09:00:00', 'America/New_York')).toEqual([
      '2026-03-07T09:00:00-05:00',
      '2026-03-08T09:00:00-04:00',
      '2026-03-09T09:00:00-04:00',
    ]);
    expect(expand('FREQ=DAILY;COUNT=3', '2026-03-28T02:30:00', 'Europe/Berlin')).toEqual([
      '2026-03-28T02:30:00+01:00',
      '2026-03-29T03:30:00+02:00',
      '2026-03-30T02:30:00+02:00',
    ]);
    expect(
      expand('FREQ=DAILY;COUNT=3', '2026-10-24T02:30:00', 'Europe/Berlin').map((s) =>
        formatInstant(Date.parse(s)),
      ),
    ).toEqual(['2026-10-24T00:30:00Z', '2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']);
  });
  it('moves the instance on the day Apia skipped', () => {
    expect(expand('FREQ=DAILY;COUNT=3', '2011-12-29T10:00:00', 'Pacific/Apia')).toEqual([
      '2011-12-29T10:00:00-10:00',
      '2011-12-31T10:00:00+14:00',
      '2011-12-31T10:00:00+14:00',
    ]);
  });
  it('makes DTSTART the first instance even off the rule, unless asked for the bare rule', () => {
    expect(expand('FREQ=WEEKLY;BYDAY=MO;COUNT=2', '2026-01-06T09:00:00')).toEqual([
      '2026-01-06T09:00:00Z',
      '2026-01-12T09:00:00Z',
    ]);
    expect(
      expand('FREQ=WEEKLY;BYDAY=MO;COUNT=2', '2026-01-06T09:00:00', 'UTC', { includeStart: false }),
    ).toEqual(['2026-01-12T09:00:00Z', '2026-01-19T09:00:00Z']);
  });
  it('windows and limits, skipping far-past periods quickly', () => {
    const from = Date.parse('2100-06-01T00:00:00Z');
    const to = Date.parse('2100-06-04T00:00:00Z');
    expect(expand('FREQ=DAILY', '1990-01-01T08:00:00', 'Europe/Berlin', { from, to })).toEqual([
      '2100-06-01T08:00:00+02:00',
      '2100-06-02T08:00:00+02:00',
      '2100-06-03T08:00:00+02:00',
    ]);
    expect(expand('FREQ=DAILY', '2026-01-01T08:00:00', 'UTC', { limit: 2 })).toHaveLength(2);
  });
  it('refuses to expand past the cap with a clear error instead of hanging', () => {
    const rule = parseRRule('FREQ=SECONDLY');
    expect(rule.ok).toBe(true);
    if (rule.ok) {
      const result = expandRule(rule.value, start('2026-01-01T00:00:00'), 'UTC', { maxInstances: 500 });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.message).toContain('more than 500 instances');
      }
      expect(expandRule(rule.value, start('2026-01-01T00:00:00'), 'UTC').ok).toBe(false);
    }
  });
  it('expands 10,000 instances in a few milliseconds', () => {
    const rule = parseRRule('FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;COUNT=10000');
    expect(rule.ok).toBe(true);
    if (rule.ok) {
      expandRule(rule.value, start('2026-01-05T09:00:00'), 'Europe/Berlin'); // warm the zone tables
      const t0 = performance.now();
      const result = expandRule(rule.value, start('2026-01-05T09:00:00'), 'Europe/Berlin');
      const elapsed = performance.now() - t0;
      expect(result.ok && result.value.length).toBe(10_000);
      expect(elapsed).toBeLessThan(100);
    }
  });
});
