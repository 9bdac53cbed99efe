/**
 * Recursive descent over the grammar
 *
 *   query   := or
 *   or      := and ( OR and )*
 *   and     := unary ( AND? unary )*
 *   unary   := '-' unary | primary
 *   primary := '(' or ')' | term
 *
 * Recursion is bounded: parentheses nest at most MAX_DEPTH deep and runs of '-' are read in a
 * loop, so no query can exhaust the stack. Every condition's value is checked while parsing.
 */
import { err, ok, type Result } from '@calgate/core';
import type { Parsed, ParsedQuery, RuleNode } from './ast.ts';
import { andInto, complement, orInto } from './bitset.ts';
import { checkCharacters } from './characters.ts';
import { allOf, anyOf, combine, flatten } from './combinators.ts';
import { condition } from './condition.ts';
import { RuleError } from './errors.ts';
import { Lexer, type Token } from './lexer.ts';

export type { ParsedQuery, RuleNode } from './ast.ts';

/** The longest query accepted, in UTF-16 code units. */
export const MAX_QUERY_LENGTH = 2000;
/** How deeply parentheses may nest. */
export const MAX_DEPTH = 32;

const describe = (token: Token): string => {
  switch (token.type) {
    case 'end':
      return 'the end of the query';
    case 'rparen':
      return `')' at position ${token.position}`;
    case 'or':
    case 'and':
      return `'${token.text}' at position ${token.position}`;
    default:
      return `position ${token.position}`;
  }
};

const emptyQuery = () =>
  new RuleError(
    'empty_query',
    'Empty query at position 0: expected a condition such as title:standup or domain:acme.com.',
    { position: 0 },
  );

const and = (operands: RuleNode[]): RuleNode => ({ type: 'and', operands });
const or = (operands: RuleNode[]): RuleNode => ({ type: 'or', operands });

class Parser {
  readonly #lexer: Lexer;
  #peeked: Token | undefined;

  constructor(query: string) {
    this.#lexer = new Lexer(query);
  }

  #peek(): Result<Token, RuleError> {
    if (this.#peeked === undefined) {
      const token = this.#lexer.next();
      if (!token.ok) {
        return token;
      }
      this.#peeked = token.value;
    }
    return ok(this.#peeked);
  }

  #take(): void {
    this.#peeked = undefined;
  }

  query(): Parsed {
    const first = this.#peek();
    if (!first.ok) {
      return first;
    }
    if (first.value.type === 'end') {
      return err(emptyQuery());
    }
    const parsed = this.#or(null, 0);
    if (!parsed.ok) {
      return parsed;
    }
    const next = this.#peek();
    if (!next.ok) {
      return next;
    }
    if (next.value.type === 'rparen') {
      return err(this.#strayParen(next.value.position));
    }
    return parsed;
  }

  #strayParen(position: number): RuleError {
    return new RuleError(
      'unexpected_close_paren',
      `Unexpected ')' at position ${position}: there is no '(' open to close.`,
      { position },
    );
  }

  /** or := and ( OR and )*; `open` is the position of the enclosing '(' or null at top level. */
  #or(open: number | null, depth: number): Parsed {
    const branches: ParsedQuery[] = [];
    for (;;) {
      const token = this.#peek();
      if (!token.ok) {
        return token;
      }
      const t = token.value;
      if (t.type === 'or') {
        return err(
          new RuleError(
            'dangling_or',
            `'${t.text}' at position ${t.position} has no condition before it: expected a condition on both sides of OR.`,
            { position: t.position },
          ),
        );
      }
      if (t.type === 'and') {
        return err(
          new RuleError(
            'dangling_and',
            `'${t.text}' at position ${t.position} has no condition before it: expected a condition on both sides of AND.`,
            { position: t.position },
          ),
        );
      }
      if (t.type === 'rparen') {
        if (open === null) {
          return err(this.#strayParen(t.position));
        }
        return err(
          new RuleError(
            'empty_group',
            `Empty group at position ${open}: expected a condition between '(' and ')'.`,
            { position: open },
          ),
        );
      }
      if (t.type === 'end') {
        return err(open === null ? emptyQuery() : this.#missingParen(open));
      }
      const branch = this.#and(depth);
      if (!branch.ok) {
        return branch;
      }
      branches.push(branch.value);
      const after = this.#peek();
      if (!after.ok) {
        return after;
      }
      if (after.value.type !== 'or') {
        break;
      }
      const orToken = after.value;
      this.#take();
      const following = this.#peek();
      if (!following.ok) {
        return following;
      }
      const f = following.value;
      if (f.type === 'end' || f.type === 'rparen') {
        return err(
          new RuleError(
            'dangling_or',
            `'${orToken.text}' at position ${orToken.position} has no condition after it: expected a condition after OR, found ${describe(f)}.`,
            { position: orToken.position },
          ),
        );
      }
      if (f.type === 'or') {
        return err(
          new RuleError(
            'dangling_or',
            `'${f.text}' at position ${f.position} follows another OR: expected a condition between them.`,
            { position: f.position },
          ),
        );
      }
    }
    if (branches.length === 1) {
      return ok(branches[0] as ParsedQuery);
    }
    return ok({
      ast: or(flatten('or', branches)),
      predicate: anyOf(branches.map((branch) => branch.predicate)),
      select: combine(
        branches.map((branch) => branch.select),
        orInto,
      ),
    });
  }

  #missingParen(open: number): RuleError {
    const end = this.#lexer.query.length;
    return new RuleError(
      'missing_close_paren',
      `Missing ')' at position ${end} (the end of the query): the '(' at position ${open} is never closed.`,
      { position: end },
    );
  }

  /** and := unary ( AND? unary )*; #or calls it on a term, '(' or '-'. */
  #and(depth: number): Parsed {
    const items: ParsedQuery[] = [];
    for (;;) {
      const token = this.#peek();
      if (!token.ok) {
        return token;
      }
      const type = token.value.type;
      if (type === 'and') {
        const dangling = this.#afterAnd(token.value);
        if (dangling !== undefined) {
          return err(dangling);
        }
        continue;
      }
      if (type !== 'term' && type !== 'lparen' && type !== 'minus') {
        break;
      }
      const item = this.#unary(depth);
      if (!item.ok) {
        return item;
      }
      items.push(item.value);
    }
    if (items.length === 1) {
      return ok(items[0] as ParsedQuery);
    }
    return ok({
      ast: and(flatten('and', items)),
      predicate: allOf(items.map((item) => item.predicate)),
      select: combine(
        items.map((item) => item.select),
        andInto,
      ),
    });
  }

  /** Takes an explicit AND; the error when no condition follows it. */
  #afterAnd(andToken: Extract<Token, { type: 'and' }>): RuleError | undefined {
    this.#take();
    const following = this.#peek();
    if (!following.ok) {
      return following.error;
    }
    const f = following.value;
    if (f.type === 'term' || f.type === 'lparen' || f.type === 'minus') {
      return undefined;
    }
    if (f.type === 'and') {
      return new RuleError(
        'dangling_and',
        `'${f.text}' at position ${f.position} follows another AND: expected a condition between them.`,
        { position: f.position },
      );
    }
    return new RuleError(
      'dangling_and',
      `'${andToken.text}' at position ${andToken.position} has no condition after it: expected a condition after AND, found ${describe(f)}.`,
      { position: andToken.position },
    );
  }

  /** unary := '-' unary | primary, read as a loop over the '-' signs. */
  #unary(depth: number): Parsed {
    const signs: number[] = [];
    for (;;) {
      const token = this.#peek();
      if (!token.ok) {
        return token;
      }
      const t = token.value;
      if (t.type !== 'minus') {
        break;
      }
      this.#take();
      const next = this.#peek();
      if (!next.ok) {
        return next;
      }
      const n = next.value;
      if (!t.attached || n.type === 'end' || n.type === 'rparen' || n.type === 'or' || n.type === 'and') {
        return err(
          new RuleError(
            'dangling_negation',
            `'-' at position ${t.position} has nothing to negate: expected a condition or '(' right after it (no space), found ${n.type === 'term' || n.type === 'lparen' || n.type === 'minus' ? 'a space' : describe(n)}.`,
            { position: t.position },
          ),
        );
      }
      signs.push(t.position);
    }
    const primary = this.#primary(depth);
    if (!primary.ok || signs.length === 0) {
      return primary;
    }
    let result = primary.value;
    for (let k = signs.length - 1; k >= 0; k--) {
      const { predicate, select } = result;
      result = {
        ast: { type: 'not', position: signs[k] as number, operand: result.ast },
        predicate: (o) => !predicate(o),
        select: (set) => complement(select(set), set.size),
      };
    }
    return ok(result);
  }

  /** primary := '(' or ')' | term */
  #primary(depth: number): Parsed {
    const token = this.#peek();
    if (!token.ok) {
      return token;
    }
    const t = token.value;
    this.#take();
    if (t.type === 'lparen') {
      if (depth >= MAX_DEPTH) {
        return err(
          new RuleError(
            'too_deeply_nested',
            `Too many nested parentheses at position ${t.position}: at most ${MAX_DEPTH} levels are allowed.`,
            { position: t.position },
          ),
        );
      }
      const inner = this.#or(t.position, depth + 1);
      if (!inner.ok) {
        return inner;
      }
      const close = this.#peek();
      if (!close.ok) {
        return close;
      }
      if (close.value.type !== 'rparen') {
        return err(this.#missingParen(t.position));
      }
      this.#take();
      return inner;
    }
    if (t.type !== 'term') {
      // #and and #unary only call here on a term or '('.
      return err(this.#strayParen(t.position));
    }
    return condition(this.#lexer.query, t);
  }
}

/** Parses, checks and compiles a query; the error says where and what was expected. */
export function parseQuery(query: string): Parsed {
  if (typeof query !== 'string') {
    return err(
      new RuleError('empty_query', 'Empty query at position 0: expected a query string.', { position: 0 }),
    );
  }
  if (query.length > MAX_QUERY_LENGTH) {
    return err(
      new RuleError(
        'query_too_long',
        `Query too long at position ${MAX_QUERY_LENGTH}: at most ${MAX_QUERY_LENGTH} characters are allowed, this one has ${query.length}.`,
        { position: MAX_QUERY_LENGTH },
      ),
    );
  }
  const bad = checkCharacters(query);
  if (bad !== undefined) {
    return err(bad);
  }
  return new Parser(query).query();
}
