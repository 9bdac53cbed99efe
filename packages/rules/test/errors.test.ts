import { describe, expect, it } from 'vitest';
import { compileQuery, MAX_QUERY_LENGTH, PROPERTY_NAMES, type RuleError } from '../src/index.ts';

function failure(query: string): RuleError {
  const result = compileQuery(query);
  if (result.ok) {
    throw new Error(`expected '${query.slice(0, 80)}' to be refused`);
  }
  return result.error;
}

/** The error's kind, its position, and that the message states the same position. */
function expectError(query: string, kind: string, position: number): RuleError {
  const error = failure(query);
  expect(error.kind).toBe(kind);
  expect(error.position).toBe(position);
  expect(error.message).toContain(`position ${position}`);
  expect(error.code).toBe('invalid_argument');
  expect(error.context).toMatchObject({ kind, position });
  return error;
}

describe('empty queries and groups', () => {
  it('refuses an empty or blank query at position 0', () => {
    for (const query of ['', '   ', '\n\t']) {
      const error = expectError(query, 'empty_query', 0);
      expect(error.message).toBe(
        'Empty query at position 0: expected a condition such as title:standup or domain:acme.com.',
      );
    }
  });

  it('refuses an empty group at its opening parenthesis', () => {
    expect(expectError('()', 'empty_group', 0).message).toBe(
      "Empty group at position 0: expected a condition between '(' and ')'.",
    );
    expectError('title:a ( )', 'empty_group', 8);
    expectError('-()', 'empty_group', 1);
    expectError('(a OR ())', 'empty_group', 6);
  });
});

describe('parentheses', () => {
  it('reports a missing ) at the end of the query, naming the open (', () => {
    const error = expectError('(domain:a.com OR domain:b.com', 'missing_close_paren', 29);
    expect(error.message).toBe(
      "Missing ')' at position 29 (the end of the query): the '(' at position 0 is never closed.",
    );
    expectError('(', 'missing_close_paren', 1);
    expectError('a ((b) c', 'missing_close_paren', 8);
    expect(failure('a ((b) c').message).toContain("the '(' at position 2 is never closed");
    expectError('(a OR b ', 'missing_close_paren', 8);
  });

  it('reports a stray ) at its own position', () => {
    expect(expectError('title:a)', 'unexpected_close_paren', 7).message).toBe(
      "Unexpected ')' at position 7: there is no '(' open to close.",
    );
    expectError(')', 'unexpected_close_paren', 0);
    expectError('(a)) b', 'unexpected_close_paren', 3);
    expectError('a OR b)', 'unexpected_close_paren', 6);
  });

  it('limits nesting to 32 levels with a clear error at the 33rd (', () => {
    const error = expectError(`${'('.repeat(33)}a${')'.repeat(33)}`, 'too_deeply_nested', 32);
    expect(error.message).toBe('Too many nested parentheses at position 32: at most 32 levels are allowed.');
  });

  it('survives the deepest nesting that fits in a query without exhausting the stack', () => {
    expectError(`${'('.repeat(999)}a${')'.repeat(999)}`, 'too_deeply_nested', 32);
    expectError('('.repeat(MAX_QUERY_LENGTH), 'too_deeply_nested', 32);
    expectError('-'.repeat(MAX_QUERY_LENGTH), 'dangling_negation', 1999);
    const negations = compileQuery(`${'-'.repeat(1998)}a`);
    expect(
      negations.ok &&
        negations.value.matches({ calendar: { id: 'c', timeZone: 'UTC' }, event: { start: {} } }),
    ).toBe(false);
  });

  it('refuses 10,000 nested parentheses by length, before parsing', () => {
    const error = expectError(`${'('.repeat(10_000)}a${')'.repeat(10_000)}`, 'query_too_long', 2000);
    expect(error.message).toBe(
      'Query too long at position 2000: at most 2000 characters are allowed, this one has 20001.',
    );
  });
});

describe('OR at either end', () => {
  it('refuses OR with nothing before it', () => {
    expect(expectError('OR title:a', 'dangling_or', 0).message).toBe(
      "'OR' at position 0 has no condition before it: expected a condition on both sides of OR.",
    );
    expectError('(or a)', 'dangling_or', 1);
  });

  it('refuses OR with nothing after it', () => {
    expect(expectError('title:a OR', 'dangling_or', 8).message).toBe(
      "'OR' at position 8 has no condition after it: expected a condition after OR, found the end of the query.",
    );
    expect(expectError('(a or)', 'dangling_or', 3).message).toContain("found ')' at position 5");
  });

  it('refuses two ORs in a row at the second', () => {
    expect(expectError('a OR OR b', 'dangling_or', 5).message).toBe(
      "'OR' at position 5 follows another OR: expected a condition between them.",
    );
  });
});

describe('AND at either end, and NOT', () => {
  it('refuses AND with nothing before or after it', () => {
    expect(expectError('AND title:a', 'dangling_and', 0).message).toBe(
      "'AND' at position 0 has no condition before it: expected a condition on both sides of AND.",
    );
    expectError('(and a)', 'dangling_and', 1);
    expectError('a OR and b', 'dangling_and', 5);
    expect(expectError('title:a AND', 'dangling_and', 8).message).toBe(
      "'AND' at position 8 has no condition after it: expected a condition after AND, found the end of the query.",
    );
    expect(expectError('(a and)', 'dangling_and', 3).message).toContain("found ')' at position 6");
    expect(expectError('a AND OR b', 'dangling_and', 2).message).toContain("found 'OR' at position 6");
    expect(expectError('a AND and b', 'dangling_and', 6).message).toBe(
      "'and' at position 6 follows another AND: expected a condition between them.",
    );
    expect(expectError('a -AND b', 'dangling_negation', 2).message).toContain("found 'AND' at position 3");
  });

  it("refuses NOT in any case at its position, pointing to '-'", () => {
    for (const not of ['NOT', 'not', 'Not']) {
      const error = expectError(`title:sync ${not} title:planning`, 'not_operator', 11);
      expect(error.message).toBe(
        `'${not}' at position 11 is not an operator: use '-' to negate, right before a condition or '(' (e.g. -title:lunch or -(a OR b)); to search for the word itself, quote it ("${not}").`,
      );
    }
    expectError('NOT title:a', 'not_operator', 0);
    expectError('(a OR b) not', 'not_operator', 9);
    expectError('-not', 'not_operator', 1);
  });
});

describe('negation with nothing after it', () => {
  it('refuses a trailing -', () => {
    expect(expectError('title:a -', 'dangling_negation', 8).message).toBe(
      "'-' at position 8 has nothing to negate: expected a condition or '(' right after it (no space), found the end of the query.",
    );
    expectError('-', 'dangling_negation', 0);
  });

  it('refuses - before ) or OR, or followed by a space', () => {
    expect(expectError('(a -)', 'dangling_negation', 3).message).toContain("found ')' at position 4");
    expect(expectError('a -OR b', 'dangling_negation', 2).message).toContain("found 'OR' at position 3");
    expect(expectError('a - b', 'dangling_negation', 2).message).toContain('found a space');
  });
});

describe('quotes', () => {
  it('reports an unclosed quote at the quote', () => {
    expect(expectError('title:"team meeting', 'unclosed_quote', 6).message).toBe(
      `Unclosed quote at position 6: expected a closing '"' before the end of the query (write \\" for a quote inside a value).`,
    );
    expectError('a "b', 'unclosed_quote', 2);
    expectError('title:"ends with escape\\"', 'unclosed_quote', 6);
  });

  it('refuses text glued to a closing quote', () => {
    expect(expectError('title:"a"b', 'unexpected_character', 9).message).toBe(
      "Unexpected 'b' at position 9: expected a space, a parenthesis or the end of the query after the quoted value that ends at position 8.",
    );
  });
});

describe('properties', () => {
  it('names the closest valid property and lists them all', () => {
    const error = expectError('subject:standup', 'unknown_property', 0);
    expect(error.message).toMatch(/^Unknown property 'subject' at position 0\. Did you mean 'title'\?/);
    expect(error.message).toContain(`Valid properties: ${PROPERTY_NAMES.join(', ')}.`);
    expect(error.suggestion).toBe('title');
    expect(error.validProperties).toEqual(PROPERTY_NAMES);
  });

  it("suggests for typos, squashed spellings and other systems' names", () => {
    const cases: [string, string][] = [
      ['titel:x', 'title'],
      ['atendees:x', 'attendees'],
      ['dayofweek:mon', 'day-of-week'],
      ['time_of_day:10:00', 'time-of-day'],
      ['allday:yes', 'is-all-day'],
      ['guest:bob', 'attendees'],
      ['status:declined', 'response'],
      ['domian:a.com', 'domain'],
      ['desc:x', 'description'],
    ];
    for (const [query, suggestion] of cases) {
      expect(failure(query).suggestion, query).toBe(suggestion);
      expect(failure(query).message).toContain(`Did you mean '${suggestion}'?`);
    }
  });

  it('leaves out the suggestion when nothing is close, still listing the valid ones', () => {
    const error = expectError('a zzzzzzzz:1', 'unknown_property', 2);
    expect(error.suggestion).toBeUndefined();
    expect(error.message).not.toContain('Did you mean');
    expect(error.message).toContain('Valid properties: title,');
  });

  it('refuses an unknown property before looking at its value', () => {
    expectError('http://example.com', 'unknown_property', 0);
    expectError('a subject:', 'unknown_property', 2);
  });

  it('refuses a property with no value at the place the value should be', () => {
    expect(expectError('title:', 'missing_value', 6).message).toBe(
      `Missing value for 'title' at position 6: expected a value right after 'title:', found the end of the query (quote values that contain spaces, e.g. title:"team meeting").`,
    );
    expect(expectError('title: standup', 'missing_value', 6).message).toContain('found a space');
    expect(expectError('(domain:)', 'missing_value', 8).message).toContain("found ')'");
    expectError('a Title:', 'missing_value', 8);
  });
});

describe('values', () => {
  const invalid = (query: string, position: number, ...parts: string[]) => {
    const error = expectError(query, 'invalid_value', position);
    for (const part of parts) {
      expect(error.message).toContain(part);
    }
    return error;
  };

  it('refuses unknown days at the value, suggesting the nearest', () => {
    const error = invalid(
      'day-of-week:funday',
      12,
      "Invalid value 'funday' for 'day-of-week' at position 12",
    );
    expect(error.suggestion).toBe('sunday');
    invalid('title:a day-of-week:mon,wed,fri,xyz', 20, "'xyz' is not a day");
    invalid('day-of-week:mon,,fri', 12, 'empty day');
    invalid('day-of-week:mon,', 12, 'empty day');
    expect(failure('day-of-week:tues').suggestion).toBe('tuesday');
  });

  it('refuses times out of range or badly written', () => {
    invalid('time-of-day:25:00', 12, 'the hour must be 00–23');
    invalid('time-of-day:>24:00', 12, 'the hour must be 00–23');
    invalid('time-of-day:12:60', 12, 'the minutes must be 00–59');
    invalid('time-of-day:5pm', 12, 'expected HH:MM with an optional >, >=, <, <= or =');
    invalid('time-of-day:=>10:00', 12, 'expected HH:MM');
    invalid('time-of-day:>', 12, 'expected HH:MM');
    invalid('time-of-day:10:0', 12, 'expected HH:MM');
    invalid('time-of-day:"17:00 "', 12, 'expected HH:MM');
  });

  it('refuses booleans other than yes, no, true and false', () => {
    invalid('recurring:maybe', 10, 'expected yes, no, true or false');
    invalid('is-all-day:1', 11, 'expected yes, no, true or false');
    expect(invalid('has-attendees:ye', 14).suggestion).toBe('yes');
  });

  it('refuses responses and transparency outside their lists, suggesting the nearest', () => {
    expect(
      invalid('response:acepted', 9, 'expected one of accepted, declined, tentative, needsAction').suggestion,
    ).toBe('accepted');
    expect(
      invalid('transparency:busy', 13, 'expected one of opaque, transparent').suggestion,
    ).toBeUndefined();
    expect(failure('transparency:transparant').suggestion).toBe('transparent');
  });

  it('refuses domains that are not domains', () => {
    expect(invalid('domain:@acme.com', 7, "without '@'").suggestion).toBe('acme.com');
    expect(invalid('domain:bob@acme.com', 7, 'not an email address').suggestion).toBe('acme.com');
    invalid('domain:*.acme.com', 7, 'compared exactly');
    invalid('domain:acme..com', 7, 'expected a domain');
  });

  it('refuses emails without an @', () => {
    invalid('email:bob', 6, 'expected an email address');
    invalid('email:@acme.com', 6, 'expected an email address');
  });

  it('refuses word values without a letter or digit, bare ones included', () => {
    invalid('title:!!!', 6, 'no letters or digits');
    invalid('description:"- -"', 12, 'no letters or digits');
    invalid('a ***', 2, "for the search text (a bare value means 'text') at position 2");
    invalid('title:*', 6);
    invalid('title:""', 6);
    invalid('attendees:"  "', 10, 'expected part of a name or an email address');
  });
});

describe('bad input never crashes', () => {
  it('caps the query at 2,000 characters', () => {
    expect(compileQuery(`title:${'x'.repeat(MAX_QUERY_LENGTH - 6)}`).ok).toBe(true);
    const error = expectError(`title:${'x'.repeat(MAX_QUERY_LENGTH - 5)}`, 'query_too_long', 2000);
    expect(error.message).toContain('this one has 2001');
    expectError('x'.repeat(100_000), 'query_too_long', 2000);
  });

  it('refuses control characters at their position', () => {
    expect(expectError('title:a\u0000', 'control_character', 7).message).toBe(
      'Control character U+0000 at position 7: a query may contain printable characters, spaces, tabs and line breaks only.',
    );
    expectError('a\u001bb', 'control_character', 1);
    expectError('title:"a\u0085"', 'control_character', 8);
    expectError('\u007f', 'control_character', 0);
    expect(compileQuery('title:a\tb\r\nc').ok).toBe(true);
  });

  it('refuses lone surrogates but accepts paired ones', () => {
    expectError('title:a\ud800', 'invalid_unicode', 7);
    expectError('\udc00a', 'invalid_unicode', 0);
    expect(compileQuery('title:😀x').ok).toBe(true);
  });

  it('reports the leftmost problem', () => {
    expectError(') title:"abc', 'unexpected_close_paren', 0);
    expectError('title:"abc ) ', 'unclosed_quote', 6);
    expectError('subject:x time-of-day:99:00', 'unknown_property', 0);
    expectError('time-of-day:99:00 subject:x', 'invalid_value', 12);
  });
});
