import { describe, expect, it } from 'vitest';
import { compileQuery, type RuleNode } from '../src/index.ts';

function ast(query: string): RuleNode {
  const result = compileQuery(query);
  if (!result.ok) {
    throw new Error(`expected '${query}' to parse: ${result.error.message}`);
  }
  return result.value.ast;
}

/** The tree without positions, as a compact string: and(...), or(...), not(...), property=value. */
function shape(node: RuleNode): string {
  switch (node.type) {
    case 'condition':
      return `${node.property}=${JSON.stringify(node.value)}`;
    case 'not':
      return `not(${shape(node.operand)})`;
    case 'and':
      return `and(${node.operands.map(shape).join(', ')})`;
    case 'or':
      return `or(${node.operands.map(shape).join(', ')})`;
  }
}

const s = (query: string) => shape(ast(query));

describe('terms', () => {
  it('reads NAME:value with the property and value and their positions', () => {
    expect(ast('title:standup')).toEqual({
      type: 'condition',
      property: 'title',
      value: 'standup',
      explicit: true,
      quoted: false,
      position: 0,
      valuePosition: 6,
    });
    expect(ast('  domain:acme.com')).toMatchObject({ position: 2, valuePosition: 9, value: 'acme.com' });
  });

  it('reads property names case-insensitively and reports the canonical name', () => {
    expect(s('TITLE:x')).toBe('title="x"');
    expect(s('Day-Of-Week:mon')).toBe('day-of-week="mon"');
    expect(s('Is-All-Day:yes')).toBe('is-all-day="yes"');
  });

  it('reads a bare value as text:value', () => {
    expect(ast('budget')).toEqual({
      type: 'condition',
      property: 'text',
      value: 'budget',
      explicit: false,
      quoted: false,
      position: 0,
      valuePosition: 0,
    });
    expect(s('"team meeting"')).toBe('text="team meeting"');
  });

  it('separates at the first colon, so values may contain colons unquoted', () => {
    expect(s('time-of-day:>17:00')).toBe('time-of-day=">17:00"');
    expect(s('title:1:1')).toBe('title="1:1"');
    expect(s('description:a:b:c')).toBe('description="a:b:c"');
  });

  it('lets words contain hyphens, which never negate inside a word', () => {
    expect(s('title:team-meeting')).toBe('title="team-meeting"');
    expect(s('title:-draft')).toBe('title="-draft"');
    expect(s('follow-up')).toBe('text="follow-up"');
  });

  it('ends a word at whitespace or a parenthesis', () => {
    expect(s('title:a\tb\nc')).toBe('and(title="a", text="b", text="c")');
    expect(s('(title:a)')).toBe('title="a"');
    expect(s('title:a(b)')).toBe('and(title="a", text="b")');
  });

  it('keeps quote characters inside an unquoted word literal', () => {
    expect(s('title:it"s')).toBe('title="it\\"s"');
  });
});

describe('quoted values', () => {
  it('may hold spaces, colons and parentheses', () => {
    expect(ast('title:"team meeting (weekly): notes"')).toMatchObject({
      value: 'team meeting (weekly): notes',
      quoted: true,
      position: 0,
      valuePosition: 6,
    });
  });

  it('unescapes \\" and \\\\ and keeps other backslashes', () => {
    expect(ast('title:"say \\"hi\\""')).toMatchObject({ value: 'say "hi"' });
    expect(ast('title:"a\\\\b"')).toMatchObject({ value: 'a\\b' });
    expect(ast('title:"a\\nb"')).toMatchObject({ value: 'a\\nb' });
  });

  it('makes OR and a leading - plain text', () => {
    expect(s('"OR"')).toBe('text="OR"');
    expect(s('title:"-x"')).toBe('title="-x"');
    expect(s('"-x"')).toBe('text="-x"');
  });

  it('may be followed directly by a parenthesis', () => {
    expect(s('("a")')).toBe('text="a"');
    expect(s('title:"a"(b)')).toBe('and(title="a", text="b")');
  });
});

describe('AND, OR and grouping', () => {
  it('ANDs adjacent terms', () => {
    expect(s('title:standup title:daily')).toBe('and(title="standup", title="daily")');
  });

  it('makes OR bind looser than AND', () => {
    expect(s('a b OR c')).toBe('or(and(text="a", text="b"), text="c")');
    expect(s('a OR b c')).toBe('or(text="a", and(text="b", text="c"))');
    expect(s('a OR b OR c')).toBe('or(text="a", text="b", text="c")');
  });

  it('reads AND in any case as the implicit AND it already is', () => {
    const implicit = s('title:sync domain:example.com');
    for (const and of ['AND', 'and', 'And', 'aNd']) {
      expect(s(`title:sync ${and} domain:example.com`)).toBe(implicit);
    }
    expect(s('a AND b OR c')).toBe(s('a b OR c'));
    expect(s('a OR b AND c')).toBe('or(text="a", and(text="b", text="c"))');
    expect(s('a AND -b AND (c OR d)')).toBe('and(text="a", not(text="b"), or(text="c", text="d"))');
    expect(s('a AND(b)')).toBe('and(text="a", text="b")');
  });

  it('keeps AND, OR and NOT as words when quoted, glued to more letters or after a colon', () => {
    expect(s('"AND"')).toBe('text="AND"');
    expect(s('"not" title:x')).toBe('and(text="not", title="x")');
    expect(s('a ANDb')).toBe('and(text="a", text="ANDb")');
    expect(s('nothing notes')).toBe('and(text="nothing", text="notes")');
    expect(s('title:and')).toBe('title="and"');
    expect(s('title:NOT')).toBe('title="NOT"');
  });

  it('reads OR in any case as the keyword, but not inside a longer word or after a colon', () => {
    expect(s('a or b')).toBe('or(text="a", text="b")');
    expect(s('a Or b')).toBe('or(text="a", text="b")');
    expect(s('a ORb')).toBe('and(text="a", text="ORb")');
    expect(s('title:OR')).toBe('title="OR"');
    expect(s('a OR(b)')).toBe('or(text="a", text="b")');
  });

  it('groups with parentheses', () => {
    expect(s('(domain:a.com OR domain:b.com) title:sync')).toBe(
      'and(or(domain="a.com", domain="b.com"), title="sync")',
    );
    expect(s('((a))')).toBe('text="a"');
    expect(s('(a (b OR c))')).toBe('and(text="a", or(text="b", text="c"))');
  });

  it('flattens nested groups of the same operator', () => {
    expect(s('(a b) c')).toBe('and(text="a", text="b", text="c")');
    expect(s('(a OR b) OR c')).toBe('or(text="a", text="b", text="c")');
  });

  it('nests up to 32 levels of parentheses', () => {
    expect(s(`${'('.repeat(32)}a${')'.repeat(32)}`)).toBe('text="a"');
  });
});

describe('negation', () => {
  it('negates a condition', () => {
    expect(ast('-title:canceled')).toEqual({
      type: 'not',
      position: 0,
      operand: {
        type: 'condition',
        property: 'title',
        value: 'canceled',
        explicit: true,
        quoted: false,
        position: 1,
        valuePosition: 7,
      },
    });
  });

  it('negates a group, a bare value and a quoted value', () => {
    expect(s('-(a OR b)')).toBe('not(or(text="a", text="b"))');
    expect(s('-draft')).toBe('not(text="draft")');
    expect(s('-"all hands"')).toBe('not(text="all hands")');
  });

  it('binds tighter than AND and OR', () => {
    expect(s('a -b OR c')).toBe('or(and(text="a", not(text="b")), text="c")');
  });

  it('stacks', () => {
    expect(s('--a')).toBe('not(not(text="a"))');
    expect(s('-(-a)')).toBe('not(not(text="a"))');
  });
});
