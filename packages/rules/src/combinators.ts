/** Joins parsed operands: flattened and/or nodes, and their predicates and selectors combined. */

import type { ParsedQuery, RuleNode } from './ast.ts';
import type { Bitset } from './bitset.ts';
import type { Predicate, Selector } from './properties.ts';

export function flatten(type: 'and' | 'or', parts: ParsedQuery[]): RuleNode[] {
  const nodes: RuleNode[] = [];
  for (const part of parts) {
    if (part.ast.type === type) {
      nodes.push(...part.ast.operands);
    } else {
      nodes.push(part.ast);
    }
  }
  return nodes;
}

export function combine(selectors: Selector[], into: (a: Bitset, b: Bitset) => Bitset): Selector {
  return (set) => {
    const bits = (selectors[0] as Selector)(set);
    for (let i = 1; i < selectors.length; i++) {
      into(bits, (selectors[i] as Selector)(set));
    }
    return bits;
  };
}

export function allOf(predicates: Predicate[]): Predicate {
  if (predicates.length === 2) {
    const [a, b] = predicates as [Predicate, Predicate];
    return (o) => a(o) && b(o);
  }
  return (o) => {
    for (const predicate of predicates) {
      if (!predicate(o)) {
        return false;
      }
    }
    return true;
  };
}

export function anyOf(predicates: Predicate[]): Predicate {
  if (predicates.length === 2) {
    const [a, b] = predicates as [Predicate, Predicate];
    return (o) => a(o) || b(o);
  }
  return (o) => {
    for (const predicate of predicates) {
      if (predicate(o)) {
        return true;
      }
    }
    return false;
  };
}
