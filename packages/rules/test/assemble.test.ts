import { describe, expect, it } from 'vitest';
import {
  assembleQuery,
  type ConditionSet,
  compileQuery,
  conditionsOf,
  formatQuery,
  quoteValue,
} from '../src/index.ts';

function assembled(input: ConditionSet): string {
  const result = assembleQuery(input);
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

describe('assembleQuery', () => {
  it('writes one condition as property:value', () => {
    expect(assembled({ conditions: [{ property: 'domain', value: 'acmecorp.com' }] })).toBe(
      'domain:acmecorp.com',
    );
  });

  it('joins with spaces for AND (the default) and with OR for OR, negating with -', () => {
    const conditions = [
      { property: 'domain', value: 'acme.com' },
      { property: 'title', value: 'all hands', negated: true },
    ] as const;
    expect(assembled({ conditions: [...conditions] })).toBe('domain:acme.com -title:"all hands"');
    expect(assembled({ conditions: [...conditions], logic: 'AND' })).toBe(
      'domain:acme.com -title:"all hands"',
    );
    expect(assembled({ conditions: [...conditions], logic: 'OR' })).toBe(
      'domain:acme.com OR -title:"all hands"',
    );
  });

  it('quotes only what needs quoting and escapes quotes and backslashes', () => {
    expect(quoteValue('>17:00')).toBe('>17:00');
    expect(quoteValue('team-meeting')).toBe('team-meeting');
    expect(quoteValue('-draft')).toBe('-draft');
    expect(quoteValue('OR')).toBe('OR');
    expect(quoteValue('a b')).toBe('"a b"');
    expect(quoteValue('f(x)')).toBe('"f(x)"');
    expect(quoteValue('say "hi"')).toBe('"say \\"hi\\""');
    expect(quoteValue('a\\b')).toBe('"a\\\\b"');
    expect(quoteValue('"x')).toBe('"\\"x"');
    expect(quoteValue('a\u00a0b')).toBe('"a\u00a0b"');
    expect(assembled({ conditions: [{ property: 'time-of-day', value: '>17:00' }] })).toBe(
      'time-of-day:>17:00',
    );
  });

  it('accepts property names in any case and writes them canonically', () => {
    expect(assembled({ conditions: [{ property: 'Title' as 'title', value: 'x' }] })).toBe('title:x');
  });

  it('refuses no conditions, unknown properties, missing and invalid values, naming the condition', () => {
    const refuse = (input: ConditionSet, kind: string, message: string, conditionIndex?: number) => {
      const result = assembleQuery(input);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.kind).toBe(kind);
        expect(result.error.message).toBe(message);
        expect(result.error.conditionIndex).toBe(conditionIndex);
      }
    };
    refuse({ conditions: [] }, 'no_conditions', 'No conditions: expected at least one {property, value}.');
    refuse(
      {
        conditions: [
          { property: 'title', value: 'a' },
          { property: 'subject' as 'title', value: 'x' },
        ],
      },
      'unknown_property',
      "Unknown property 'subject' in conditions[1]. Did you mean 'title'? Valid properties: title, description, calendar, text, attendees, domain, email, response, recurring, is-all-day, has-attendees, transparency, day-of-week, time-of-day.",
      1,
    );
    refuse(
      { conditions: [{ property: 'title', value: '' }] },
      'missing_value',
      "Missing value for 'title' in conditions[0]: expected a value such as standup.",
      0,
    );
    refuse(
      { conditions: [{ property: 'day-of-week', value: 'funday' }] },
      'invalid_value',
      "Invalid value 'funday' for 'day-of-week' in conditions[0]: 'funday' is not a day; expected mon, tue, wed, thu, fri, sat, sun, full day names, or a comma list such as mon,wed,fri. Did you mean 'sunday'?",
      0,
    );
    refuse(
      { conditions: [{ property: 'title', value: 'a\u0007' }] },
      'control_character',
      'Control character U+0007 in the value of conditions[0]: values may contain printable characters, spaces, tabs and line breaks only.',
      0,
    );
    refuse(
      { conditions: [{ property: 'title', value: 'a' }], logic: 'XOR' as 'OR' },
      'invalid_value',
      "Invalid logic 'XOR': expected AND or OR.",
    );
    const long = assembleQuery({ conditions: [{ property: 'title', value: 'x'.repeat(2000) }] });
    expect(long.ok || long.error.kind).toBe('query_too_long');
  });
});

describe('conditionsOf', () => {
  const of = (query: string) => {
    const compiled = compileQuery(query);
    if (!compiled.ok) {
      throw compiled.error;
    }
    return conditionsOf(compiled.value.ast);
  };

  it('reads flat queries back as conditions', () => {
    expect(of('domain:acme.com')).toEqual({
      conditions: [{ property: 'domain', value: 'acme.com', negated: false }],
      logic: 'AND',
    });
    expect(of('domain:acme.com -title:"all hands"')).toEqual({
      conditions: [
        { property: 'domain', value: 'acme.com', negated: false },
        { property: 'title', value: 'all hands', negated: true },
      ],
      logic: 'AND',
    });
    expect(of('a OR -b')).toEqual({
      conditions: [
        { property: 'text', value: 'a', negated: false },
        { property: 'text', value: 'b', negated: true },
      ],
      logic: 'OR',
    });
  });

  it('gives null for nested queries', () => {
    expect(of('a b OR c')).toBeNull();
    expect(of('-(a OR b)')).toBeNull();
    expect(of('--a')).toBeNull();
  });
});

describe('formatQuery', () => {
  it('prints a canonical query that parses to the same tree', () => {
    for (const query of [
      'a b OR c',
      '(a OR b) c',
      '-(a OR b) -title:"x y"',
      '--a',
      '-(a b)',
      'time-of-day:>17:00 TITLE:"say \\"hi\\""',
      '((a OR b) (c OR -d)) OR e',
    ]) {
      const first = compileQuery(query);
      expect(first.ok).toBe(true);
      if (first.ok) {
        const printed = formatQuery(first.value.ast);
        const second = compileQuery(printed);
        expect(second.ok, printed).toBe(true);
        if (second.ok) {
          expect(formatQuery(second.value.ast)).toBe(printed);
          expect(strip(second.value.ast)).toEqual(strip(first.value.ast));
        }
      }
    }
    const simple = compileQuery('a b OR c');
    expect(simple.ok && formatQuery(simple.value.ast)).toBe('text:a text:b OR text:c');
  });
});

/** The tree without positions and spelling details. */
function strip(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(strip);
  }
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (!['position', 'valuePosition', 'quoted', 'explicit'].includes(key)) {
        out[key] = strip(value);
      }
    }
    return out;
  }
  return node;
}
