/**
 * Splits a query into tokens on demand, so the parser reports the leftmost problem first.
 * A term is `NAME:value` (the first ':' separates) or a bare value; a value is a quoted string
 * with \" and \\ escapes, or a word that runs to whitespace or a parenthesis. The bare words
 * AND and OR (any case) are operators; NOT is refused, since '-' negates.
 */
import { err, ok, type Result } from '@calgate/core';
import { RuleError } from './errors.ts';

export type Token =
  | { type: 'lparen'; position: number }
  | { type: 'rparen'; position: number }
  | { type: 'minus'; position: number; attached: boolean }
  | { type: 'or'; position: number; text: string }
  | { type: 'and'; position: number; text: string }
  | {
      type: 'term';
      position: number;
      /** The property as written, or null for a bare value. */
      name: string | null;
      value: string;
      valuePosition: number;
      quoted: boolean;
    }
  | { type: 'end'; position: number };

const SPACE = /\s/;

export function isSpace(char: string): boolean {
  return char === ' ' || (char !== '' && SPACE.test(char));
}

/** A word ends at whitespace, a parenthesis or the end of the query. */
function isWordEnd(char: string | undefined): boolean {
  return char === undefined || char === '(' || char === ')' || isSpace(char);
}

const quoteOf = (text: string) => `'${text.length > 40 ? `${text.slice(0, 40)}…` : text}'`;

export class Lexer {
  readonly query: string;
  #position = 0;

  constructor(query: string) {
    this.query = query;
  }

  next(): Result<Token, RuleError> {
    const query = this.query;
    let i = this.#position;
    while (i < query.length && isSpace(query[i] as string)) {
      i += 1;
    }
    if (i >= query.length) {
      this.#position = i;
      return ok({ type: 'end', position: query.length });
    }
    const char = query[i] as string;
    if (char === '(' || char === ')') {
      this.#position = i + 1;
      return ok({ type: char === '(' ? 'lparen' : 'rparen', position: i });
    }
    if (char === '-') {
      this.#position = i + 1;
      return ok({
        type: 'minus',
        position: i,
        attached: i + 1 < query.length && !isSpace(query[i + 1] as string),
      });
    }
    if (char === '"') {
      return this.#quoted(i, i, null);
    }
    let j = i;
    while (j < query.length && query[j] !== ':' && !isWordEnd(query[j])) {
      j += 1;
    }
    if (query[j] === ':' && j > i) {
      const name = query.slice(i, j);
      const valueStart = j + 1;
      if (query[valueStart] === '"') {
        return this.#quoted(i, valueStart, name);
      }
      let end = valueStart;
      while (!isWordEnd(query[end])) {
        end += 1;
      }
      this.#position = end;
      return ok({
        type: 'term',
        position: i,
        name,
        value: query.slice(valueStart, end),
        valuePosition: valueStart,
        quoted: false,
      });
    }
    while (!isWordEnd(query[j])) {
      j += 1;
    }
    const word = query.slice(i, j);
    this.#position = j;
    if (/^or$/i.test(word)) {
      return ok({ type: 'or', position: i, text: word });
    }
    if (/^and$/i.test(word)) {
      return ok({ type: 'and', position: i, text: word });
    }
    if (/^not$/i.test(word)) {
      // Read as a word, NOT would quietly demand the text "not": refuse it where it stands.
      return err(
        new RuleError(
          'not_operator',
          `'${word}' at position ${i} is not an operator: use '-' to negate, right before a condition or '(' (e.g. -title:lunch or -(a OR b)); to search for the word itself, quote it ("${word}").`,
          { position: i },
        ),
      );
    }
    return ok({ type: 'term', position: i, name: null, value: word, valuePosition: i, quoted: false });
  }

  #quoted(termStart: number, quote: number, name: string | null): Result<Token, RuleError> {
    const query = this.query;
    let value = '';
    let i = quote + 1;
    for (;;) {
      if (i >= query.length) {
        return err(
          new RuleError(
            'unclosed_quote',
            `Unclosed quote at position ${quote}: expected a closing '"' before the end of the query (write \\" for a quote inside a value).`,
            { position: quote },
          ),
        );
      }
      const char = query[i] as string;
      if (char === '\\' && (query[i + 1] === '"' || query[i + 1] === '\\')) {
        value += query[i + 1];
        i += 2;
      } else if (char === '"') {
        break;
      } else {
        value += char;
        i += 1;
      }
    }
    const after = i + 1;
    if (!isWordEnd(query[after])) {
      return err(
        new RuleError(
          'unexpected_character',
          `Unexpected ${quoteOf(query[after] as string)} at position ${after}: expected a space, a parenthesis or the end of the query after the quoted value that ends at position ${i}.`,
          { position: after },
        ),
      );
    }
    this.#position = after;
    return ok({ type: 'term', position: termStart, name, value, valuePosition: quote, quoted: true });
  }
}
