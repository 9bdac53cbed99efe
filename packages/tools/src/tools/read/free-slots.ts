/**
 * Free/busy of several calendars over one window, in epoch milliseconds. A calendar whose
 * free/busy could not be read is unknown over the whole window: nothing is free unless every
 * calendar said so.
 */
import { complement, type Interval, mergeIntervals } from '@calgate/core';

export type Span = Interval;

export interface Availability {
  /** Busy on at least one calendar that answered, merged. */
  busy: Span[];
  /** Free on every calendar, all of which answered; at least `minDurationMs` long. */
  free: Span[];
  /** Not busy on the calendars that answered, but some calendar did not answer. */
  unknown: Span[];
}

/** `spans` cut to the window and merged. */
export function clipped(spans: readonly Span[], window: Span): Span[] {
  return mergeIntervals(
    spans.map((s) => ({ start: Math.max(s.start, window.start), end: Math.min(s.end, window.end) })),
  );
}

/**
 * Merges per-calendar busy spans (`null` for a calendar that could not be read) into busy, free
 * and unknown ranges of the window.
 */
export function availability(
  calendars: readonly (readonly Span[] | null)[],
  window: Span,
  minDurationMs = 0,
): Availability {
  const busy = clipped(
    calendars.flatMap((spans) => spans ?? []),
    window,
  );
  const open = complement(window, busy);
  if (calendars.some((spans) => spans === null)) {
    return { busy, free: [], unknown: open };
  }
  return { busy, free: open.filter((s) => s.end - s.start >= minDurationMs), unknown: [] };
}
