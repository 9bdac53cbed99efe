import { describe, expect, it } from 'vitest';
import {
  assembleQuery,
  type Condition,
  classify,
  compileQuery,
  conditionsOf,
  type EventOccurrence,
  PROPERTIES,
  PreparedOccurrence,
  type PropertyName,
} from '../src/index.ts';
import { occurrence } from './support/occurrences.ts';
import { Random } from './support/random.ts';

/** Pieces that stress quoting: spaces, quotes, backslashes, colons, parentheses, OR, '-', '*', Unicode. */
const PIECES = [
  ' ',
  '  ',
  '\t',
  '"',
  '\\',
  '\\"',
  ':',
  '(',
  ')',
  '()',
  '-',
  '*',
  'OR',
  'or',
  ' OR ',
  'AND',
  ',',
  '.',
  '@',
  "'",
  '>',
  'é',
  'Ü',
  'ß',
  'ﬁ',
  '日本',
  'Ωμέγα',
  '😀',
  '\u00a0',
  '\u200b',
  'e\u0301',
];
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789';

function word(random: Random): string {
  let out = '';
  for (let i = random.int(1, 6); i > 0; i--) {
    out += LETTERS[random.int(0, LETTERS.length - 1)];
  }
  return out;
}

/** Free text with at least one letter or digit somewhere. */
function freeText(random: Random): string {
  const parts: string[] = [];
  for (let i = random.int(1, 7); i > 0; i--) {
    parts.push(random.chance(0.5) ? random.pick(PIECES) : word(random));
  }
  parts.splice(random.int(0, parts.length), 0, word(random));
  if (random.chance(0.15)) {
    parts.unshift('-');
  }
  if (random.chance(0.1)) {
    parts.unshift('"');
  }
  if (random.chance(0.1)) {
    parts.push('*');
  }
  return parts.join('');
}

function domain(random: Random): string {
  const labels: string[] = [];
  for (let i = random.int(1, 3); i > 0; i--) {
    labels.push(random.chance(0.2) ? `${word(random)}-${word(random)}` : word(random));
  }
  if (random.chance(0.1)) {
    labels.push('münchen');
  }
  return labels.join('.');
}

function email(random: Random): string {
  const local = random.pick([
    word(random),
    `${word(random)}.${word(random)}`,
    `${word(random)}+tag`,
    'a(b)',
    'x"y',
    'o\\k',
  ]);
  return `${local}@${domain(random)}`;
}

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'monday', 'Friday', 'SUNDAY', 'wednesday'];

function valueFor(property: PropertyName, random: Random): string {
  const info = PROPERTIES.find((p) => p.name === property);
  switch (info?.kind) {
    case 'words':
    case 'substring':
      return freeText(random);
    case 'exact':
      return property === 'domain' ? domain(random) : email(random);
    case 'enum':
    case 'boolean':
      return random.mixCase(random.pick(info.values ?? []));
    case 'weekdays': {
      const days: string[] = [];
      for (let i = random.int(1, 4); i > 0; i--) {
        days.push(random.mixCase(random.pick(DAYS)));
      }
      return days.join(',');
    }
    default: {
      const op = random.pick(['', '>', '>=', '<', '<=', '=']);
      const hour = random.int(0, 23);
      return `${op}${random.chance(0.2) ? hour : String(hour).padStart(2, '0')}:${String(random.int(0, 59)).padStart(2, '0')}`;
    }
  }
}

function conditions(random: Random): Condition[] {
  const list: Condition[] = [];
  for (let i = random.int(1, 4); i > 0; i--) {
    const property = random.pick(PROPERTIES).name;
    const condition: Condition = { property, value: valueFor(property, random) };
    if (random.chance(0.3)) {
      condition.negated = true;
    } else if (random.chance(0.2)) {
      condition.negated = false;
    }
    list.push(condition);
  }
  return list;
}

function randomOccurrence(random: Random): EventOccurrence {
  const people = [
    { email: 'ann@acme.com', displayName: 'Ann Éclair' },
    { email: 'bob@eu.acme.com', displayName: 'Bob OR Smith' },
    {
      email: 'me@x.com',
      self: true,
      responseStatus: random.pick(['accepted', 'declined', 'tentative', 'needsAction']),
    },
  ];
  const allDay = random.chance(0.2);
  const day = String(random.int(1, 28)).padStart(2, '0');
  return occurrence({
    summary: random.chance(0.9) ? freeText(random) : undefined,
    description: random.chance(0.5) ? freeText(random) : undefined,
    attendees: people.filter(() => random.chance(0.6)),
    recurringEventId: random.chance(0.5) ? 'm' : undefined,
    transparency: random.chance(0.3) ? 'transparent' : undefined,
    start: allDay
      ? { date: `2026-02-${day}` }
      : {
          dateTime: `2026-02-${day}T${String(random.int(0, 23)).padStart(2, '0')}:${String(random.int(0, 59)).padStart(2, '0')}:00Z`,
          ...(random.chance(0.5) ? { timeZone: random.pick(['America/New_York', 'Asia/Tokyo', 'UTC']) } : {}),
        },
  });
}

describe('assembleQuery, property-based', () => {
  it('parses back to the same conditions for thousands of random condition lists', () => {
    const random = new Random(20_261_105);
    for (let run = 0; run < 5000; run++) {
      const list = conditions(random);
      const logic = random.pick(['AND', 'OR'] as const);
      const query = assembleQuery({ conditions: list, logic });
      if (!query.ok) {
        throw new Error(`run ${run}: ${JSON.stringify(list)} was refused: ${query.error.message}`);
      }
      const compiled = compileQuery(query.value);
      if (!compiled.ok) {
        throw new Error(
          `run ${run}: ${JSON.stringify(query.value)} did not parse: ${compiled.error.message}`,
        );
      }
      const back = conditionsOf(compiled.value.ast);
      const expected = list.map((c) => ({
        property: c.property,
        value: c.value,
        negated: c.negated === true,
      }));
      expect(back?.conditions, query.value).toEqual(expected);
      if (list.length > 1) {
        expect(back?.logic).toBe(logic);
      }
    }
  });

  it('matches exactly what its conditions match when combined by hand', () => {
    const random = new Random(7);
    for (let run = 0; run < 300; run++) {
      const list = conditions(random);
      const logic = random.pick(['AND', 'OR'] as const);
      const query = assembleQuery({ conditions: list, logic });
      expect(query.ok).toBe(true);
      const whole = query.ok ? compileQuery(query.value) : undefined;
      const parts = list.map((c) => {
        const single = assembleQuery({ conditions: [{ property: c.property, value: c.value }] });
        const compiled = single.ok ? compileQuery(single.value) : undefined;
        if (!compiled?.ok) {
          throw new Error(`condition ${JSON.stringify(c)} did not compile`);
        }
        return { negated: c.negated === true, query: compiled.value };
      });
      if (!whole?.ok) {
        throw new Error('assembled query did not compile');
      }
      for (let k = 0; k < 20; k++) {
        const prepared = new PreparedOccurrence(randomOccurrence(random));
        const each = parts.map((p) => p.query.matches(prepared) !== p.negated);
        const expected = logic === 'AND' ? each.every(Boolean) : each.some(Boolean);
        expect(whole.value.matches(prepared)).toBe(expected);
      }
    }
  });

  it('classifies the same whether an occurrence is prepared once or not at all', () => {
    const random = new Random(99);
    const rules = Array.from({ length: 30 }, (_, i) => {
      const query = assembleQuery({ conditions: conditions(random) });
      const compiled = query.ok ? compileQuery(query.value) : undefined;
      if (!compiled?.ok) {
        throw new Error('random rule did not compile');
      }
      return { id: `r${i}`, projectId: `p${i % 4}`, weight: random.int(1, 3), query: compiled.value };
    });
    for (let k = 0; k < 200; k++) {
      const raw = randomOccurrence(random);
      expect(classify(new PreparedOccurrence(raw), rules)).toEqual(classify(raw, rules));
    }
  });
});
