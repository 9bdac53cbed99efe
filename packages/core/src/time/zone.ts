/**
 * Time-zone arithmetic over the platform's IANA database, through `Intl.DateTimeFormat` only.
 *
 * Formatting an instant costs about a microsecond, far too much to do several times for each of
 * thousands of recurrence instances. So each zone's offsets are learnt once per 128-day chunk:
 * sampled every two days, with transitions located to the second by bisection, then kept as a
 * small table of [start, offset] intervals. Two-day sampling misses only a change that is undone
 * within two days, which no zone has done since 1900.
 */

import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import { epochDay, type LocalDateTime, localFromNaiveMs, MS_PER_DAY, MS_PER_HOUR, naiveMs } from './civil.ts';

const formatters = new Map<string, Intl.DateTimeFormat | null>();
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

function formatterFor(zone: string): Intl.DateTimeFormat | null {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = null;
    if (ZONE_NAME.test(zone)) {
      try {
        formatter = new Intl.DateTimeFormat('en-US', {
          timeZone: zone,
          hourCycle: 'h23',
          year: 'numeric',
          month: 'numeric',
          day: 'numeric',
          hour: 'numeric',
          minute: 'numeric',
          second: 'numeric',
        });
      } catch {
        formatter = null;
      }
    }
    if (formatters.size > 2_000) {
      formatters.clear();
    }
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** Whether `zone` names an IANA time zone this runtime knows (`Europe/Berlin`, `UTC`). */
export function isValidTimeZone(zone: string): boolean {
  return typeof zone === 'string' && formatterFor(zone) !== null;
}

/**
 * A zone as people know it: validated, with its usual capitals (`europe/berlin` →
 * `Europe/Berlin`). A valid name is otherwise kept as given: ICU resolves current names to old
 * ones (Asia/Kolkata → Asia/Calcutta), which a person would not recognise.
 */
export function canonicalTimeZone(zone: string): Result<string, CalgateError> {
  const checked = validateTimeZone(zone);
  if (!checked.ok) {
    return checked;
  }
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: checked.value }).resolvedOptions().timeZone;
  return ok(resolved.toLowerCase() === checked.value.toLowerCase() ? resolved : checked.value);
}

/** The zone name back, or an `invalid_argument` error that says what a valid one looks like. */
export function validateTimeZone(zone: string): Result<string, CalgateError> {
  if (isValidTimeZone(zone)) {
    return ok(zone);
  }
  const suggestion = typeof zone === 'string' ? suggestTimeZone(zone) : undefined;
  return err(
    new CalgateError(
      'invalid_argument',
      suggestion === undefined
        ? `Unknown time zone '${String(zone)}': expected an IANA time zone name such as 'Europe/Berlin' or 'UTC'.`
        : `Unknown time zone '${String(zone)}'. Did you mean '${suggestion}'? Time zones are IANA names such as 'Europe/Berlin' or 'UTC'.`,
      { context: { timeZone: zone, ...(suggestion === undefined ? {} : { suggestion }) } },
    ),
  );
}

let zoneNames: readonly string[] | undefined;

/** Current IANA names the runtime's list still spells the old way (Calcutta, Kiev): offered first. */
const RENAMED = [
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Europe/Kyiv',
  'Asia/Ho_Chi_Minh',
  'Asia/Yangon',
  'America/Argentina/Buenos_Aires',
  'America/Nuuk',
  'Pacific/Kanton',
  'Atlantic/Faroe',
];

/** Edit distance, capped: anything beyond `cap` is `cap + 1`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) {
    return cap + 1;
  }
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(
        Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost),
      );
    }
    previous = row;
  }
  return Math.min(previous[b.length] as number, cap + 1);
}

/**
 * The IANA zone a near-miss most likely means: the same name in other case, a city alone
 * ('Berlin', 'new york' → 'America/New_York'), or a name within a few typos ('Europe/Berln').
 */
export function suggestTimeZone(text: string): string | undefined {
  const wanted = text.trim().replace(/\s+/g, '_').toLowerCase();
  if (wanted.length < 2 || wanted.length > 64) {
    return undefined;
  }
  zoneNames ??= [...RENAMED.filter(isValidTimeZone), ...Intl.supportedValuesOf('timeZone'), 'UTC'];
  const city = (name: string) => name.slice(name.lastIndexOf('/') + 1).toLowerCase();
  const exact = zoneNames.find((name) => name.toLowerCase() === wanted || city(name) === wanted);
  if (exact !== undefined) {
    return exact;
  }
  const cap = Math.max(1, Math.min(3, Math.floor(wanted.length / 4)));
  let best: string | undefined;
  let bestScore = cap + 1;
  for (const name of zoneNames) {
    const target = wanted.includes('/') ? name.toLowerCase() : city(name);
    const score = editDistance(wanted, target, cap);
    if (score < bestScore) {
      best = name;
      bestScore = score;
    }
  }
  return best;
}

function requireFormatter(zone: string): Intl.DateTimeFormat {
  const formatter = formatterFor(zone);
  if (formatter === null) {
    throw new CalgateError('invalid_argument', `Unknown time zone '${zone}'.`, {
      context: { timeZone: zone },
    });
  }
  return formatter;
}

const FORMATTED = /^(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;

/** The offset (ms) at a whole-second instant, straight from Intl. */
function rawOffset(formatter: Intl.DateTimeFormat, instant: number): number {
  const match = FORMATTED.exec(formatter.format(instant));
  if (match === null) {
    return 0;
  }
  const [, mo, d, y, h, mi, s] = match.map(Number) as number[];
  const local =
    epochDay(y as number, mo as number, d as number) * MS_PER_DAY +
    (h as number) * MS_PER_HOUR +
    (mi as number) * 60_000 +
    (s as number) * 1000;
  return local - instant;
}

const CHUNK_MS = 128 * MS_PER_DAY;
const STEP_MS = 2 * MS_PER_DAY;

interface Chunk {
  /** Start instants of the intervals, ascending; starts[0] is the chunk's start. */
  starts: number[];
  offsets: number[];
}

const chunks = new Map<string, Map<number, Chunk>>();
let chunkCount = 0;

function buildChunk(formatter: Intl.DateTimeFormat, index: number): Chunk {
  const start = index * CHUNK_MS;
  const end = start + CHUNK_MS;
  let current = rawOffset(formatter, start);
  const chunk: Chunk = { starts: [start], offsets: [current] };
  for (let lo = start; lo < end; lo += STEP_MS) {
    const hi = Math.min(lo + STEP_MS, end);
    const target = rawOffset(formatter, hi);
    let from = lo;
    // Locate every change in (from, hi], to the second.
    while (current !== target) {
      let a = from;
      let b = hi;
      while (b - a > 1000) {
        const mid = a + Math.floor((b - a) / 2000) * 1000;
        if (rawOffset(formatter, mid) === current) {
          a = mid;
        } else {
          b = mid;
        }
      }
      current = rawOffset(formatter, b);
      if (b < end) {
        chunk.starts.push(b);
        chunk.offsets.push(current);
      }
      from = b;
      if (from >= hi) {
        break;
      }
    }
    current = target;
  }
  return chunk;
}

function chunkFor(zone: string, index: number): Chunk {
  let byZone = chunks.get(zone);
  if (byZone === undefined) {
    byZone = new Map();
    chunks.set(zone, byZone);
  }
  let chunk = byZone.get(index);
  if (chunk === undefined) {
    if (chunkCount > 50_000) {
      chunks.clear();
      chunkCount = 0;
      byZone = new Map();
      chunks.set(zone, byZone);
    }
    chunk = buildChunk(requireFormatter(zone), index);
    byZone.set(index, chunk);
    chunkCount += 1;
  }
  return chunk;
}

const isUtc = (zone: string) => zone === 'UTC' || zone === 'Etc/UTC' || zone === 'Etc/GMT';

/** The zone's UTC offset in milliseconds at an instant (positive east of Greenwich). Throws on an unknown zone. */
export function offsetMsAt(instant: number, zone: string): number {
  if (isUtc(zone)) {
    return 0;
  }
  const chunk = chunkFor(zone, Math.floor(instant / CHUNK_MS));
  const { starts, offsets } = chunk;
  let i = starts.length - 1;
  while (i > 0 && (starts[i] as number) > instant) {
    i -= 1;
  }
  return offsets[i] as number;
}

/** The zone's UTC offset in minutes at an instant (Asia/Kathmandu → 345). */
export function utcOffsetMinutes(instant: number, zone: string): number {
  return Math.round(offsetMsAt(instant, zone) / 60_000);
}

/** The wall-clock reading in `zone` at an instant (epoch milliseconds). */
export function toLocal(instant: number, zone: string): LocalDateTime {
  return localFromNaiveMs(instant + offsetMsAt(instant, zone));
}

/** Intervals of constant offset overlapping [from, to): parallel arrays of start, end and offset. */
function intervals(
  zone: string,
  from: number,
  to: number,
): { starts: number[]; ends: number[]; offsets: number[] } {
  const starts: number[] = [];
  const offsets: number[] = [];
  for (let index = Math.floor(from / CHUNK_MS); index * CHUNK_MS < to; index++) {
    const chunk = chunkFor(zone, index);
    for (let i = 0; i < chunk.starts.length; i++) {
      const start = chunk.starts[i] as number;
      const offset = chunk.offsets[i] as number;
      const nextStart = chunk.starts[i + 1] ?? (index + 1) * CHUNK_MS;
      if (nextStart <= from || start >= to) {
        continue;
      }
      if (offsets.length > 0 && offsets[offsets.length - 1] === offset) {
        continue; // a chunk boundary, not a transition
      }
      starts.push(start);
      offsets.push(offset);
    }
  }
  const ends = starts.slice(1);
  ends.push(Number.POSITIVE_INFINITY);
  if (starts.length > 0) {
    starts[0] = Number.NEGATIVE_INFINITY;
  }
  return { starts, ends, offsets };
}

/** No zone's offset exceeds ±15 h (LMT included), so the instant lies within a day of the naive reading. */
const SEARCH_MS = 27 * MS_PER_HOUR;

/**
 * The instant of a wall-clock reading in `zone`, by RFC 5545's rules: a reading that falls in a
 * gap (spring forward) uses the offset in effect before the gap, so it moves forward by the gap's
 * length; an ambiguous reading (fall back) means its first occurrence.
 */
export function fromLocal(local: LocalDateTime, zone: string): number {
  return fromNaiveMs(naiveMs(local), zone);
}

/** {@link fromLocal} for a naive millisecond reading (see `naiveMs`). */
export function fromNaiveMs(naive: number, zone: string): number {
  if (isUtc(zone)) {
    return naive;
  }
  // Fast path: a single offset across the whole search window.
  const index = Math.floor((naive - SEARCH_MS) / CHUNK_MS);
  if (index === Math.floor((naive + SEARCH_MS) / CHUNK_MS)) {
    const chunk = chunkFor(zone, index);
    if (chunk.starts.length === 1) {
      return naive - (chunk.offsets[0] as number);
    }
  }
  const { starts, ends, offsets } = intervals(zone, naive - SEARCH_MS, naive + SEARCH_MS);
  for (let i = 0; i < offsets.length; i++) {
    const t = naive - (offsets[i] as number);
    if (t >= (starts[i] as number) && t < (ends[i] as number)) {
      return t; // the earliest valid reading: the first occurrence when ambiguous
    }
  }
  for (let i = 0; i + 1 < offsets.length; i++) {
    const boundary = ends[i] as number;
    const before = offsets[i] as number;
    if (boundary + before <= naive && naive < boundary + (offsets[i + 1] as number)) {
      return naive - before; // in the gap: keep the offset from before it
    }
  }
  return naive - offsetMsAt(naive, zone);
}

/**
 * What a wall-clock reading means in a zone: one instant; none, when it falls in a gap (clocks
 * go forward over it; `from`/`to` are the wall-clock milliseconds (naive) where the gap starts
 * and ends); or two, when the hour is repeated (clocks go back), earlier first.
 */
export type LocalReading =
  | { kind: 'single'; instant: number }
  | { kind: 'gap'; from: number; to: number; offsetBefore: number; offsetAfter: number }
  | { kind: 'repeated'; first: number; second: number; offsetFirst: number; offsetSecond: number };

/** Every reading of a naive wall-clock time (see `naiveMs`) in `zone`; throws on an unknown zone. */
export function readingsOf(naive: number, zone: string): LocalReading {
  if (isUtc(zone)) {
    return { kind: 'single', instant: naive };
  }
  const { starts, ends, offsets } = intervals(zone, naive - SEARCH_MS, naive + SEARCH_MS);
  const found: { instant: number; offset: number }[] = [];
  for (let i = 0; i < offsets.length; i++) {
    const t = naive - (offsets[i] as number);
    if (t >= (starts[i] as number) && t < (ends[i] as number)) {
      found.push({ instant: t, offset: offsets[i] as number });
    }
  }
  const [first, second] = found;
  if (first !== undefined && second !== undefined) {
    return {
      kind: 'repeated',
      first: first.instant,
      second: second.instant,
      offsetFirst: first.offset,
      offsetSecond: second.offset,
    };
  }
  if (first !== undefined) {
    return { kind: 'single', instant: first.instant };
  }
  for (let i = 0; i + 1 < offsets.length; i++) {
    const boundary = ends[i] as number;
    const before = offsets[i] as number;
    const after = offsets[i + 1] as number;
    if (boundary + before <= naive && naive < boundary + after) {
      return {
        kind: 'gap',
        from: boundary + before,
        to: boundary + after,
        offsetBefore: before,
        offsetAfter: after,
      };
    }
  }
  return { kind: 'single', instant: naive - offsetMsAt(naive, zone) };
}
