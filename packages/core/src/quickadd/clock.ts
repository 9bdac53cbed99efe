/**
 * Times of day in quick-add sentences: "2pm", "9:30am", "14:00", "noon", a bare hour after
 * "at", and ranges such as "7-9pm" or "14:00-15:30". An hour without am/pm is read on a
 * working-day clock: 1–6 mean the afternoon ("at 3" is 15:00), 7–12 the morning, 13–23 and
 * hours written with a leading zero as written; "evening"/"tonight" make every hour pm.
 */
import { QuickAddFailure } from './text.ts';

export type DayPart = 'morning' | 'afternoon' | 'evening' | 'night';

const MERIDIEM = String.raw`[ap]\.?m\.?(?![a-z])`;
/** A time that cannot be anything else: with am/pm, with minutes, or a word. */
export const TIME = String.raw`(?:noon|midday|midnight|\d{1,2}(?::\d{2})?\s*${MERIDIEM}|\d{1,2}:\d{2})`;
/** A range start may be a bare hour ("7-9pm"). */
export const RANGE_START = String.raw`(?:noon|midday|midnight|\d{1,2}(?::\d{2})?(?:\s*${MERIDIEM})?)`;

interface Reading {
  hour: number;
  minute: number;
  meridiem?: 'am' | 'pm';
  leadingZero: boolean;
  word?: 'noon' | 'midnight';
}

function read(token: string): Reading {
  const t = token.toLowerCase().replace(/\s+/g, '');
  if (t === 'noon' || t === 'midday') {
    return { hour: 12, minute: 0, leadingZero: false, word: 'noon' };
  }
  if (t === 'midnight') {
    return { hour: 0, minute: 0, leadingZero: false, word: 'midnight' };
  }
  const m = /^(\d{1,2})(?::(\d{2}))?(?:([ap])\.?m\.?)?$/.exec(t);
  if (m === null) {
    throw new QuickAddFailure(`'${token.trim()}' is not a time of day.`);
  }
  const hour = Number(m[1]);
  const minute = Number(m[2] ?? 0);
  const reading: Reading = { hour, minute, leadingZero: (m[1] ?? '').startsWith('0') };
  if (m[3] !== undefined) {
    reading.meridiem = m[3] === 'a' ? 'am' : 'pm';
  }
  const valid = minute <= 59 && (reading.meridiem === undefined ? hour <= 23 : hour >= 1 && hour <= 12);
  if (!valid) {
    throw new QuickAddFailure(`'${token.trim()}' is not a valid time of day.`);
  }
  return reading;
}

function withMeridiem(reading: Reading, meridiem: 'am' | 'pm'): number {
  const hour = reading.hour % 12;
  return (meridiem === 'pm' ? hour + 12 : hour) * 60 + reading.minute;
}

/** Minutes after midnight, using the part of the day as a hint for hours without am/pm. */
function resolve(reading: Reading, part: DayPart | undefined): number {
  if (reading.word !== undefined || reading.meridiem !== undefined) {
    return reading.meridiem === undefined
      ? reading.hour * 60 + reading.minute
      : withMeridiem(reading, reading.meridiem);
  }
  const { hour, minute } = reading;
  if (hour === 0 || hour >= 13 || reading.leadingZero || hour === 12) {
    return hour * 60 + minute;
  }
  if (part === 'morning') {
    return hour * 60 + minute;
  }
  if (part !== undefined || hour <= 6) {
    return (hour + 12) * 60 + minute;
  }
  return hour * 60 + minute;
}

export function timeOf(token: string, part?: DayPart): number {
  return resolve(read(token), part);
}

/** Whether a bare token ("10") may stand for a time: only when the sentence says so ("at 10"). */
export function isBareHour(token: string): boolean {
  return /^\d{1,2}$/.test(token.trim());
}

/**
 * Start and end of a range in minutes after the start's midnight; the end may pass midnight
 * ("10pm-1am" ends at 25:00). A side without am/pm borrows the other's when that keeps the
 * end after the start ("7-9pm" is 19:00–21:00, "11-1pm" is 11:00–13:00).
 */
export function rangeOf(startToken: string, endToken: string, part?: DayPart): [number, number] {
  const a = read(startToken);
  const b = read(endToken);
  let end = resolve(b, part);
  let start: number;
  if (a.meridiem === undefined && a.word === undefined && b.meridiem !== undefined && a.hour <= 12) {
    const same = withMeridiem(a, b.meridiem);
    start = same < end ? same : withMeridiem(a, b.meridiem === 'am' ? 'pm' : 'am');
  } else {
    start = resolve(a, part);
  }
  if (b.meridiem === undefined && b.word === undefined && !b.leadingZero && b.hour >= 1 && b.hour <= 12) {
    // "9am-5" ends at 17:00: the first reading of the end after the start.
    const candidates = [(b.hour % 12) * 60 + b.minute, ((b.hour % 12) + 12) * 60 + b.minute];
    end = candidates.find((c) => c > start) ?? end;
  }
  if (end <= start) {
    end += 24 * 60;
  }
  return [start, end];
}

const WORD_NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
};

/** "for 2 hours", "for an hour", "for half an hour", "for 1h30", "for 90 min", "for 3 days". */
export const DURATION = String.raw`\bfor\s+((?:half\s+an?\s+hour)|(?:(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|six)\s*(?:hours?|hrs?|h|minutes?|mins?|m|days?|d)(?:\s*(?:and\s+)?\d{1,2}\s*(?:minutes?|mins?|m)?)?))(?![\w])`;

export type Duration = { minutes: number } | { days: number };

export function durationOf(clause: string): Duration {
  const text = clause.toLowerCase().trim();
  if (/^half\s+an?\s+hour$/.test(text)) {
    return { minutes: 30 };
  }
  const m =
    /^(\d+(?:\.\d+)?|an?|one|two|three|four|five|six)\s*([a-z]+)(?:\s*(?:and\s+)?(\d{1,2})\s*[a-z]*)?$/.exec(
      text,
    );
  if (m === null) {
    throw new QuickAddFailure(`'for ${clause}' is not a duration I can read.`);
  }
  const amount = WORD_NUMBERS[m[1] ?? ''] ?? Number(m[1]);
  const unit = m[2] ?? '';
  const extra = Number(m[3] ?? 0);
  let result: Duration;
  if (unit.startsWith('d')) {
    result = { days: Math.round(amount) };
  } else if (unit.startsWith('h')) {
    result = { minutes: Math.round(amount * 60) + extra };
  } else {
    result = { minutes: Math.round(amount) };
  }
  const size = 'days' in result ? result.days : result.minutes;
  if (!(size > 0) || ('days' in result ? size > 366 : size > 31 * 24 * 60)) {
    throw new QuickAddFailure(`'for ${clause}' is not a usable duration.`);
  }
  return result;
}
