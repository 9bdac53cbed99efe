/**
 * Dates in quick-add sentences, relative to today in the calendar's zone: "2026-12-03",
 * "Dec 24", "24th of December 2027", "today", "tonight", "tomorrow", "the day after tomorrow",
 * "in 3 days", "Friday", "next Tuesday", optionally followed by a part of the day.
 *
 * A weekday means the next such day, today included ("Friday" on a Friday is today); "next
 * Friday" is the first Friday after today. A month and day without a year that already passed
 * this year mean next year's.
 */
import { addDays, compareDates, isValidDate, type LocalDate, weekdayOf } from '../time/civil.ts';
import type { DayPart } from './clock.ts';
import { QuickAddFailure, type Sentence } from './text.ts';

export interface FoundDate {
  date: LocalDate;
  part?: DayPart;
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
/** Short weekday names only when capitalised: "sat" and "sun" are words too. */
const SHORT_WEEKDAYS = ['Mon', 'Tue', 'Tues', 'Wed', 'Thu', 'Thur', 'Thurs', 'Fri', 'Sat', 'Sun'];
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?`;
const PART = String.raw`(?:\s+(?:in\s+the\s+)?(morning|afternoon|evening|night))?`;
const ON = String.raw`(?:\bon\s+)?`;
const WEEKDAY_PREFIX = String.raw`(?:\b(?:${WEEKDAYS.join('|')}),?\s+)?`;
const ORDINAL = '(?:st|nd|rd|th)?';
const YEAR = String.raw`(?:,?\s+(\d{4})\b)?`;

const ISO = new RegExp(String.raw`${ON}\b(\d{4})-(\d{1,2})-(\d{1,2})\b(?![:T\d])`, 'i');
const MONTH_DAY = new RegExp(
  String.raw`${ON}${WEEKDAY_PREFIX}\b${MONTH}\s+(\d{1,2})${ORDINAL}\b${YEAR}${PART}`,
  'i',
);
const DAY_MONTH = new RegExp(
  String.raw`${ON}${WEEKDAY_PREFIX}(?:\bthe\s+)?\b(\d{1,2})${ORDINAL}\s+(?:of\s+)?${MONTH}${YEAR}${PART}`,
  'i',
);
const AFTER_TOMORROW = new RegExp(String.raw`\b(?:the\s+)?day\s+after\s+tomorrow\b${PART}`, 'i');
const RELATIVE = new RegExp(String.raw`\b(today|tonight|tomorrow|tmrw)\b${PART}`, 'i');
const IN_DAYS = /\bin\s+(\d{1,3}|a|one|two|three|four|five|six|seven)\s+(days?|weeks?)\b/i;
const WEEKDAY = new RegExp(
  String.raw`${ON}(?:\b(next|this|coming)\s+)?\b(${WEEKDAYS.join('|')})\b${PART}`,
  'i',
);
const SHORT_WEEKDAY = new RegExp(
  String.raw`${ON}(?:\b([Nn]ext|[Tt]his)\s+)?\b(${SHORT_WEEKDAYS.join('|')})\b\.?${PART}`,
);
const PART_TODAY = /\b(?:this|in\s+the)\s+(morning|afternoon|evening)\b/i;

const SMALL: Record<string, number> = { a: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7 };

function partOf(word: string | undefined): DayPart | undefined {
  const w = word?.toLowerCase();
  return w === 'morning' || w === 'afternoon' || w === 'evening' || w === 'night' ? w : undefined;
}

function found(date: LocalDate, part: string | undefined): FoundDate {
  const p = partOf(part);
  return p === undefined ? { date } : { date, part: p };
}

function checked(year: number, month: number, day: number, written: string): LocalDate {
  if (!isValidDate(year, month, day)) {
    throw new QuickAddFailure(`'${written.trim()}' is not a calendar date.`);
  }
  return { year, month, day };
}

function monthDay(
  monthName: string,
  day: string,
  year: string | undefined,
  today: LocalDate,
  written: string,
) {
  const month = MONTHS.indexOf(monthName.slice(0, 3).toLowerCase()) + 1;
  if (year !== undefined) {
    return checked(Number(year), month, Number(day), written);
  }
  const candidate = checked(today.year, month, Number(day), written);
  // A date already past this year means next year's (Feb 29 then needs a leap year).
  return compareDates(candidate, today) < 0
    ? checked(today.year + 1, month, Number(day), written)
    : candidate;
}

function weekday(name: string, qualifier: string | undefined, today: LocalDate): LocalDate {
  const index = WEEKDAYS.findIndex((w) => w.startsWith(name.toLowerCase().slice(0, 3)));
  let ahead = (index - weekdayOf(today) + 7) % 7;
  if (qualifier?.toLowerCase() === 'next' && ahead === 0) {
    ahead = 7;
  }
  return addDays(today, ahead);
}

/** Cuts the first date phrase out of the sentence; null when it has none. */
export function takeDate(sentence: Sentence, today: LocalDate): FoundDate | null {
  let m = sentence.take(ISO);
  if (m !== null) {
    return { date: checked(Number(m[1]), Number(m[2]), Number(m[3]), m[0]) };
  }
  m = sentence.take(MONTH_DAY);
  if (m !== null) {
    return found(monthDay(m[1] ?? '', m[2] ?? '', m[3], today, m[0]), m[4]);
  }
  m = sentence.take(DAY_MONTH);
  if (m !== null) {
    return found(monthDay(m[2] ?? '', m[1] ?? '', m[3], today, m[0]), m[4]);
  }
  m = sentence.take(AFTER_TOMORROW);
  if (m !== null) {
    return found(addDays(today, 2), m[1]);
  }
  m = sentence.take(RELATIVE);
  if (m !== null) {
    const word = (m[1] ?? '').toLowerCase();
    const date = addDays(today, word === 'tomorrow' || word === 'tmrw' ? 1 : 0);
    return found(date, m[2] ?? (word === 'tonight' ? 'evening' : undefined));
  }
  m = sentence.take(IN_DAYS);
  if (m !== null) {
    const n = SMALL[(m[1] ?? '').toLowerCase()] ?? Number(m[1]);
    return { date: addDays(today, (m[2] ?? '').toLowerCase().startsWith('w') ? 7 * n : n) };
  }
  m = sentence.take(WEEKDAY) ?? sentence.take(SHORT_WEEKDAY);
  if (m !== null) {
    return found(weekday(m[2] ?? '', m[1], today), m[3]);
  }
  m = sentence.take(PART_TODAY);
  if (m !== null) {
    return found(today, m[1]);
  }
  return null;
}
