/**
 * Free/busy answers made from mirror rows, kept per calendar version (mirror_sync_state.version,
 * moved on by every transaction that changes the calendar's events, never reused): while the
 * version a read finds is the one an answer was made at, the rows are the same, so the answer is
 * too and neither the rows nor their expansion are read again. The key holds everything else the
 * answer depends on: the window and the calendar's zone (all-day events, floating times, series).
 *
 * Bounded by entries and by the events they hold together (least recently used out first).
 */
import type { BusyEvent, BusyInterval } from '../types.ts';

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

const weight = (answer: CachedBusy) => answer.events.length + answer.busy.length + 1;

export class BusyCache {
  readonly #entries = new Map<string, CachedBusy>();
  readonly #maxEntries: number;
  readonly #maxTotal: number;
  #total = 0;

  constructor(maxEntries = MAX_ENTRIES, maxTotalEvents = MAX_TOTAL_EVENTS) {
    this.#maxEntries = maxEntries;
    this.#maxTotal = maxTotalEvents;
  }

  static key(calendarId: string, version: string, zone: string, from: number, to: number): string {
    return `${calendarId}\u0000${version}\u0000${zone}\u0000${from}\u0000${to}`;
  }

  get(key: string): CachedBusy | undefined {
    const found = this.#entries.get(key);
    if (found !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.#entries.delete(key);
      this.#entries.set(key, found);
    }
    return found;
  }

  set(key: string, answer: CachedBusy): void {
    if (answer.events.length > MAX_EVENTS) {
      return;
    }
    this.#drop(key);
    this.#entries.set(key, answer);
    this.#total += weight(answer);
    while (this.#entries.size > this.#maxEntries || this.#total > this.#maxTotal) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) {
        break;
      }
      this.#drop(oldest.value);
    }
  }

  #drop(key: string): void {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#entries.delete(key);
      this.#total -= weight(old);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
