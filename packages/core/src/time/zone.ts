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

/** The zone name back, or an `invalid_argument` error that says what a valid one looks like. */
export function validateTimeZone(zone: string): Result<string, CalgateError> {
  if (isValidTimeZone(zone)) {
    return ok(zone);
  }
  return err(
    new CalgateError(
      'invalid_argument',
      `Unknown time zone '${String(zone)}': expected an IANA time zone name such as 'Europe/Berlin' or 'UTC'.`,
      { context: { timeZone: zone } },
    ),
  );
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
