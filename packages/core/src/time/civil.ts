/**
 * Proleptic Gregorian calendar arithmetic on plain numbers: no time zones, no Date objects.
 * A "naive" millisecond value is a wall-clock reading encoded as if it were UTC, which lets
 * local date-times be compared and added like instants.
 */

/** A calendar date. Months are 1–12. */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/** A wall-clock reading without a zone. */
export interface LocalDateTime extends LocalDate {
  hour: number;
  minute: number;
  second: number;
  millisecond?: number;
}

export const MS_PER_SECOND = 1000;
export const MS_PER_MINUTE = 60_000;
export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

export function daysInYear(year: number): number {
  return isLeapYear(year) ? 366 : 365;
}

/** Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm; any year). */
export function epochDay(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil date of a day count since 1970-01-01. */
export function dateFromEpochDay(days: number): LocalDate {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** ISO weekday of a day count: 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday). */
export function weekdayOfEpochDay(days: number): number {
  return (((days + 3) % 7) + 7) % 7;
}

export function weekdayOf(date: LocalDate): number {
  return weekdayOfEpochDay(epochDay(date.year, date.month, date.day));
}

export function isValidDate(year: number, month: number, day: number): boolean {
  return (
    Number.isInteger(year) &&
    Number.isInteger(month) &&
    Number.isInteger(day) &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month)
  );
}

export function addDays(date: LocalDate, days: number): LocalDate {
  return dateFromEpochDay(epochDay(date.year, date.month, date.day) + days);
}

/** The wall-clock reading as milliseconds, read as if it were UTC. */
export function naiveMs(local: LocalDateTime | LocalDate): number {
  const t = local as Partial<LocalDateTime>;
  return (
    epochDay(local.year, local.month, local.day) * MS_PER_DAY +
    (t.hour ?? 0) * MS_PER_HOUR +
    (t.minute ?? 0) * MS_PER_MINUTE +
    (t.second ?? 0) * MS_PER_SECOND +
    (t.millisecond ?? 0)
  );
}

export function localFromNaiveMs(ms: number): LocalDateTime {
  const days = Math.floor(ms / MS_PER_DAY);
  let rest = ms - days * MS_PER_DAY;
  const hour = Math.floor(rest / MS_PER_HOUR);
  rest -= hour * MS_PER_HOUR;
  const minute = Math.floor(rest / MS_PER_MINUTE);
  rest -= minute * MS_PER_MINUTE;
  const second = Math.floor(rest / MS_PER_SECOND);
  return { ...dateFromEpochDay(days), hour, minute, second, millisecond: rest - second * MS_PER_SECOND };
}

// Formatting sits on the hot path of every event listing (two date-times per event): two-digit
// fields come from a table instead of a new string and padStart each time.
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const pad2 = (n: number) => TWO_DIGITS[n] ?? String(n).padStart(2, '0');
const pad4 = (n: number) => (n >= 1000 && n <= 9999 ? String(n) : String(n).padStart(4, '0'));

/** `YYYY-MM-DD`. */
export function formatDate(date: LocalDate): string {
  return `${pad4(date.year)}-${pad2(date.month)}-${pad2(date.day)}`;
}

/** `YYYY-MM-DDTHH:MM:SS` (with `.mmm` only when milliseconds are non-zero). */
export function formatLocalDateTime(local: LocalDateTime): string {
  const ms = local.millisecond ? `.${String(local.millisecond).padStart(3, '0')}` : '';
  return `${formatDate(local)}T${pad2(local.hour)}:${pad2(local.minute)}:${pad2(local.second)}${ms}`;
}

/** Recently written days and minutes of a day (listings write the same few over and over). */
const dayTexts = new Map<number, string>();
const minuteTexts: string[] = [];

/** `YYYY-MM-DD` of a day since the epoch, from the cache. */
function dayText(days: number): string {
  let day = dayTexts.get(days);
  if (day === undefined) {
    if (dayTexts.size >= 4096) {
      dayTexts.clear();
    }
    day = formatDate(dateFromEpochDay(days));
    dayTexts.set(days, day);
  }
  return day;
}

/** `HH:MM:` of a minute of the day, from the table. */
function minuteText(minuteOfDay: number): string {
  let minute = minuteTexts[minuteOfDay];
  if (minute === undefined) {
    minute = `${pad2(Math.floor(minuteOfDay / 60))}:${pad2(minuteOfDay % 60)}:`;
    minuteTexts[minuteOfDay] = minute;
  }
  return minute;
}

/** `.000`–`.999`, written once. */
const MILLISECOND_TEXTS = Array.from({ length: 1000 }, (_, n) => `.${String(n).padStart(3, '0')}`);

/**
 * `YYYY-MM-DDTHH:MM:SS[.mmm]` of naive milliseconds; with `always`, seconds and milliseconds are
 * written even when zero (toISOString's form, without its `Z`).
 */
function clockText(ms: number, always: boolean): string {
  const days = Math.floor(ms / MS_PER_DAY);
  const rest = ms - days * MS_PER_DAY;
  const minuteOfDay = Math.floor(rest / MS_PER_MINUTE);
  const withinMinute = rest - minuteOfDay * MS_PER_MINUTE;
  if (withinMinute === 0 && !always) {
    return `${dayText(days)}T${minuteText(minuteOfDay)}00`;
  }
  const second = Math.floor(withinMinute / MS_PER_SECOND);
  const millisecond = withinMinute - second * MS_PER_SECOND;
  const fraction =
    millisecond || always
      ? (MILLISECOND_TEXTS[millisecond] ?? `.${String(millisecond).padStart(3, '0')}`)
      : '';
  return `${dayText(days)}T${minuteText(minuteOfDay)}${pad2(second)}${fraction}`;
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.mmm]` of a wall-clock reading given as naive milliseconds (as if UTC):
 * formatLocalDateTime(localFromNaiveMs(ms)) without the intermediate objects and strings.
 */
export function formatNaiveMs(ms: number): string {
  return clockText(ms, false);
}

const TEXT_SLOTS = 4096;

/**
 * The text last written for an instant (and zone), in one of TEXT_SLOTS slots picked by a hash
 * of the instant: listings write the same events' times call after call, and a hit allocates
 * nothing. A slot holds one instant; another instant of the same slot replaces it.
 */
export class InstantTexts {
  readonly #instants = new Float64Array(TEXT_SLOTS).fill(Number.NaN);
  readonly #zones: (string | undefined)[] = new Array<string | undefined>(TEXT_SLOTS).fill(undefined);
  readonly #texts: string[] = new Array<string>(TEXT_SLOTS).fill('');

  static #slot(instant: number): number {
    // Both halves of the millisecond count: a calendar's events are often written within one
    // second, and their `updated` instants differ in milliseconds only.
    const low = (instant % 0x8000_0000) | 0;
    const high = (instant / 0x8000_0000) | 0;
    return (Math.imul(low, 0x9e3779b1) ^ Math.imul(high, 0x85ebca6b)) >>> 20;
  }

  get(instant: number, zone?: string): string | undefined {
    const slot = InstantTexts.#slot(instant);
    return this.#instants[slot] === instant && this.#zones[slot] === zone ? this.#texts[slot] : undefined;
  }

  set(instant: number, zone: string | undefined, text: string): string {
    const slot = InstantTexts.#slot(instant);
    this.#instants[slot] = instant;
    this.#zones[slot] = zone;
    this.#texts[slot] = text;
    return text;
  }
}

const isoTexts = new InstantTexts();

/** The instants toISOString writes with a four-digit year (0000–9999). */
const FOUR_DIGIT_YEARS = { from: -62_167_219_200_000, to: 253_402_300_800_000 };

/**
 * What `new Date(ms).toISOString()` writes (`YYYY-MM-DDTHH:MM:SS.mmmZ`), from the cached day and
 * minute texts: listings write two of these per event, and toISOString costs ~0.5 µs each.
 */
export function isoInstant(ms: number): string {
  if (!(ms >= FOUR_DIGIT_YEARS.from && ms < FOUR_DIGIT_YEARS.to) || !Number.isInteger(ms)) {
    return new Date(ms).toISOString();
  }
  return isoTexts.get(ms) ?? isoTexts.set(ms, undefined, `${clockText(ms, true)}Z`);
}

export function compareDates(a: LocalDate, b: LocalDate): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}
