/**
 * Quick add for calendars Calgate keeps itself: one English sentence to one event, read in the
 * calendar's time zone relative to `now`.
 *
 * Behaviour a user can rely on (strict mode, the default):
 * - a date without a time is an all-day event ("Holiday on 2026-12-24"); "all day" forces one;
 *   "for 3 days" makes it span three days;
 * - a time without a date is the next such time: today, or tomorrow when it has passed;
 * - the event lasts "for …" when given, until the range's end ("14:00-15:30"), else one hour;
 * - "at <place>" that is not a time is the location ("at Room 4");
 * - a sentence with neither date nor time is refused with `invalid_argument` rather than
 *   guessed: an event at an invented time is worse than a clear error;
 * - so are recurring phrases ("every Monday"), which quick add cannot express as one event.
 * Lenient mode reads like Google's quickAdd, which never refuses: no date means today, no time
 * means all day, and "every" is left in the title.
 */
import { CalgateError } from '../errors.ts';
import type { EventTime } from '../recurrence/series.ts';
import { err, ok, type Result } from '../result.ts';
import { addDays, formatDate, type LocalDate } from '../time/civil.ts';
import { formatInstant } from '../time/parse.ts';
import { fromLocal, toLocal, validateTimeZone } from '../time/zone.ts';
import {
  type DayPart,
  DURATION,
  type Duration,
  durationOf,
  RANGE_START,
  rangeOf,
  TIME,
  timeOf,
} from './clock.ts';
import { type FoundDate, takeDate } from './dates.ts';
import { HOLE, QuickAddFailure, Sentence } from './text.ts';

export interface QuickAddOptions {
  /** The reference instant for "today", "tomorrow", "Friday" (epoch ms). */
  now: number;
  /** The calendar's IANA zone: dates and times are read there. */
  timeZone: string;
  mode?: 'strict' | 'lenient';
  /** Length of a timed event without "for …" or an end; 60 by default. */
  defaultDurationMinutes?: number;
}

export interface QuickAddEvent {
  /** Absent when the sentence was only a date and time. */
  summary?: string;
  location?: string;
  start: EventTime;
  end: EventTime;
}

const MAX_TEXT = 1024;
const PART_DEFAULTS: Record<DayPart, number> = {
  morning: 9 * 60,
  afternoon: 14 * 60,
  evening: 19 * 60,
  night: 21 * 60,
};

const RANGE = new RegExp(
  String.raw`(?:\b(from|between)\s+)?\b(${RANGE_START})\s*(?:-|–|—|\bto\b|\buntil\b|\btill\b|\band\b)\s*(${RANGE_START})(?![\w:])`,
  'i',
);
const SINGLE = new RegExp(String.raw`(?:(?:\bat|\bfrom|\bby)\s+|@\s*)?\b(${TIME})(?![\w:])`, 'i');
const BARE_HOUR = /(?:\bat\s+|@\s*)(\d{1,2})(?![\w:.])/i;
const ALL_DAY = /\ball[\s-]day\b/i;
const RECURRING = /\bevery\b/i;
const LOCATION = new RegExp(String.raw`(?:\s(?:at|@)\s+|@)([^${HOLE}]+?)(?=\s*(?:${HOLE}|$)|\s+with\s)`, 'i');

interface Times {
  start?: string;
  end?: string;
  duration?: Duration;
}

const definite = (token: string) => !/^\d{1,2}$/.test(token.trim());

function takeTimes(sentence: Sentence): Times {
  const times: Times = {};
  const range = sentence.takeIf(RANGE, (m) => {
    const [, word, a = '', b = ''] = m;
    if (word?.toLowerCase() !== 'between' && /\band\b/i.test(m[0])) {
      return false;
    }
    return word !== undefined || definite(a) || definite(b);
  });
  if (range !== null) {
    times.start = range[2] ?? '';
    times.end = range[3] ?? '';
  } else {
    const single = sentence.take(SINGLE) ?? sentence.take(BARE_HOUR);
    if (single !== null) {
      times.start = single[1] ?? '';
    }
  }
  const duration = sentence.take(new RegExp(DURATION, 'i'));
  if (duration !== null) {
    times.duration = durationOf(duration[1] ?? '');
  }
  return times;
}

function cleanSummary(text: string): string | undefined {
  const summary = text
    .split(HOLE)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join(' ')
    .replace(/\s+/g, ' ')
    .replace(/^(?:[\s,;:–—-]|\b(?:on|at|from|for|and)\b)+/i, '')
    .replace(/(?:[\s,;:–—-]|\b(?:on|at|from|for|in|by|and)\b)+$/i, '')
    .trim();
  return summary === '' ? undefined : summary;
}

function at(date: LocalDate, minutes: number, zone: string): number {
  const day = addDays(date, Math.floor(minutes / 1440));
  const rest = minutes % 1440;
  return fromLocal({ ...day, hour: Math.floor(rest / 60), minute: rest % 60, second: 0 }, zone);
}

function read(text: string, options: QuickAddOptions, zone: string): QuickAddEvent {
  const strict = (options.mode ?? 'strict') === 'strict';
  if (strict && RECURRING.test(text)) {
    throw new QuickAddFailure(
      `'${text}' describes a recurring event; quick add makes one event. Create it with a recurrence rule instead.`,
    );
  }
  const sentence = new Sentence(text);
  const local = toLocal(options.now, zone);
  const today: LocalDate = { year: local.year, month: local.month, day: local.day };
  // ISO dates first: their digits must not be read as a time range ("12-03").
  const iso = /\d{4}-\d{1,2}-\d{1,2}/.test(sentence.text) ? takeDate(sentence, today) : null;
  const allDay = sentence.take(ALL_DAY) !== null;
  const times = takeTimes(sentence);
  const found: FoundDate | null = iso ?? takeDate(sentence, today);
  const location = sentence.take(LOCATION)?.[1]?.trim();
  const event: QuickAddEvent = { start: {}, end: {} };
  const summary = cleanSummary(sentence.text);
  if (summary !== undefined) {
    event.summary = summary;
  }
  if (location !== undefined && location !== '') {
    event.location = location;
  }
  const startMinutes =
    times.start !== undefined
      ? times.end !== undefined
        ? rangeOf(times.start, times.end, found?.part)[0]
        : timeOf(times.start, found?.part)
      : found?.part !== undefined
        ? PART_DEFAULTS[found.part]
        : undefined;
  if (found === null && startMinutes === undefined && !allDay && strict) {
    throw new QuickAddFailure(
      `No date or time found in '${text}'. Add one, e.g. '${text} tomorrow at 10am' or '${text} on ${formatDate(addDays(today, 1))}'.`,
    );
  }
  if (allDay || startMinutes === undefined) {
    const date = found?.date ?? today;
    if (strict && times.duration !== undefined && 'minutes' in times.duration && !allDay) {
      throw new QuickAddFailure(
        `A duration in hours or minutes needs a start time in '${text}' (e.g. 'at 10am').`,
      );
    }
    const days = times.duration !== undefined && 'days' in times.duration ? times.duration.days : 1;
    event.start = { date: formatDate(date) };
    event.end = { date: formatDate(addDays(date, days)) };
    return event;
  }
  let date = found?.date ?? today;
  if (found === null && strict && at(date, startMinutes, zone) < options.now) {
    date = addDays(date, 1);
  }
  const startMs = at(date, startMinutes, zone);
  let endMs: number;
  if (times.start !== undefined && times.end !== undefined) {
    endMs = at(date, rangeOf(times.start, times.end, found?.part)[1], zone);
  } else if (times.duration !== undefined && 'days' in times.duration) {
    endMs = at(addDays(date, times.duration.days), startMinutes, zone);
  } else {
    const minutes = times.duration?.minutes ?? options.defaultDurationMinutes ?? 60;
    endMs = startMs + minutes * 60_000;
  }
  event.start = { dateTime: formatInstant(startMs, zone), timeZone: zone };
  event.end = { dateTime: formatInstant(endMs, zone), timeZone: zone };
  return event;
}

/** Reads one sentence into an event's title, place and times; see the module comment. */
export function parseQuickAdd(text: string, options: QuickAddOptions): Result<QuickAddEvent, CalgateError> {
  const trimmed = text.trim();
  if (trimmed === '') {
    return err(
      new CalgateError(
        'invalid_argument',
        'text is empty; describe the event, e.g. "Lunch with Ann tomorrow at noon".',
      ),
    );
  }
  if (trimmed.length > MAX_TEXT) {
    return err(new CalgateError('invalid_argument', `text is longer than ${MAX_TEXT} characters.`));
  }
  const zone = validateTimeZone(options.timeZone);
  if (!zone.ok) {
    return zone;
  }
  try {
    return ok(read(trimmed, options, zone.value));
  } catch (error) {
    if (error instanceof QuickAddFailure) {
      return err(error.error);
    }
    throw error;
  }
}
