/**
 * Verdicts of a Screener kept per text, the least recently used dropped first: an event's text is the same
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

/**
 * Two generations stand in for a strict LRU order, so a hit costs one lookup and no reordering:
 * texts are added to the young generation; a hit in the old one moves the text up; when the young
 * generation fills half the limits, it becomes the old one and the old one is dropped. What is
 * dropped was not read during a whole generation.
 */
export class CachedScreener implements Screener {
  readonly #inner: Screener;
  readonly #limits: ScreenCacheLimits;
  #young = new Map<string, string | typeof CLEAN>();
  #old = new Map<string, string | typeof CLEAN>();
  #youngChars = 0;
  #oldChars = 0;
  hits = 0;
  misses = 0;

  constructor(inner: Screener, limits: ScreenCacheLimits = DEFAULT_SCREEN_CACHE) {
    this.#inner = inner;
    this.#limits = limits;
  }

  /** Texts kept. */
  get size(): number {
    return this.#young.size + this.#old.size;
  }

  screen(text: string): string | undefined {
    const young = this.#young.get(text);
    if (young !== undefined) {
      this.hits++;
      return young ?? undefined;
    }
    const old = this.#old.get(text);
    if (old !== undefined) {
      this.hits++;
      this.#old.delete(text);
      this.#oldChars -= text.length;
      this.#keep(text, old);
      return old ?? undefined;
    }
    this.misses++;
    const reason = this.#inner.screen(text);
    this.#keep(text, reason ?? CLEAN);
    return reason;
  }

  #keep(text: string, verdict: string | typeof CLEAN): void {
    if (text.length * 2 > this.#limits.chars) {
      return;
    }
    if (
      (this.#young.size + 1) * 2 > this.#limits.entries ||
      (this.#youngChars + text.length) * 2 > this.#limits.chars
    ) {
      this.#old = this.#young;
      this.#oldChars = this.#youngChars;
      this.#young = new Map();
      this.#youngChars = 0;
    }
    this.#young.set(text, verdict);
    this.#youngChars += text.length;
  }
}
