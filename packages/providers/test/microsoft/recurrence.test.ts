import {
  addDays,
  daysInMonth,
  epochDay,
  expandRule,
  formatDate,
  type LocalDate,
  localFromNaiveMs,
  parseDate,
  parseRRule,
  weekdayOf,
} from '@calgate/core';
import { describe, expect, it } from 'vitest';
import {
  GRAPH_DAYS,
  type GraphDayOfWeek,
  type GraphPatternedRecurrence,
  type GraphRecurrencePattern,
  type GraphRecurrenceRange,
  type GraphWeekIndex,
  type SeriesStart,
  toPatternedRecurrence,
  toRecurrenceLines,
} from '../../src/microsoft/recurrence.ts';
import { windowsZoneFor } from '../../src/microsoft/zones.ts';

function value<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

function failure(result: { ok: true } | { ok: false; error: Error & { code?: string } }): {
  code?: string;
  message: string;
} {
  if (result.ok) {
    throw new Error('expected a refusal');
  }
  return result.error;
}

const at = (date: string, hour = 9, minute = 0, timeZone = 'Europe/Berlin', allDay = false): SeriesStart => {
  const d = value(parseDate(date));
  return { local: { ...d, hour, minute, second: 0 }, timeZone, allDay };
};

const noEnd = (startDate: string): GraphRecurrenceRange => ({ type: 'noEnd', startDate });

describe('Graph recurrence → RRULE', () => {
  const cases: [string, GraphRecurrencePattern, string][] = [
    ['daily', { type: 'daily', interval: 3 }, 'RRULE:FREQ=DAILY;INTERVAL=3'],
    [
      'weekly, weeks from Sunday',
      {
        type: 'weekly',
        interval: 2,
        daysOfWeek: ['friday', 'monday', 'wednesday'],
        firstDayOfWeek: 'sunday',
      },
      'RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE,FR;WKST=SU',
    ],
    [
      'weekly, weeks from Monday',
      { type: 'weekly', interval: 1, daysOfWeek: ['sunday', 'monday'], firstDayOfWeek: 'monday' },
      'RRULE:FREQ=WEEKLY;BYDAY=MO,SU',
    ],
    [
      'monthly on the 15th',
      { type: 'absoluteMonthly', interval: 1, dayOfMonth: 15 },
      'RRULE:FREQ=MONTHLY;BYMONTHDAY=15',
    ],
    [
      'monthly on the 31st (last day)',
      { type: 'absoluteMonthly', interval: 1, dayOfMonth: 31 },
      'RRULE:FREQ=MONTHLY;BYMONTHDAY=-1',
    ],
    [
      'monthly on the 30th (or the last day)',
      { type: 'absoluteMonthly', interval: 2, dayOfMonth: 30 },
      'RRULE:FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=28,29,30;BYSETPOS=-1',
    ],
    [
      'second Tuesday',
      { type: 'relativeMonthly', interval: 1, daysOfWeek: ['tuesday'], index: 'second' },
      'RRULE:FREQ=MONTHLY;BYDAY=2TU',
    ],
    [
      'last weekday of the month',
      {
        type: 'relativeMonthly',
        interval: 1,
        daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
        index: 'last',
      },
      'RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
    ],
    [
      'yearly on 29 February (28th in common years)',
      { type: 'absoluteYearly', interval: 1, month: 2, dayOfMonth: 29 },
      'RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1',
    ],
    [
      'yearly on 30 April',
      { type: 'absoluteYearly', interval: 4, month: 4, dayOfMonth: 30 },
      'RRULE:FREQ=YEARLY;INTERVAL=4;BYMONTH=4;BYMONTHDAY=30',
    ],
    [
      'last Sunday of October',
      { type: 'relativeYearly', interval: 1, month: 10, daysOfWeek: ['sunday'], index: 'last' },
      'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
    ],
  ];
  for (const [name, pattern, line] of cases) {
    it(name, () => {
      expect(value(toRecurrenceLines({ pattern, range: noEnd('2026-01-01') }, at('2026-01-01')))).toEqual([
        line,
      ]);
    });
  }

  it('ignores the fields Graph fills in for patterns that do not use them', () => {
    const recurrence = {
      pattern: {
        type: 'daily',
        interval: 1,
        month: 0,
        dayOfMonth: 0,
        firstDayOfWeek: 'sunday',
        index: 'first',
        daysOfWeek: [],
      },
      range: {
        type: 'numbered',
        startDate: '2026-01-01',
        endDate: '0001-01-01',
        numberOfOccurrences: 5,
        recurrenceTimeZone: 'W. Europe Standard Time',
      },
    } as GraphPatternedRecurrence;
    expect(value(toRecurrenceLines(recurrence, at('2026-01-01')))).toEqual(['RRULE:FREQ=DAILY;COUNT=5']);
  });

  it('ends on the inclusive end date: UNTIL at the end of that day in the series zone, a date for all-day series', () => {
    const range: GraphRecurrenceRange = {
      type: 'endDate',
      startDate: '2026-03-02',
      endDate: '2026-04-10',
      recurrenceTimeZone: 'W. Europe Standard Time',
    };
    const pattern: GraphRecurrencePattern = {
      type: 'weekly',
      interval: 1,
      daysOfWeek: ['friday'],
      firstDayOfWeek: 'monday',
    };
    expect(value(toRecurrenceLines({ pattern, range }, at('2026-03-06')))).toEqual([
      'RRULE:FREQ=WEEKLY;UNTIL=20260410T215959Z;BYDAY=FR',
    ]);
    expect(
      value(toRecurrenceLines({ pattern, range }, at('2026-03-06', 0, 0, 'Europe/Berlin', true))),
    ).toEqual(['RRULE:FREQ=WEEKLY;UNTIL=20260410;BYDAY=FR']);
  });

  it('refuses patterns Graph could not have meant, as an upstream fault', () => {
    const weekly = toRecurrenceLines(
      { pattern: { type: 'weekly', interval: 1 }, range: noEnd('2026-01-01') },
      at('2026-01-01'),
    );
    expect(failure(weekly).message).toMatch(/weekly pattern without daysOfWeek/);
    expect(failure(weekly).code).toBe('upstream_unavailable');
    expect(
      toRecurrenceLines(
        {
          pattern: { type: 'absoluteYearly', interval: 1, month: 4, dayOfMonth: 31 },
          range: noEnd('2026-01-01'),
        },
        at('2026-01-01'),
      ).ok,
    ).toBe(false);
    expect(
      toRecurrenceLines(
        { pattern: { type: 'daily', interval: 0 }, range: noEnd('2026-01-01') },
        at('2026-01-01'),
      ).ok,
    ).toBe(false);
  });
});

describe('RRULE → Graph recurrence', () => {
  it('converts the usual rules', () => {
    expect(value(toPatternedRecurrence(['RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=8'], at('2026-03-02')))).toEqual(
      {
        pattern: {
          type: 'weekly',
          interval: 1,
          daysOfWeek: ['monday', 'wednesday'],
          firstDayOfWeek: 'monday',
        },
        range: {
          type: 'numbered',
          startDate: '2026-03-02',
          numberOfOccurrences: 8,
          recurrenceTimeZone: 'W. Europe Standard Time',
        },
      },
    );
    expect(
      value(toPatternedRecurrence(['RRULE:FREQ=MONTHLY;BYDAY=TU;BYSETPOS=2'], at('2026-03-10'))).pattern,
    ).toEqual({
      type: 'relativeMonthly',
      interval: 1,
      daysOfWeek: ['tuesday'],
      index: 'second',
    });
    // Every weekday, written as a daily rule, is Outlook's weekly pattern.
    expect(
      value(toPatternedRecurrence(['RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR'], at('2026-03-02'))).pattern,
    ).toEqual({
      type: 'weekly',
      interval: 1,
      daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
      firstDayOfWeek: 'monday',
    });
  });

  it('takes the days a rule leaves out from the start', () => {
    expect(value(toPatternedRecurrence(['RRULE:FREQ=WEEKLY;INTERVAL=2'], at('2026-03-05'))).pattern).toEqual({
      type: 'weekly',
      interval: 2,
      daysOfWeek: ['thursday'],
      firstDayOfWeek: 'monday',
    });
    expect(value(toPatternedRecurrence(['RRULE:FREQ=YEARLY'], at('2026-07-14'))).pattern).toEqual({
      type: 'absoluteYearly',
      interval: 1,
      month: 7,
      dayOfMonth: 14,
    });
    expect(value(toPatternedRecurrence(['RRULE:FREQ=MONTHLY'], at('2026-01-28'))).pattern).toEqual({
      type: 'absoluteMonthly',
      interval: 1,
      dayOfMonth: 28,
    });
  });

  it('reads UNTIL as the last local date it still admits', () => {
    // 07:59 UTC is 09:59 in Berlin: the 09:00 occurrence that day is in.
    const inside = value(
      toPatternedRecurrence(['RRULE:FREQ=DAILY;UNTIL=20260410T075900Z'], at('2026-04-01')),
    );
    expect(inside.range).toMatchObject({ type: 'endDate', endDate: '2026-04-10' });
    // 06:00 UTC is 08:00 in Berlin, before that day's 09:00: the 9th is the last date.
    const before = value(
      toPatternedRecurrence(['RRULE:FREQ=DAILY;UNTIL=20260410T060000Z'], at('2026-04-01')),
    );
    expect(before.range).toMatchObject({ type: 'endDate', endDate: '2026-04-09' });
    const date = value(
      toPatternedRecurrence(
        ['RRULE:FREQ=DAILY;UNTIL=20260410'],
        at('2026-04-01', 0, 0, 'Europe/Berlin', true),
      ),
    );
    expect(date.range).toMatchObject({ type: 'endDate', endDate: '2026-04-10' });
  });

  const refusals: [string, string, RegExp][] = [
    ['RRULE:FREQ=HOURLY;INTERVAL=2', '2026-03-02', /repeats hourly, more often than daily/],
    ['RRULE:FREQ=MINUTELY', '2026-03-02', /repeats minutely/],
    ['RRULE:FREQ=DAILY;BYHOUR=9,17', '2026-03-02', /several times of the day/],
    ['RRULE:FREQ=MONTHLY;BYMONTHDAY=1,15', '2026-03-01', /several days of the month/],
    ['RRULE:FREQ=YEARLY;BYWEEKNO=1;BYDAY=MO', '2026-01-05', /weeks of the year/],
    ['RRULE:FREQ=YEARLY;BYYEARDAY=100', '2026-04-10', /days of the year/],
    ['RRULE:FREQ=YEARLY;BYMONTH=1,7;BYMONTHDAY=1', '2026-01-01', /some months/],
    ['RRULE:FREQ=MONTHLY;BYMONTH=3;BYMONTHDAY=2', '2026-03-02', /some months/],
    ['RRULE:FREQ=MONTHLY;BYDAY=5MO', '2026-03-30', /not number 5/],
    ['RRULE:FREQ=MONTHLY;BYDAY=1MO,3MO', '2026-03-02', /several numbered weekdays/],
    ['RRULE:FREQ=MONTHLY;BYDAY=MO', '2026-03-02', /picks one/],
    [
      'RRULE:FREQ=MONTHLY;BYMONTHDAY=31',
      '2026-01-31',
      /skips months without day 31.*BYMONTHDAY=28,29,30,31;BYSETPOS=-1/,
    ],
    ['RRULE:FREQ=MONTHLY', '2026-01-30', /skips months without day 30/],
    ['RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29', '2028-02-29', /skips months without day 29/],
    ['RRULE:FREQ=MONTHLY;BYMONTHDAY=-2', '2026-01-30', /besides the last day/],
    ['RRULE:FREQ=DAILY;INTERVAL=2;BYDAY=MO,TU', '2026-03-02', /every few days on chosen weekdays/],
    ['RRULE:FREQ=YEARLY;BYDAY=20MO', '2026-05-18', /give BYMONTH/],
  ];
  for (const [rule, date, why] of refusals) {
    it(`refuses ${rule}, saying what Outlook can do`, () => {
      const refusal = failure(toPatternedRecurrence([rule], at(date)));
      expect(refusal.code).toBe('invalid_argument');
      expect(refusal.message).toMatch(why);
      expect(refusal.message).toMatch(/Outlook can repeat every N days; every N weeks on chosen weekdays/);
    });
  }

  it('refuses EXDATE/RDATE lines, several rules and none', () => {
    expect(
      failure(
        toPatternedRecurrence(
          ['RRULE:FREQ=DAILY', 'EXDATE;TZID=Europe/Berlin:20260303T090000'],
          at('2026-03-02'),
        ),
      ).message,
    ).toBe(
      "Outlook cannot store 'EXDATE' recurrence lines; give one RRULE, then change or delete single occurrences after creating the series.",
    );
    expect(
      failure(toPatternedRecurrence(['RRULE:FREQ=DAILY', 'RRULE:FREQ=WEEKLY'], at('2026-03-02'))).message,
    ).toMatch(/exactly one RRULE per series, got 2/);
    expect(failure(toPatternedRecurrence([], at('2026-03-02'))).message).toMatch(/got 0/);
    expect(failure(toPatternedRecurrence(['RRULE:FREQ=SOMETIMES'], at('2026-03-02'))).message).toMatch(
      /FREQ must be/,
    );
  });

  it('refuses a start the rule does not produce, naming the first date it does', () => {
    const refusal = failure(toPatternedRecurrence(['RRULE:FREQ=WEEKLY;BYDAY=TU'], at('2026-03-02')));
    expect(refusal.message).toBe(
      "The series starts on 2026-03-02, which its rule 'FREQ=WEEKLY;BYDAY=TU' does not produce (it gives 2026-03-03 first); Outlook starts a series on its pattern's first date, so start the event on one of the rule's dates.",
    );
  });

  it('refuses a zone Outlook cannot store', () => {
    expect(
      failure(toPatternedRecurrence(['RRULE:FREQ=DAILY'], at('2026-03-02', 9, 0, 'Antarctica/Troll')))
        .message,
    ).toMatch(/no Windows equivalent/);
  });
});

/** A small seeded generator (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INDEXES: GraphWeekIndex[] = ['first', 'second', 'third', 'fourth', 'last'];
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kolkata',
  'Australia/Sydney',
  'America/Sao_Paulo',
];

const dayNumber = (d: LocalDate) => epochDay(d.year, d.month, d.day);

/**
 * Graph's dates for a pattern, written from Graph's documentation independently of the
 * converter: periods counted from the range's start date, a missing day of the month moved to
 * the month's last day, the index-th of the matching weekdays, the range's end applied.
 */
function graphDates(pattern: GraphRecurrencePattern, range: GraphRecurrenceRange, limit: number): string[] {
  const start = value(parseDate(range.startDate));
  const from = dayNumber(start);
  const end =
    range.type === 'endDate' ? dayNumber(value(parseDate(range.endDate ?? ''))) : Number.POSITIVE_INFINITY;
  const max = range.type === 'numbered' ? (range.numberOfOccurrences ?? 0) : limit;
  const out: string[] = [];
  const days = (pattern.daysOfWeek ?? []).map((d) => GRAPH_DAYS.indexOf(d));
  const relative = (year: number, month: number): number | undefined => {
    const matches: number[] = [];
    for (let day = 1; day <= daysInMonth(year, month); day++) {
      if (days.includes(weekdayOf({ year, month, day }))) {
        matches.push(epochDay(year, month, day));
      }
    }
    return pattern.index === 'last'
      ? matches[matches.length - 1]
      : matches[INDEXES.indexOf(pattern.index ?? 'first')];
  };
  const take = (day: number | undefined): boolean => {
    if (day === undefined || day < from) {
      return true;
    }
    if (day > end || out.length >= max) {
      return false;
    }
    out.push(formatDate(addDays({ year: 1970, month: 1, day: 1 }, day)));
    return out.length < max;
  };
  for (let period = 0; period < 2000; period++) {
    const k = period * pattern.interval;
    let going = true;
    if (pattern.type === 'daily') {
      going = take(from + k);
    } else if (pattern.type === 'weekly') {
      const first = GRAPH_DAYS.indexOf(pattern.firstDayOfWeek ?? 'sunday');
      const weekStart = from - ((weekdayOf(start) - first + 7) % 7) + k * 7;
      for (let offset = 0; offset < 7 && going; offset++) {
        const day = weekStart + offset;
        if (days.includes(weekdayOf(addDays({ year: 1970, month: 1, day: 1 }, day)))) {
          going = take(day);
        }
      }
    } else if (pattern.type === 'absoluteMonthly' || pattern.type === 'relativeMonthly') {
      const index = start.month - 1 + k;
      const year = start.year + Math.floor(index / 12);
      const month = (index % 12) + 1;
      going = take(
        pattern.type === 'relativeMonthly'
          ? relative(year, month)
          : epochDay(year, month, Math.min(pattern.dayOfMonth ?? 1, daysInMonth(year, month))),
      );
    } else {
      const year = start.year + k;
      const month = pattern.month ?? 1;
      going = take(
        pattern.type === 'relativeYearly'
          ? relative(year, month)
          : epochDay(year, month, Math.min(pattern.dayOfMonth ?? 1, daysInMonth(year, month))),
      );
    }
    if (!going) {
      break;
    }
  }
  return out;
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

function someDays(next: () => number, most: number): GraphDayOfWeek[] {
  const count = 1 + Math.floor(next() * most);
  const chosen = new Set<GraphDayOfWeek>();
  while (chosen.size < count) {
    chosen.add(pick(next, GRAPH_DAYS));
  }
  return GRAPH_DAYS.filter((day) => chosen.has(day));
}

function generate(next: () => number): GraphPatternedRecurrence {
  const type = pick(next, [
    'daily',
    'weekly',
    'absoluteMonthly',
    'relativeMonthly',
    'absoluteYearly',
    'relativeYearly',
  ] as const);
  const interval = next() < 0.5 ? 1 : 1 + Math.floor(next() * 6);
  const pattern: GraphRecurrencePattern = { type, interval };
  if (type === 'weekly') {
    pattern.daysOfWeek = someDays(next, 7);
    pattern.firstDayOfWeek = pick(next, GRAPH_DAYS);
  } else if (type === 'absoluteMonthly') {
    pattern.dayOfMonth = 1 + Math.floor(next() * 31);
  } else if (type === 'relativeMonthly' || type === 'relativeYearly') {
    pattern.daysOfWeek =
      next() < 0.15 ? ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'] : someDays(next, 3);
    pattern.index = pick(next, INDEXES);
  }
  if (type === 'absoluteYearly' || type === 'relativeYearly') {
    pattern.month = 1 + Math.floor(next() * 12);
  }
  if (type === 'absoluteYearly') {
    pattern.dayOfMonth = 1 + Math.floor(next() * daysInMonth(2000, pattern.month ?? 1));
  }
  const anchor = addDays({ year: 2024, month: 1, day: 1 }, Math.floor(next() * 2500));
  const startDate = formatDate(anchor);
  const kind = pick(next, ['numbered', 'endDate', 'noEnd'] as const);
  const range: GraphRecurrenceRange =
    kind === 'numbered'
      ? { type: 'numbered', startDate, numberOfOccurrences: 1 + Math.floor(next() * 25) }
      : kind === 'endDate'
        ? { type: 'endDate', startDate, endDate: formatDate(addDays(anchor, Math.floor(next() * 1500))) }
        : { type: 'noEnd', startDate };
  return { pattern, range };
}

const normal = (pattern: GraphRecurrencePattern): GraphRecurrencePattern => ({
  ...pattern,
  ...(pattern.daysOfWeek ? { daysOfWeek: GRAPH_DAYS.filter((d) => pattern.daysOfWeek?.includes(d)) } : {}),
});

describe('Graph patterns ↔ RRULE, for many generated patterns', () => {
  it('round-trips, and core expands the RRULE to the dates Graph gives', () => {
    const next = random(20260329);
    let checked = 0;
    for (let n = 0; n < 600; n++) {
      const recurrence = generate(next);
      const zone = pick(next, ZONES);
      const allDay = next() < 0.2;
      const hour = allDay ? 0 : Math.floor(next() * 24);
      const minute = allDay ? 0 : pick(next, [0, 15, 30, 45]);
      const expected = graphDates(recurrence.pattern, recurrence.range, 40);
      const [first] = expected;
      if (first === undefined) {
        continue; // the range ends before the pattern's first date
      }
      const label = `${JSON.stringify(recurrence)} in ${zone}${allDay ? ' (all-day)' : ` at ${hour}:${minute}`}`;
      const start: SeriesStart = {
        local: { ...value(parseDate(first)), hour, minute, second: 0 },
        timeZone: zone,
        allDay,
      };
      const withZone = {
        ...recurrence,
        range: { ...recurrence.range, recurrenceTimeZone: value(windowsZoneFor(zone)) },
      };
      const lines = value(toRecurrenceLines(withZone, start));
      const rule = value(parseRRule(lines[0] ?? ''));
      const occurrences = value(expandRule(rule, start.local, zone, { limit: 40 }));
      const dates = occurrences.map((o) => formatDate(localFromNaiveMs(o.local)));
      expect(dates, `${label} → ${lines[0]}`).toEqual(expected);
      for (const o of occurrences) {
        const local = localFromNaiveMs(o.local);
        expect([local.hour, local.minute], label).toEqual([hour, minute]);
      }
      const back = value(toPatternedRecurrence(lines, start));
      expect(back.pattern, `${label} → ${lines[0]}`).toEqual(normal(recurrence.pattern));
      const { startDate: _start, ...range } = recurrence.range;
      expect(back.range, `${label} → ${lines[0]}`).toEqual({
        ...range,
        startDate: first,
        recurrenceTimeZone: value(windowsZoneFor(zone)),
      });
      checked += 1;
    }
    expect(checked).toBeGreaterThan(450);
  });
});
