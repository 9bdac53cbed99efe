/**
 * Free/busy arithmetic over one window, in epoch milliseconds. A calendar whose free/busy could
 * not be read is unknown over the whole window: nothing is free unless every calendar said so.
 */
export interface Span {
  start: number;
  end: number;
}

/** Sorted, non-overlapping spans covering the same instants as `spans` (touching ones join). */
export function unionOf(spans: readonly Span[]): Span[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Span[] = [];
  for (const span of sorted) {
    const last = out.at(-1);
    if (last !== undefined && span.start <= last.end) {
      last.end = Math.max(last.end, span.end);
    } else {
      out.push({ ...span });
    }
  }
  return out;
}

/** `spans` cut to the window. */
export function clip(spans: readonly Span[], window: Span): Span[] {
  return spans
    .map((s) => ({ start: Math.max(s.start, window.start), end: Math.min(s.end, window.end) }))
    .filter((s) => s.end > s.start);
}

/** The parts of the window not covered by `busy` (already a union). */
export function gaps(busy: readonly Span[], window: Span): Span[] {
  const out: Span[] = [];
  let cursor = window.start;
  for (const span of busy) {
    if (span.start > cursor) {
      out.push({ start: cursor, end: Math.min(span.start, window.end) });
    }
    cursor = Math.max(cursor, span.end);
    if (cursor >= window.end) {
      break;
    }
  }
  if (cursor < window.end) {
    out.push({ start: cursor, end: window.end });
  }
  return out.filter((s) => s.end > s.start);
}

export interface Availability {
  /** Busy on at least one calendar that answered. */
  busy: Span[];
  /** Free on every calendar, all of which answered; at least `minDurationMs` long. */
  free: Span[];
  /** Not busy on the calendars that answered, but some calendar did not answer. */
  unknown: Span[];
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
  const busy = unionOf(
    clip(
      calendars.flatMap((spans) => spans ?? []),
      window,
    ),
  );
  const open = gaps(busy, window);
  if (calendars.some((spans) => spans === null)) {
    return { busy, free: [], unknown: open };
  }
  return { busy, free: open.filter((s) => s.end - s.start >= minDurationMs), unknown: [] };
}
