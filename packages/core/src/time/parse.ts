/**
 * Parsing and formatting of RFC 3339 date-times and `YYYY-MM-DD` dates, with errors that say
 * what was wrong and what a valid value looks like.
 */
import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import {
  daysInMonth,
  formatDate,
  formatLocalDateTime,
  formatNaiveMs,
  InstantTexts,
  type LocalDate,
  type LocalDateTime,
  localFromNaiveMs,
  naiveMs,
} from './civil.ts';
import { fromLocal, offsetMsAt, readingsOf, validateTimeZone } from './zone.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?$/;

function invalid(message: string, value: unknown): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message, { context: { value } }));
}

function checkDate(text: string, year: number, month: number, day: number, what: string): string | null {
  if (year < 1) {
    return `Invalid ${what} '${text}': the year must be 0001–9999.`;
  }
  if (month < 1 || month > 12) {
    return `Invalid ${what} '${text}': the month must be 01–12.`;
  }
  const max = daysInMonth(year, month);
  if (day < 1 || day > max) {
    return `Invalid ${what} '${text}': ${formatDate({ year, month, day: 1 }).slice(0, 7)} has days 01–${max}.`;
  }
  return null;
}

/** A `YYYY-MM-DD` calendar date. */
export function parseDate(text: string): Result<LocalDate, CalgateError> {
  const match = typeof text === 'string' ? DATE.exec(text) : null;
  if (match === null) {
    return invalid(`Invalid date '${String(text)}': expected YYYY-MM-DD, e.g. '2026-01-05'.`, text);
  }
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const problem = checkDate(text, year, month, day, 'date');
  return problem === null ? ok({ year, month, day }) : invalid(problem, text);
}

/** A parsed RFC 3339 date-time; `offsetMinutes` is absent when the text carried no offset. */
export interface ParsedDateTime {
  local: LocalDateTime;
  offsetMinutes?: number;
}

const EXAMPLE = "e.g. '2026-01-05T09:00:00+01:00' or '2026-01-05T08:00:00Z'";

/** The fields of an RFC 3339 date-time; with `allowLocal`, the offset may be left out. */
export function parseDateTimeFields(text: string, allowLocal = false): Result<ParsedDateTime, CalgateError> {
  const match = typeof text === 'string' ? DATE_TIME.exec(text) : null;
  if (match === null) {
    return invalid(`Invalid date-time '${String(text)}': expected RFC 3339, ${EXAMPLE}.`, text);
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[];
  const problem = checkDate(text, year as number, month as number, day as number, 'date-time');
  if (problem !== null) {
    return invalid(problem, text);
  }
  if ((hour as number) > 23 || (minute as number) > 59 || (second as number) > 59) {
    return invalid(`Invalid date-time '${text}': the time must be 00:00:00–23:59:59.`, text);
  }
  const millisecond = match[7] ? Math.floor(Number(`0${match[7]}`) * 1000) : 0;
  const local: LocalDateTime = {
    year: year as number,
    month: month as number,
    day: day as number,
    hour: hour as number,
    minute: minute as number,
    second: second as number,
    millisecond,
  };
  const zone = match[8];
  if (zone === undefined) {
    if (!allowLocal) {
      return invalid(`Invalid date-time '${text}': a UTC offset is required, ${EXAMPLE}.`, text);
    }
    return ok({ local });
  }
  if (zone === 'Z' || zone === 'z') {
    return ok({ local, offsetMinutes: 0 });
  }
  const sign = zone.startsWith('-') ? -1 : 1;
  const oh = Number(zone.slice(1, 3));
  const om = Number(zone.slice(4, 6));
  if (oh > 23 || om > 59) {
    return invalid(`Invalid date-time '${text}': the UTC offset must be between -23:59 and +23:59.`, text);
  }
  return ok({ local, offsetMinutes: sign * (oh * 60 + om) });
}

/** An RFC 3339 date-time with an offset, as epoch milliseconds. */
export function parseInstant(text: string): Result<number, CalgateError> {
  const parsed = parseDateTimeFields(text);
  if (!parsed.ok) {
    return parsed;
  }
  return ok(naiveMs(parsed.value.local) - (parsed.value.offsetMinutes ?? 0) * 60_000);
}

/**
 * An RFC 3339 date-time as epoch milliseconds. A text without an offset is read as wall-clock
 * time in `timeZone` (RFC 5545 gap and overlap rules); without either, it is an error.
 */
export function parseDateTime(text: string, timeZone?: string): Result<number, CalgateError> {
  const parsed = parseDateTimeFields(text, timeZone !== undefined);
  if (!parsed.ok) {
    return parsed;
  }
  const { local, offsetMinutes } = parsed.value;
  if (offsetMinutes !== undefined) {
    return ok(naiveMs(local) - offsetMinutes * 60_000);
  }
  const zone = validateTimeZone(timeZone as string);
  if (!zone.ok) {
    return zone;
  }
  return ok(fromLocal(local, zone.value));
}

const pad = (n: number) => String(n).padStart(2, '0');
/** Offsets already written, by minutes: a zone has a handful, every listing writes them. */
const offsets = new Map<number, string>();

function formatOffset(minutes: number): string {
  if (minutes === 0) {
    return 'Z';
  }
  let text = offsets.get(minutes);
  if (text === undefined) {
    const abs = Math.abs(minutes);
    text = `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    if (offsets.size < 1000) {
      offsets.set(minutes, text);
    }
  }
  return text;
}

/** What formatInstant wrote last for instants and zones (see InstantTexts). */
const instantTexts = new InstantTexts();

/**
 * An instant as RFC 3339: in UTC with `Z` by default, or as wall-clock time in `timeZone` with
 * that zone's offset (`2026-03-29T03:00:00+02:00`).
 */
export function formatInstant(instant: number, timeZone?: string): string {
  const written = instantTexts.get(instant, timeZone);
  if (written !== undefined) {
    return written;
  }
  const offsetMinutes = timeZone === undefined ? 0 : Math.round(offsetMsAt(instant, timeZone) / 60_000);
  return instantTexts.set(
    instant,
    timeZone,
    `${formatNaiveMs(instant + offsetMinutes * 60_000)}${formatOffset(offsetMinutes)}`,
  );
}

/** `YYYY-MM-DD` of an instant's wall-clock date in `timeZone`. */
export function dateInZone(instant: number, timeZone: string): string {
  return formatDate(localFromNaiveMs(instant + offsetMsAt(instant, timeZone)));
}

/** `HH:MM` of a naive reading (`HH:MM:SS` when the seconds are not zero). */
function clockOf(naive: number): string {
  const text = formatNaiveMs(naive).slice(11, 19);
  return text.endsWith(':00') ? text.slice(0, 5) : text;
}

/** A signed offset as RFC 3339 writes it, `+00:00` for UTC too (names, not instants). */
function offsetName(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** A local date-time read in a zone: its instant, and a notice when the reading was ambiguous. */
export interface LocalInstant {
  instant: number;
  /** Set when the time happens twice (clocks go back): names both readings and the one taken. */
  notice?: string;
}

/**
 * A wall-clock reading in `zone`, refused when it does not exist there (in a gap, clocks go
 * forward over it); a repeated reading (clocks go back) takes the first and says so. This is the
 * one place local date-times become instants for what an agent writes.
 */
export function readLocal(local: LocalDateTime, zone: string): Result<LocalInstant, CalgateError> {
  const checked = validateTimeZone(zone);
  if (!checked.ok) {
    return checked;
  }
  const naive = naiveMs(local);
  const reading = readingsOf(naive, zone);
  const day = formatDate(local);
  const clock = clockOf(naive);
  if (reading.kind === 'gap') {
    const from = clockOf(reading.from);
    const to = clockOf(reading.to);
    return invalid(
      `${clock} does not exist on ${day} in ${zone} (clocks go from ${from} to ${to}); give a time before ${from} or from ${to}.`,
      formatLocalDateTime(local),
    );
  }
  if (reading.kind === 'repeated') {
    const first = offsetName(reading.offsetFirst);
    const second = offsetName(reading.offsetSecond);
    return ok({
      instant: reading.first,
      notice: `${clock} on ${day} happens twice in ${zone} (${first} and ${second}); the first (${first}) was taken. Give the offset (${formatLocalDateTime(local).slice(0, 19)}${second}) for the second.`,
    });
  }
  return ok({ instant: reading.instant });
}
