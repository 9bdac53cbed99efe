/**
 * Verdicts of a Screener kept per text, least recently used first out: an event's text is the same
 * on every read until the event changes (and every occurrence of a series shares its master's),
 * so repeated reads cost a map lookup. Keyed by the text itself, so a new version of an event is
 * screened afresh and nothing needs invalidating.
 */
import type { Screener } from './screener.ts';

/** A text found clean (null, so that a miss stays undefined). */
const CLEAN = null;

export interface ScreenCacheLimits {
  /** Texts kept at most. */
  entries: number;
  /** Characters of text kept at most (the keys dominate the memory). */
  chars: number;
}

export const DEFAULT_SCREEN_CACHE: ScreenCacheLimits = { entries: 20_000, chars: 8_000_000 };

export class CachedScreener implements Screener {
  readonly #inner: Screener;
  readonly #limits: ScreenCacheLimits;
  // A Map iterates in insertion order: re-inserting on a hit keeps the oldest first.
  readonly #verdicts = new Map<string, string | typeof CLEAN>();
  #chars = 0;
  hits = 0;
  misses = 0;

  constructor(inner: Screener, limits: ScreenCacheLimits = DEFAULT_SCREEN_CACHE) {
    this.#inner = inner;
    this.#limits = limits;
  }

  get size(): number {
    return this.#verdicts.size;
  }

  screen(text: string): string | undefined {
    const cached = this.#verdicts.get(text);
    if (cached !== undefined) {
      this.hits++;
      this.#verdicts.delete(text);
      this.#verdicts.set(text, cached);
      return cached ?? undefined;
    }
    this.misses++;
    const reason = this.#inner.screen(text);
    if (text.length <= this.#limits.chars) {
      this.#verdicts.set(text, reason ?? CLEAN);
      this.#chars += text.length;
      this.#evict();
    }
    return reason;
  }

  #evict(): void {
    for (const text of this.#verdicts.keys()) {
      if (this.#verdicts.size <= this.#limits.entries && this.#chars <= this.#limits.chars) {
        return;
      }
      this.#verdicts.delete(text);
      this.#chars -= text.length;
    }
  }
}
