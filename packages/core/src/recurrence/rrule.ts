/**
 * RFC 5545 RRULE values: the parsed shape, a parser that reports the first problem precisely
 * (and never throws), and a formatter back to text.
 */
import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import { isValidDate, type LocalDate, type LocalDateTime } from '../time/civil.ts';

export const FREQUENCIES = [
  'YEARLY',
  'MONTHLY',
  'WEEKLY',
  'DAILY',
  'HOURLY',
  'MINUTELY',
  'SECONDLY',
] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** Two-letter weekday codes in ISO order: index 0 is Monday. */
export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export type WeekdayCode = (typeof WEEKDAYS)[number];

/** A BYDAY entry: weekday 0 = Monday … 6 = Sunday, and the optional ordinal (1MO, -1FR). */
export interface ByDay {
  weekday: number;
  n?: number;
}

/** UNTIL as written: a date, a UTC date-time, or a floating date-time (read in DTSTART's zone). */
export type Until =
  | { kind: 'date'; date: LocalDate }
  | { kind: 'utc'; instant: number }
  | { kind: 'local'; local: LocalDateTime };

export interface RRule {
  freq: Frequency;
  interval: number;
  count?: number;
  until?: Until;
  bySecond?: number[];
  byMinute?: number[];
  byHour?: number[];
  byDay?: ByDay[];
  byMonthDay?: number[];
  byYearDay?: number[];
  byWeekNo?: number[];
  byMonth?: number[];
  bySetPos?: number[];
  /** Week start, 0 = Monday (the default) … 6 = Sunday. */
  wkst: number;
}

type ListPart =
  | 'BYSECOND'
  | 'BYMINUTE'
  | 'BYHOUR'
  | 'BYMONTHDAY'
  | 'BYYEARDAY'
  | 'BYWEEKNO'
  | 'BYMONTH'
  | 'BYSETPOS';

const LIST_RANGES: Record<ListPart, { min: number; max: number; signed: boolean; key: keyof RRule }> = {
  BYSECOND: { min: 0, max: 59, signed: false, key: 'bySecond' },
  BYMINUTE: { min: 0, max: 59, signed: false, key: 'byMinute' },
  BYHOUR: { min: 0, max: 23, signed: false, key: 'byHour' },
  BYMONTHDAY: { min: 1, max: 31, signed: true, key: 'byMonthDay' },
  BYYEARDAY: { min: 1, max: 366, signed: true, key: 'byYearDay' },
  BYWEEKNO: { min: 1, max: 53, signed: true, key: 'byWeekNo' },
  BYMONTH: { min: 1, max: 12, signed: false, key: 'byMonth' },
  BYSETPOS: { min: 1, max: 366, signed: true, key: 'bySetPos' },
};

const KNOWN_PARTS = new Set([
  'FREQ',
  'INTERVAL',
  'COUNT',
  'UNTIL',
  'BYDAY',
  'WKST',
  ...Object.keys(LIST_RANGES),
]);

function fail(rule: string, message: string): Result<never, CalgateError> {
  return err(
    new CalgateError('invalid_argument', `Invalid RRULE '${rule}': ${message}`, { context: { rule } }),
  );
}

const INTEGER = /^[+-]?\d{1,6}$/;
const BYDAY_ITEM = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;
const UNTIL_VALUE = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$/;

function parseList(rule: string, name: ListPart, value: string): Result<number[], CalgateError> {
  const { min, max, signed } = LIST_RANGES[name];
  const range = signed ? `${min} to ${max} or -${max} to -${min}` : `${min} to ${max}`;
  const out: number[] = [];
  for (const item of value.split(',')) {
    if (!INTEGER.test(item)) {
      return fail(rule, `${name} takes comma-separated integers (${range}), got '${item}'.`);
    }
    const n = Number(item);
    const abs = Math.abs(n);
    if ((n < 0 && !signed) || abs < min || abs > max || (signed && n === 0)) {
      const hint = name === 'BYSECOND' && n === 60 ? ' (leap seconds are not supported)' : '';
      return fail(rule, `${name} value ${item} is out of range${hint}; allowed: ${range}.`);
    }
    if (!out.includes(n)) {
      out.push(n);
    }
  }
  return ok(out);
}

function parseUntil(rule: string, value: string): Result<Until, CalgateError> {
  const m = UNTIL_VALUE.exec(value);
  if (m === null) {
    return fail(
      rule,
      `UNTIL must be a date (20260105) or a UTC date-time (20260105T090000Z), got '${value}'.`,
    );
  }
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (!isValidDate(year, month, day)) {
    return fail(rule, `UNTIL '${value}' is not a calendar date.`);
  }
  if (m[4] === undefined) {
    return ok({ kind: 'date', date: { year, month, day } });
  }
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (hour > 23 || minute > 59 || second > 59) {
    return fail(rule, `UNTIL '${value}' has an invalid time of day.`);
  }
  if (m[7] === 'Z') {
    return ok({ kind: 'utc', instant: Date.UTC(year, month - 1, day, hour, minute, second) });
  }
  return ok({ kind: 'local', local: { year, month, day, hour, minute, second } });
}

function parseByDay(rule: string, value: string): Result<ByDay[], CalgateError> {
  const out: ByDay[] = [];
  for (const item of value.split(',')) {
    const m = BYDAY_ITEM.exec(item);
    if (m === null) {
      return fail(rule, `BYDAY takes weekdays like MO, TU or with an ordinal like 1MO, -1FR; got '${item}'.`);
    }
    const weekday = WEEKDAYS.indexOf(m[2] as WeekdayCode);
    if (m[1] === undefined) {
      out.push({ weekday });
      continue;
    }
    const n = Number(m[1]);
    if (n === 0 || Math.abs(n) > 53) {
      return fail(rule, `the ordinal in BYDAY '${item}' must be 1 to 53 or -1 to -53.`);
    }
    out.push({ weekday, n });
  }
  return ok(out);
}

/**
 * Parses an RRULE value (`FREQ=WEEKLY;BYDAY=MO,WE`, with or without the `RRULE:` prefix).
 * Rejects what RFC 5545 forbids (COUNT with UNTIL, BYWEEKNO outside YEARLY, …) with a message
 * naming the part at fault.
 */
export function parseRRule(text: string): Result<RRule, CalgateError> {
  const rule = String(text ?? '').trim();
  const body = rule.toUpperCase().startsWith('RRULE:') ? rule.slice(6) : rule;
  if (body === '') {
    return fail(rule, "it is empty; expected e.g. 'FREQ=WEEKLY;BYDAY=MO'.");
  }
  const parts = new Map<string, string>();
  for (const piece of body.split(';')) {
    if (piece === '') {
      continue;
    }
    const eq = piece.indexOf('=');
    if (eq <= 0) {
      return fail(rule, `'${piece}' is not NAME=VALUE.`);
    }
    const name = piece.slice(0, eq).toUpperCase();
    const value = piece.slice(eq + 1).toUpperCase();
    if (!KNOWN_PARTS.has(name)) {
      return fail(rule, `unknown part '${name}'.`);
    }
    if (parts.has(name)) {
      return fail(rule, `${name} appears more than once.`);
    }
    if (value === '') {
      return fail(rule, `${name} has no value.`);
    }
    parts.set(name, value);
  }
  const freq = parts.get('FREQ');
  if (freq === undefined) {
    return fail(rule, `FREQ is required (one of ${FREQUENCIES.join(', ')}).`);
  }
  if (!(FREQUENCIES as readonly string[]).includes(freq)) {
    return fail(rule, `FREQ must be one of ${FREQUENCIES.join(', ')}, got '${freq}'.`);
  }
  const out: RRule = { freq: freq as Frequency, interval: 1, wkst: 0 };
  for (const [name, value] of parts) {
    switch (name) {
      case 'FREQ':
        break;
      case 'INTERVAL':
      case 'COUNT': {
        if (!/^\d{1,9}$/.test(value) || Number(value) < 1) {
          return fail(rule, `${name} must be a positive integer, got '${value}'.`);
        }
        if (name === 'INTERVAL') {
          out.interval = Number(value);
        } else {
          out.count = Number(value);
        }
        break;
      }
      case 'UNTIL': {
        const until = parseUntil(rule, value);
        if (!until.ok) {
          return until;
        }
        out.until = until.value;
        break;
      }
      case 'WKST': {
        const wkst = WEEKDAYS.indexOf(value as WeekdayCode);
        if (wkst < 0) {
          return fail(rule, `WKST must be one of ${WEEKDAYS.join(', ')}, got '${value}'.`);
        }
        out.wkst = wkst;
        break;
      }
      case 'BYDAY': {
        const byDay = parseByDay(rule, value);
        if (!byDay.ok) {
          return byDay;
        }
        out.byDay = byDay.value;
        break;
      }
      default: {
        const list = parseList(rule, name as ListPart, value);
        if (!list.ok) {
          return list;
        }
        (out as unknown as Record<string, number[]>)[LIST_RANGES[name as ListPart].key] = list.value;
      }
    }
  }
  return checkCombinations(rule, out);
}

function checkCombinations(rule: string, r: RRule): Result<RRule, CalgateError> {
  if (r.count !== undefined && r.until !== undefined) {
    return fail(rule, 'COUNT and UNTIL cannot both be given.');
  }
  if (r.byWeekNo && r.freq !== 'YEARLY') {
    return fail(rule, 'BYWEEKNO is only allowed with FREQ=YEARLY.');
  }
  if (r.byYearDay && (r.freq === 'DAILY' || r.freq === 'WEEKLY' || r.freq === 'MONTHLY')) {
    return fail(rule, `BYYEARDAY is not allowed with FREQ=${r.freq}.`);
  }
  if (r.byMonthDay && r.freq === 'WEEKLY') {
    return fail(rule, 'BYMONTHDAY is not allowed with FREQ=WEEKLY.');
  }
  if (r.byDay?.some((d) => d.n !== undefined)) {
    if (r.freq !== 'MONTHLY' && r.freq !== 'YEARLY') {
      return fail(
        rule,
        `BYDAY with an ordinal (e.g. 1MO, -1FR) needs FREQ=MONTHLY or YEARLY, not ${r.freq}.`,
      );
    }
    if (r.freq === 'YEARLY' && r.byWeekNo) {
      return fail(rule, 'BYDAY with an ordinal cannot be combined with BYWEEKNO.');
    }
    if (r.freq === 'MONTHLY' && r.byDay.some((d) => d.n !== undefined && Math.abs(d.n) > 5)) {
      return fail(rule, 'with FREQ=MONTHLY a BYDAY ordinal must be 1 to 5 or -1 to -5.');
    }
  }
  const hasOtherBy =
    r.bySecond || r.byMinute || r.byHour || r.byDay || r.byMonthDay || r.byYearDay || r.byWeekNo || r.byMonth;
  if (r.bySetPos && !hasOtherBy) {
    return fail(rule, 'BYSETPOS needs another BYxxx part (e.g. BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1).');
  }
  if (r.byMonth && r.byMonthDay?.every((d) => d > 0)) {
    // A rule like BYMONTH=2;BYMONTHDAY=30 can never produce anything.
    const possible = r.byMonth.some((m) => r.byMonthDay?.some((d) => d <= (MAX_MONTH_DAYS[m - 1] ?? 31)));
    if (!possible) {
      return fail(rule, 'no month in BYMONTH has any of the days in BYMONTHDAY, so the rule never occurs.');
    }
  }
  return ok(r);
}

const MAX_MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The RRULE value text (without the `RRULE:` prefix), parts in a fixed order. */
export function formatRRule(r: RRule): string {
  const parts = [`FREQ=${r.freq}`];
  if (r.interval !== 1) {
    parts.push(`INTERVAL=${r.interval}`);
  }
  if (r.count !== undefined) {
    parts.push(`COUNT=${r.count}`);
  }
  if (r.until) {
    const u = r.until;
    if (u.kind === 'date') {
      parts.push(`UNTIL=${pad(u.date.year, 4)}${pad(u.date.month)}${pad(u.date.day)}`);
    } else if (u.kind === 'utc') {
      parts.push(
        `UNTIL=${new Date(u.instant)
          .toISOString()
          .replace(/[-:]/g, '')
          .replace(/\.\d{3}/, '')}`,
      );
    } else {
      const l = u.local;
      parts.push(
        `UNTIL=${pad(l.year, 4)}${pad(l.month)}${pad(l.day)}T${pad(l.hour)}${pad(l.minute)}${pad(l.second)}`,
      );
    }
  }
  const lists: [string, number[] | undefined][] = [
    ['BYMONTH', r.byMonth],
    ['BYWEEKNO', r.byWeekNo],
    ['BYYEARDAY', r.byYearDay],
    ['BYMONTHDAY', r.byMonthDay],
  ];
  for (const [name, values] of lists) {
    if (values) {
      parts.push(`${name}=${values.join(',')}`);
    }
  }
  if (r.byDay) {
    parts.push(`BYDAY=${r.byDay.map((d) => `${d.n ?? ''}${WEEKDAYS[d.weekday]}`).join(',')}`);
  }
  for (const [name, values] of [
    ['BYHOUR', r.byHour],
    ['BYMINUTE', r.byMinute],
    ['BYSECOND', r.bySecond],
    ['BYSETPOS', r.bySetPos],
  ] as [string, number[] | undefined][]) {
    if (values) {
      parts.push(`${name}=${values.join(',')}`);
    }
  }
  if (r.wkst !== 0) {
    parts.push(`WKST=${WEEKDAYS[r.wkst]}`);
  }
  return parts.join(';');
}
