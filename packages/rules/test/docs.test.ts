import { describe, expect, it } from 'vitest';
import {
  compileQuery,
  formatQuery,
  PROPERTIES,
  PROPERTY_NAMES,
  SYNTAX_EXAMPLES,
  syntaxDoc,
} from '../src/index.ts';

describe('syntaxDoc', () => {
  it('documents the grammar, every property, examples and errors', () => {
    expect(syntaxDoc).toContain('## Grammar');
    expect(syntaxDoc).toContain('or        := and ( OR and )*');
    for (const name of PROPERTY_NAMES) {
      expect(syntaxDoc).toContain(`| \`${name}\` |`);
    }
    expect(SYNTAX_EXAMPLES.length).toBeGreaterThanOrEqual(12);
    for (const { query } of SYNTAX_EXAMPLES) {
      expect(syntaxDoc).toContain(`\`${query}\``);
    }
    expect(syntaxDoc).toContain('## Errors');
    expect(syntaxDoc).toContain("Unknown property 'subject' at position 0. Did you mean 'title'?");
  });

  it('says AND is optional, OR and AND are read in any case, and NOT is refused for -', () => {
    expect(syntaxDoc).toContain('writing AND (any case) is optional');
    expect(syntaxDoc).toContain("use '-' to negate");
    expect(syntaxDoc).toContain('`warnings`');
    const and = compileQuery('title:sync AND domain:example.com');
    const implicit = compileQuery('title:sync domain:example.com');
    expect(and.ok && formatQuery(and.value.ast)).toBe(implicit.ok && formatQuery(implicit.value.ast));
    const not = compileQuery('title:sync NOT title:planning');
    expect(not.ok).toBe(false);
    if (!not.ok) {
      expect(syntaxDoc).toContain(not.error.message.slice(0, not.error.message.indexOf(',')));
    }
  });

  it('has examples that all parse, and a working example for every property', () => {
    for (const { query } of SYNTAX_EXAMPLES) {
      const compiled = compileQuery(query);
      expect(compiled.ok, query).toBe(true);
    }
    for (const info of PROPERTIES) {
      expect(compileQuery(`${info.name}:${info.example}`).ok, info.name).toBe(true);
    }
  });

  it('shows error examples that fail as described', () => {
    const cases: [string, string][] = [
      ['day-of-week:funday', "Invalid value 'funday' for 'day-of-week' at position 12"],
      ['title:"team meeting', 'Unclosed quote at position 6'],
      ['(domain:a.com OR domain:b.com', "Missing ')' at position 29"],
      ['title:a)', "Unexpected ')' at position 7"],
      ['title:', "Missing value for 'title'"],
    ];
    for (const [query, message] of cases) {
      const compiled = compileQuery(query);
      expect(compiled.ok).toBe(false);
      if (!compiled.ok) {
        expect(compiled.error.message).toContain(message);
      }
    }
  });
});
