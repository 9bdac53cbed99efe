/** The tree a query parses into, and a parse's result with its compiled predicate and selector. */
import type { Result } from '@calgate/core';
import type { RuleError } from './errors.ts';
import type { Predicate, PropertyName, Selector } from './properties.ts';

/** A parsed query. Positions are 0-based indexes into the query text. */
export type RuleNode =
  | {
      type: 'condition';
      property: PropertyName;
      /** The value as meant: quotes removed, escapes resolved. */
      value: string;
      /** Whether the property was written out (false for a bare value, which means text:value). */
      explicit: boolean;
      quoted: boolean;
      position: number;
      valuePosition: number;
    }
  | { type: 'not'; position: number; operand: RuleNode }
  | { type: 'and'; operands: RuleNode[] }
  | { type: 'or'; operands: RuleNode[] };

/** A node with its compiled predicate attached, so the tree is checked and compiled in one pass. */
export interface ParsedQuery {
  ast: RuleNode;
  predicate: Predicate;
  select: Selector;
}

export type Parsed = Result<ParsedQuery, RuleError>;
