/**
 * What was made from a calendar's mirror rows, kept per calendar version
 * (mirror_sync_state.version, moved on by every transaction that changes the calendar's events,
 * never reused): while the version a read finds is the one a value was made at, the rows are the
 * same, so the value is too. A key holds the calendar, the version and everything else the value
 * depends on; a later version never meets a value made before it.
 *
 * Bounded by entries and by a weight (rows or events) of all values together, least recently used
 * out first; a value heavier than `maxEach` is not kept (it would crowd the rest out).
 */
export class VersionCache<T> {
  readonly #entries = new Map<string, T>();
  readonly #weight: (value: T) => number;
  readonly #maxEntries: number;
  readonly #maxTotal: number;
  readonly #maxEach: number;
  #total = 0;

  constructor(limits: {
    weight: (value: T) => number;
    maxEntries: number;
    maxTotal: number;
    maxEach: number;
  }) {
    this.#weight = limits.weight;
    this.#maxEntries = limits.maxEntries;
    this.#maxTotal = limits.maxTotal;
    this.#maxEach = limits.maxEach;
  }

  /** The key of a value made from `calendarId`'s rows at `version`, told apart by `rest`. */
  static key(calendarId: string, version: string, ...rest: (string | number)[]): string {
    return [calendarId, version, ...rest].join('\u0000');
  }

  get(key: string): T | undefined {
    const found = this.#entries.get(key);
    if (found !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.#entries.delete(key);
      this.#entries.set(key, found);
    }
    return found;
  }

  set(key: string, value: T): void {
    const weight = this.#weight(value);
    if (weight > this.#maxEach) {
      return;
    }
    this.#drop(key);
    this.#entries.set(key, value);
    this.#total += weight;
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
      this.#total -= this.#weight(old);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
