/**
 * quickAdd's text parser: a small, deterministic reading of English phrases such as
 * "Lunch with Bob tomorrow at noon", "Standup Friday 9:30am for 15 minutes",
 * "Dinner at Cafe Rouge on 2026-03-14 from 7pm to 9pm" or "Holiday on March 3rd" (all-day).
 * Dates are relative to the emulator's clock in the calendar's time zone.
 */
import {
  addDays,
  formatDate,
  formatInstant,
  fromLocal,
  type LocalDate,
  toLocal,
  weekdayOf,
} from '@calgate/core';
import type { EventDateTime } from '../state.ts';

export interface QuickAddResult {
  summary: string;
  location?: string;
  start: EventDateTime;
  end: EventDateTime;
}

const TIME = String.raw`(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight)`;
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`;

/** Minutes after midnight for a time phrase. */
function minutesOf(text: string): number {
  const t = text.toLowerCase().replace(/\./g, '').replace(/\s+/g, '');
  if (t === 'noon') {
    return 12 * 60;
  }
  if (t === 'midnight') {
    return 0;
  }
  const m = /^(\d{1,2})(?::(\d{2}))?(am|pm)?$/.exec(t);
  if (!m) {
    return 9 * 60;
  }
  let hour = Number(m[1]) % 24;
  if (m[3] === 'pm' && hour < 12) {
    hour += 12;
  }
  if (m[3] === 'am' && hour === 12) {
    hour = 0;
  }
  return hour * 60 + Number(m[2] ?? 0);
}

interface Extracted {
  rest: string;
  match: RegExpExecArray | null;
}

function extract(text: string, pattern: RegExp): Extracted {
  const match = pattern.exec(text);
  if (!match) {
    return { rest: text, match: null };
  }
  return { rest: `${text.slice(0, match.index)} ${text.slice(match.index + match[0].length)}`, match };
}

function dateFrom(
  text: string,
  today: LocalDate,
): { rest: string; date: LocalDate | null; evening: boolean } {
  let r = extract(text, /\b(?:on\s+)?(\d{4})-(\d{2})-(\d{2})\b/i);
  if (r.match) {
    return {
      rest: r.rest,
      date: { year: Number(r.match[1]), month: Number(r.match[2]), day: Number(r.match[3]) },
      evening: false,
    };
  }
  r = extract(text, /\b(today|tonight|tomorrow)\b/i);
  if (r.match) {
    const word = (r.match[1] as string).toLowerCase();
    return { rest: r.rest, date: addDays(today, word === 'tomorrow' ? 1 : 0), evening: word === 'tonight' };
  }
  r = extract(text, new RegExp(String.raw`\b(?:on\s+)?(next\s+)?(${WEEKDAYS.join('|')})\b`, 'i'));
  if (r.match) {
    const wanted = WEEKDAYS.indexOf((r.match[2] as string).toLowerCase());
    let ahead = (wanted - weekdayOf(today) + 7) % 7;
    if (r.match[1] !== undefined && ahead === 0) {
      ahead = 7;
    }
    return { rest: r.rest, date: addDays(today, ahead), evening: false };
  }
  const monthDay = (name: string, day: string): LocalDate => {
    const month = MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;
    const candidate = { year: today.year, month, day: Number(day) };
    // A date already past this year means next year's.
    return formatDate(candidate) < formatDate(today) ? { ...candidate, year: today.year + 1 } : candidate;
  };
  r = extract(text, new RegExp(String.raw`\b(?:on\s+)?${MONTH}\s+(\d{1,2})(?:st|nd|rd|th)?\b`, 'i'));
  if (r.match) {
    return { rest: r.rest, date: monthDay(r.match[1] as string, r.match[2] as string), evening: false };
  }
  r = extract(text, new RegExp(String.raw`\b(?:on\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+${MONTH}\b`, 'i'));
  if (r.match) {
    return { rest: r.rest, date: monthDay(r.match[2] as string, r.match[1] as string), evening: false };
  }
  return { rest: text, date: null, evening: false };
}

export function parseQuickAdd(text: string, now: number, zone: string): QuickAddResult {
  let rest = ` ${text} `;
  let startMin: number | null = null;
  let endMin: number | null = null;
  let r = extract(rest, new RegExp(String.raw`\b(?:from\s+)?(${TIME})\s*(?:-|–|to|until)\s*(${TIME})`, 'i'));
  if (r.match) {
    startMin = minutesOf(r.match[1] as string);
    endMin = minutesOf(r.match[2] as string);
    rest = r.rest;
  } else {
    r = extract(rest, new RegExp(String.raw`\b(?:at\s+)?(${TIME})(?![\w:])`, 'i'));
    if (r.match) {
      startMin = minutesOf(r.match[1] as string);
      rest = r.rest;
    }
  }
  let durationMin = 60;
  r = extract(rest, /\bfor\s+(\d+(?:\.\d+)?)\s*(hours?|hrs?|h|minutes?|mins?|m)\b/i);
  if (r.match) {
    const n = Number(r.match[1]);
    durationMin = /^h/i.test(r.match[2] as string) ? Math.round(n * 60) : Math.round(n);
    rest = r.rest;
  }
  const local = toLocal(now, zone);
  const today: LocalDate = { year: local.year, month: local.month, day: local.day };
  const dated = dateFrom(rest, today);
  rest = dated.rest;
  const date = dated.date ?? today;
  if (startMin === null && dated.evening) {
    startMin = 19 * 60;
  }
  let location: string | undefined;
  r = extract(rest, /\s(?:at|@)\s+(.+?)\s*$/i);
  if (r.match) {
    location = (r.match[1] as string).trim();
    rest = r.rest;
  }
  const summary =
    rest
      .replace(/\s+/g, ' ')
      .replace(/^[\s,]+|[\s,]+(?:on|at)?[\s,]*$/gi, '')
      .trim() || text.trim();
  const out: QuickAddResult = { summary, start: {}, end: {} };
  if (location) {
    out.location = location;
  }
  if (startMin === null) {
    out.start = { date: formatDate(date) };
    out.end = { date: formatDate(addDays(date, 1)) };
    return out;
  }
  const startMs = fromLocal(
    { ...date, hour: Math.floor(startMin / 60), minute: startMin % 60, second: 0 },
    zone,
  );
  let endMs = startMs + durationMin * 60_000;
  if (endMin !== null) {
    endMs = startMs + ((endMin - startMin + 24 * 60) % (24 * 60) || 24 * 60) * 60_000;
  }
  out.start = { dateTime: formatInstant(startMs, zone), timeZone: zone };
  out.end = { dateTime: formatInstant(endMs, zone), timeZone: zone };
  return out;
}
