/** Compiled queries: parse once, then test any number of occurrences. */
import { ok, type Result } from '@calgate/core';
import type { Bitset } from './bitset.ts';
import type { RuleError } from './errors.ts';
import { isSpace } from './lexer.ts';
import { type EventOccurrence, type PreparedOccurrence, prepareOccurrence } from './occurrence.ts';
import type { OccurrenceSet } from './occurrence-set.ts';
import { parseQuery, type RuleNode } from './parser.ts';
import type { PropertyName } from './properties.ts';

export interface CompiledQuery {
  /** The query as written. */
  readonly source: string;
  /** Its syntax tree: conditions carry their property, unquoted value and positions. */
  readonly ast: RuleNode;
  /** The properties it tests, each once, in order of first use. */
  readonly properties: readonly PropertyName[];
  /** Whether the occurrence matches. Pass a `PreparedOccurrence` when testing it against many queries. */
  matches(occurrence: EventOccurrence | PreparedOccurrence): boolean;
  /** The members of `set` that match, as a fresh bit set (see `OccurrenceSet.indexesOf`). */
  select(set: OccurrenceSet): Bitset;
}

/** Parses and checks `query`; the error names the position and what was expected there. */
export function compileQuery(query: string): Result<CompiledQuery, RuleError> {
  const parsed = parseQuery(query);
  if (!parsed.ok) {
    return parsed;
  }
  const { ast, predicate, select } = parsed.value;
  return ok({
    source: query,
    ast,
    properties: propertiesOf(ast),
    matches: (occurrence) => predicate(prepareOccurrence(occurrence)),
    select,
  });
}

function propertiesOf(root: RuleNode): PropertyName[] {
  const seen = new Set<PropertyName>();
  const stack: RuleNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as RuleNode;
    if (node.type === 'condition') {
      seen.add(node.property);
    } else if (node.type === 'not') {
      stack.push(node.operand);
    } else {
      for (let i = node.operands.length - 1; i >= 0; i--) {
        stack.push(node.operands[i] as RuleNode);
      }
    }
  }
  return [...seen];
}

/** Whether a value must be quoted to be read back as itself after `property:`. */
export function needsQuotes(value: string): boolean {
  if (value === '' || value.startsWith('"')) {
    return true;
  }
  for (const char of value) {
    if (char === '(' || char === ')' || char === '"' || char === '\\' || isSpace(char)) {
      return true;
    }
  }
  return false;
}

/** `value` as written after `property:`: bare when it can be, else quoted with \" and \\ escapes. */
export function quoteValue(value: string): string {
  return needsQuotes(value) ? `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"` : value;
}

/**
 * A canonical query for a tree: every condition as `property:value`, OR inside AND parenthesised.
 * Parsing the result gives back the same conditions and structure.
 */
export function formatQuery(node: RuleNode): string {
  switch (node.type) {
    case 'condition':
      return `${node.property}:${quoteValue(node.value)}`;
    case 'not': {
      const inner = formatQuery(node.operand);
      return node.operand.type === 'condition' || node.operand.type === 'not' ? `-${inner}` : `-(${inner})`;
    }
    case 'and':
      return node.operands
        .map((operand) => (operand.type === 'or' ? `(${formatQuery(operand)})` : formatQuery(operand)))
        .join(' ');
    case 'or':
      return node.operands.map(formatQuery).join(' OR ');
  }
}
