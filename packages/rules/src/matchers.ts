/**
 * How each property's value is checked, once, when a query is parsed, and the matcher it compiles
 * to: a test over one `PreparedOccurrence` and a selection over an `OccurrenceSet`.
 */
import { err, ok, type Result } from '@calgate/core';
import { andInto, type Bitset, emptyBits, fromIndexes, orInto, setBit } from './bitset.ts';
import { containsWordSequence, fold, wordsOfFolded } from './fold.ts';
import {
  FACT_ALL_DAY,
  FACT_HAS_ATTENDEES,
  FACT_RECURRING,
  FACT_TRANSPARENT,
  factMinute,
  factResponse,
  factWeekday,
  RESPONSES,
} from './occurrence.ts';
import type { WordFieldName } from './occurrence-set.ts';
import {
  INFO,
  type Matcher,
  type Predicate,
  type PropertyInfo,
  type PropertyName,
  type Selector,
  type ValueProblem,
} from './properties.ts';
import { closest } from './suggest.ts';

const DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const DAY_SHORT = DAY_NAMES.map((day) => day.slice(0, 3));
const TIME = /^(>=|<=|>|<|=)?(\d{1,2}):(\d{2})$/;
const DOMAIN_LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}_-]*[\\p{L}\\p{N}])?';
const DOMAIN = new RegExp(`^${DOMAIN_LABEL}(?:\\.${DOMAIN_LABEL})*$`, 'u');
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const problem = (reason: string, suggestion?: string): Result<never, ValueProblem> =>
  err(suggestion === undefined ? { reason } : { reason, suggestion });

const WORD_FIELDS: Record<string, WordFieldName> = {
  title: 'title',
  description: 'description',
  calendar: 'calendar',
  text: 'text',
};

/** Occurrences whose field has a word starting with `prefix`. */
function withPrefix(index: Map<string, number[]>, prefix: string, size: number): Bitset {
  const bits = emptyBits(size);
  for (const [word, list] of index) {
    if (word.startsWith(prefix)) {
      for (const i of list) {
        setBit(bits, i);
      }
    }
  }
  return bits;
}

function wordsMatcher(name: PropertyName, value: string): Result<Matcher, ValueProblem> {
  const prefix = value.endsWith('*');
  const words = wordsOfFolded(fold(value));
  if (words.length === 0) {
    return problem('it has no letters or digits to match; words are runs of letters and digits');
  }
  const first = words[0] as string;
  const single = words.length === 1 && !prefix ? first : undefined;
  const has = (field: readonly string[]) =>
    single === undefined ? containsWordSequence(field, words, prefix) : field.includes(single);
  let test: Predicate;
  switch (name) {
    case 'title':
      test = (o) => has(o.titleWords);
      break;
    case 'description':
      test = (o) => has(o.descriptionWords);
      break;
    case 'calendar':
      test = (o) => has(o.calendarWords);
      break;
    default:
      test =
        single === undefined
          ? (o) =>
              (prefix && words.length === 1) || o.textWords.has(first)
                ? has(o.titleWords) || has(o.descriptionWords) || o.attendees.wordFields.some(has)
                : false
          : (o) => o.textWords.has(single);
  }
  const field = WORD_FIELDS[name] as WordFieldName;
  const whole = prefix ? words.slice(0, -1) : words;
  const select: Selector = (set) => {
    const index = set.wordIndex(field);
    let bits: Bitset | undefined;
    for (const word of whole) {
      const next = fromIndexes(set.size, index.get(word));
      bits = bits === undefined ? next : andInto(bits, next);
    }
    if (prefix) {
      const next = withPrefix(index, words[words.length - 1] as string, set.size);
      bits = bits === undefined ? next : andInto(bits, next);
    }
    // The index shows which words occur; only a sequence of two or more needs their order checked.
    return words.length === 1 ? (bits as Bitset) : set.filter(test, bits);
  };
  return ok({ test, select });
}

function substringMatcher(value: string): Result<Matcher, ValueProblem> {
  // A trailing '*' adds nothing to a substring match, so `attendees:sar*` means `attendees:sar`.
  const needle = fold(value.replace(/\*+$/, '')).trim();
  if (needle === '') {
    return problem('expected part of a name or an email address, e.g. attendees:sarah');
  }
  return ok({
    test: (o) => o.attendees.text.includes(needle),
    select: (set) => {
      const bits = emptyBits(set.size);
      for (const [text, list] of set.keyIndex('attendee')) {
        if (text.includes(needle)) {
          orInto(bits, fromIndexes(set.size, list));
        }
      }
      return bits;
    },
  });
}

function keyMatcher(field: 'domain' | 'email', key: string): Matcher {
  return {
    test:
      field === 'domain' ? (o) => o.attendees.domains.includes(key) : (o) => o.attendees.emails.includes(key),
    select: (set) => fromIndexes(set.size, set.keyIndex(field).get(key)),
  };
}

function domainMatcher(value: string): Result<Matcher, ValueProblem> {
  if (value.startsWith('@') && DOMAIN.test(value.slice(1))) {
    return problem("expected a domain without '@'", value.slice(1));
  }
  if (value.includes('@')) {
    const after = value.slice(value.lastIndexOf('@') + 1);
    return problem(
      `expected a domain such as acme.com, not an email address (use email:${value} for one address)`,
      DOMAIN.test(after) ? after : undefined,
    );
  }
  if (!DOMAIN.test(value)) {
    return problem(
      'expected a domain such as acme.com; it is compared exactly (use attendees: for part of an address)',
    );
  }
  return ok(keyMatcher('domain', fold(value)));
}

function emailMatcher(value: string): Result<Matcher, ValueProblem> {
  if (!EMAIL.test(value)) {
    return problem('expected an email address such as bob@example.com (use attendees: for part of one)');
  }
  return ok(keyMatcher('email', fold(value)));
}

/** A condition on the packed facts of an occurrence (weekday, time, flags, response). */
function factMatcher(holds: (facts: number) => boolean): Matcher {
  return {
    test: (o) => holds(o.facts),
    select: (set) => {
      const facts = set.facts;
      const bits = emptyBits(set.size);
      for (let i = 0; i < facts.length; i++) {
        if (holds(facts[i] as number)) {
          setBit(bits, i);
        }
      }
      return bits;
    },
  };
}

function enumValue(info: PropertyInfo, value: string): Result<string, ValueProblem> {
  const values = info.values ?? [];
  const found = values.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
  if (found !== undefined) {
    return ok(found);
  }
  return problem(`expected one of ${values.join(', ')}`, closest(value, values));
}

function weekdaysMatcher(value: string): Result<Matcher, ValueProblem> {
  let mask = 0;
  const names = [...DAY_SHORT, ...DAY_NAMES];
  for (const item of value.split(',')) {
    const day = item.trim().toLowerCase();
    let index = DAY_SHORT.indexOf(day);
    if (index < 0) {
      index = DAY_NAMES.indexOf(day);
    }
    if (index < 0) {
      const expected =
        'expected mon, tue, wed, thu, fri, sat, sun, full day names, or a comma list such as mon,wed,fri';
      if (day === '') {
        return problem(`the list has an empty day; ${expected}`);
      }
      return problem(`'${item.trim()}' is not a day; ${expected}`, closest(day, names));
    }
    mask |= 1 << index;
  }
  return ok(
    factMatcher((facts) => {
      const weekday = factWeekday(facts);
      return weekday >= 0 && (mask & (1 << weekday)) !== 0;
    }),
  );
}

function timeMatcher(value: string): Result<Matcher, ValueProblem> {
  const expected = 'expected HH:MM with an optional >, >=, <, <= or =, e.g. >17:00 or <=09:30';
  const match = TIME.exec(value);
  if (match === null) {
    return problem(expected);
  }
  const hour = Number(match[2]);
  const minute = Number(match[3]);
  if (hour > 23) {
    return problem(`the hour must be 00–23; ${expected}`);
  }
  if (minute > 59) {
    return problem(`the minutes must be 00–59; ${expected}`);
  }
  const at = hour * 60 + minute;
  // factMinute is -1 for all-day events and unreadable starts, which never match.
  switch (match[1] ?? '=') {
    case '>':
      return ok(factMatcher((f) => factMinute(f) > at));
    case '>=':
      return ok(factMatcher((f) => factMinute(f) >= at));
    case '<':
      return ok(factMatcher((f) => factMinute(f) >= 0 && factMinute(f) < at));
    case '<=':
      return ok(factMatcher((f) => factMinute(f) >= 0 && factMinute(f) <= at));
    default:
      return ok(factMatcher((f) => factMinute(f) === at));
  }
}

const FLAGS: Record<string, number> = {
  recurring: FACT_RECURRING,
  'is-all-day': FACT_ALL_DAY,
  'has-attendees': FACT_HAS_ATTENDEES,
};

/** Checks `value` for the property and compiles it to a matcher over prepared occurrences. */
export function compileValue(name: PropertyName, value: string): Result<Matcher, ValueProblem> {
  const info = INFO.get(name) as PropertyInfo;
  switch (info.kind) {
    case 'words':
      return wordsMatcher(name, value);
    case 'substring':
      return substringMatcher(value);
    case 'exact':
      return name === 'domain' ? domainMatcher(value) : emailMatcher(value);
    case 'weekdays':
      return weekdaysMatcher(value);
    case 'time':
      return timeMatcher(value);
    case 'boolean': {
      const found = enumValue(info, value);
      if (!found.ok) {
        return problem('expected yes, no, true or false', found.error.suggestion);
      }
      const flag = FLAGS[name] as number;
      const wanted = found.value === 'yes' || found.value === 'true' ? flag : 0;
      return ok(factMatcher((f) => (f & flag) === wanted));
    }
    case 'enum': {
      const found = enumValue(info, value);
      if (!found.ok) {
        return found;
      }
      if (name === 'response') {
        const code = (RESPONSES as readonly string[]).indexOf(found.value);
        return ok(factMatcher((f) => factResponse(f) === code));
      }
      const wanted = found.value === 'transparent' ? FACT_TRANSPARENT : 0;
      return ok(factMatcher((f) => (f & FACT_TRANSPARENT) === wanted));
    }
  }
}
