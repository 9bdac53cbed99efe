import { describe, expect, it } from 'vitest';
import {
  assembleQuery,
  compileQuery,
  countBits,
  hasBit,
  indexesOf,
  OccurrenceSet,
  PROPERTIES,
} from '../src/index.ts';
import { occurrence } from './support/occurrences.ts';
import { Random } from './support/random.ts';

const TITLES = [
  'Daily Standup',
  'Acme sync',
  'Team-Meeting',
  'Réunion équipe',
  'stand up',
  '1:1 Ann',
  'Lunch',
];
const PEOPLE = [
  { email: 'ann@acme.com', displayName: 'Ann Éclair' },
  { email: 'bob@eu.acme.com', displayName: 'Bob Smith' },
  { email: 'zoe@example.org', displayName: 'Zoë Müller' },
];
const VALUES: Record<string, string[]> = {
  title: ['standup', 'stand*', '"team meeting"', 'reunion', 'acme', '1:1', 'sync'],
  description: ['budget', '"q3 plan*"', 'agenda'],
  calendar: ['work', 'acme'],
  text: ['ann', 'acme', '"bob smith"', 'eclair', 'zo*', 'standup'],
  attendees: ['ann', 'acme.com', 'muller', 'bob@'],
  domain: ['acme.com', 'eu.acme.com', 'example.org'],
  email: ['ann@acme.com', 'zoe@example.org'],
  response: ['accepted', 'declined', 'tentative', 'needsAction'],
  recurring: ['yes', 'no'],
  'is-all-day': ['yes', 'no'],
  'has-attendees': ['yes', 'no'],
  transparency: ['opaque', 'transparent'],
  'day-of-week': ['mon', 'sat,sun', 'tue,wed,thu,fri'],
  'time-of-day': ['>12:00', '<=09:30', '>=08:00', '<18:00', '10:00'],
};

function randomOccurrences(random: Random, count: number) {
  return Array.from({ length: count }, (_, i) =>
    occurrence({
      id: `e${i}`,
      summary: random.chance(0.9) ? random.pick(TITLES) : undefined,
      description: random.chance(0.4) ? random.pick(['Budget for Q3 planning', 'Agenda: none']) : undefined,
      attendees: [
        ...PEOPLE.filter(() => random.chance(0.4)),
        ...(random.chance(0.5)
          ? [{ email: 'me@x.com', self: true, responseStatus: random.pick(VALUES.response ?? []) }]
          : []),
      ],
      recurringEventId: random.chance(0.4) ? 'm' : undefined,
      transparency: random.chance(0.2) ? 'transparent' : undefined,
      calendar: {
        summary: random.pick(['Work', 'Acme client']),
        timeZone: random.pick(['Europe/Berlin', 'Asia/Tokyo']),
      },
      start: random.chance(0.15)
        ? { date: `2026-03-${String(random.int(1, 28)).padStart(2, '0')}` }
        : {
            dateTime: `2026-03-${String(random.int(1, 28)).padStart(2, '0')}T${String(random.int(0, 23)).padStart(2, '0')}:${random.pick(['00', '30'])}:00Z`,
          },
    }),
  );
}

function randomQuery(random: Random, depth = 0): string {
  const property = random.pick(PROPERTIES).name;
  const leaf = `${random.chance(0.25) ? '-' : ''}${property}:${random.pick(VALUES[property] ?? [])}`;
  if (depth >= 2 || random.chance(0.4)) {
    return leaf;
  }
  const a = randomQuery(random, depth + 1);
  const b = randomQuery(random, depth + 1);
  return random.pick([`${a} ${b}`, `${a} OR ${b}`, `-(${a} OR ${b})`, `(${a} OR ${b}) ${leaf}`]);
}

describe('OccurrenceSet', () => {
  it('selects exactly the occurrences that match one by one, for random queries', () => {
    const random = new Random(42);
    const events = randomOccurrences(random, 300);
    const set = new OccurrenceSet(events);
    for (let run = 0; run < 400; run++) {
      const query = randomQuery(random);
      const compiled = compileQuery(query);
      if (!compiled.ok) {
        throw new Error(`${query}: ${compiled.error.message}`);
      }
      const expected = events.flatMap((event, i) => (compiled.value.matches(event) ? [i] : []));
      expect(set.indexesOf(compiled.value), query).toEqual(expected);
      expect(set.count(compiled.value)).toBe(expected.length);
    }
  });

  it('agrees for assembled queries too', () => {
    const random = new Random(5);
    const events = randomOccurrences(random, 100);
    const set = new OccurrenceSet(events);
    for (let run = 0; run < 200; run++) {
      const property = random.pick(PROPERTIES).name;
      const query = assembleQuery({
        conditions: [
          { property, value: (random.pick(VALUES[property] ?? []) as string).replace(/^"|"$/g, '') },
          { property: 'title', value: random.pick(['sync', 'stand*']), negated: random.chance(0.5) },
        ],
        logic: random.pick(['AND', 'OR'] as const),
      });
      const compiled = query.ok ? compileQuery(query.value) : undefined;
      if (!compiled?.ok) {
        throw new Error('assembled query did not compile');
      }
      const bits = set.select(compiled.value);
      events.forEach((event, i) => {
        expect(hasBit(bits, i)).toBe(compiled.value.matches(event));
      });
    }
  });

  it('handles sizes that are not a multiple of 32, and an empty set', () => {
    for (const size of [0, 1, 31, 32, 33, 65]) {
      const set = new OccurrenceSet(Array.from({ length: size }, () => occurrence({ summary: 'x' })));
      const none = compileQuery('-title:x');
      const all = compileQuery('-title:y');
      expect(none.ok && all.ok).toBe(true);
      if (none.ok && all.ok) {
        expect(set.count(none.value)).toBe(0);
        expect(set.count(all.value)).toBe(size);
        expect(countBits(set.select(all.value))).toBe(size);
        expect(indexesOf(set.select(all.value))).toEqual(Array.from({ length: size }, (_, i) => i));
      }
    }
  });
});
