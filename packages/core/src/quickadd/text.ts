/**
 * The sentence being read: each recognised phrase is cut out and replaced by a hole, so later
 * patterns cannot reuse its words and what remains (title, place) keeps its original case.
 */
import { CalgateError } from '../errors.ts';

/** Marks where a recognised phrase was; never typed by a person. */
export const HOLE = '\u0001';

export class Sentence {
  #text: string;

  constructor(text: string) {
    // Control characters (the hole among them) become spaces: no one types them in a title.
    const clean = [...text].map((c) => (c.charCodeAt(0) < 32 ? ' ' : c)).join('');
    this.#text = ` ${clean} `;
  }

  get text(): string {
    return this.#text;
  }

  /** The first match of `pattern`, cut out of the sentence; null when there is none. */
  take(pattern: RegExp): RegExpExecArray | null {
    const match = pattern.exec(this.#text);
    if (match === null) {
      return null;
    }
    this.#text = `${this.#text.slice(0, match.index)} ${HOLE} ${this.#text.slice(match.index + match[0].length)}`;
    return match;
  }

  /** The first match of `pattern` that `accept` agrees with, cut out of the sentence. */
  takeIf(pattern: RegExp, accept: (match: RegExpExecArray) => boolean): RegExpExecArray | null {
    const all = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    for (const match of this.#text.matchAll(all)) {
      if (accept(match)) {
        const end = match.index + match[0].length;
        this.#text = `${this.#text.slice(0, match.index)} ${HOLE} ${this.#text.slice(end)}`;
        return match;
      }
    }
    return null;
  }
}

/** Thrown inside the parser for words that look like a date or time but are not one. */
export class QuickAddFailure extends Error {
  readonly error: CalgateError;

  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message);
    this.error = new CalgateError('invalid_argument', message, { context });
  }
}
