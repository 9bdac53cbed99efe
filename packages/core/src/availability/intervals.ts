/** Half-open intervals [start, end) in epoch milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

/** Sorts and merges overlapping or touching intervals; empty ones are dropped. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Interval[] = [];
  for (const interval of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && interval.start <= last.end) {
      if (interval.end > last.end) {
        last.end = interval.end;
      }
    } else {
      out.push({ start: interval.start, end: interval.end });
    }
  }
  return out;
}

/** The parts of `window` not covered by `busy` (which must be merged and sorted). */
export function complement(window: Interval, busy: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let cursor = window.start;
  for (const block of busy) {
    if (block.end <= cursor) {
      continue;
    }
    if (block.start >= window.end) {
      break;
    }
    if (block.start > cursor) {
      out.push({ start: cursor, end: Math.min(block.start, window.end) });
    }
    cursor = Math.max(cursor, block.end);
    if (cursor >= window.end) {
      break;
    }
  }
  if (cursor < window.end) {
    out.push({ start: cursor, end: window.end });
  }
  return out;
}

/** Intersection of two sorted, merged interval lists. */
export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as Interval;
    const y = b[j] as Interval;
    const start = Math.max(x.start, y.start);
    const end = Math.min(x.end, y.end);
    if (end > start) {
      out.push({ start, end });
    }
    if (x.end < y.end) {
      i += 1;
    } else {
      j += 1;
    }
  }
  return out;
}

export function overlaps(a: Interval, b: Interval): boolean {
  return a.start < b.end && b.start < a.end;
}
