/**
 * Free/busy answers made from mirror rows, kept per calendar version (see VersionCache): while
 * the version a read finds is the one an answer was made at, neither the rows nor their expansion
 * are read again. The key holds everything else the answer depends on: the window and the
 * calendar's zone (all-day events, floating times, series).
 */
import type { BusyEvent, BusyInterval } from '../types.ts';
import { VersionCache } from './version-cache.ts';

export interface CachedBusy {
  /** Merged and clipped to the window, as free/busy answers them. */
  readonly busy: readonly BusyInterval[];
  /** The same as epoch-ms intervals. */
  readonly intervals: readonly { readonly start: number; readonly end: number }[];
  /** The events that make the calendar busy, in start order. */
  readonly events: readonly BusyEvent[];
}

const MAX_ENTRIES = 4_000;
/** Busy events (and intervals) kept in all: some tens of megabytes at most. */
const MAX_TOTAL_EVENTS = 100_000;
/** Answers naming more events than this are made afresh each time (they would crowd the rest out). */
const MAX_EVENTS = 2_000;

export class BusyCache extends VersionCache<CachedBusy> {
  constructor(maxEntries = MAX_ENTRIES, maxTotalEvents = MAX_TOTAL_EVENTS) {
    super({
      weight: (answer) => answer.events.length + answer.busy.length + 1,
      maxEntries,
      maxTotal: maxTotalEvents,
      // An answer's weight counts its busy intervals too: at most as many as its events.
      maxEach: 2 * MAX_EVENTS + 1,
    });
  }

  static override key(calendarId: string, version: string, zone: string, from: number, to: number): string {
    return VersionCache.key(calendarId, version, zone, from, to);
  }
}
