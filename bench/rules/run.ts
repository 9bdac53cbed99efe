// Previews 100 classification rules over 10,000 event occurrences on calendars in three zones,
// in-process (target: all 100 rules ≤ 50 ms, p50), classifies the same occurrences with all 100
// rules, and times parsing 1,000 queries. Medians of repeated runs; appends to bench/results/rules.md.
import { appendFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  type CompiledQuery,
  classify,
  compileQuery,
  type EventOccurrence,
  OccurrenceSet,
  PreparedOccurrence,
  type ScoringRule,
} from '@calgate/rules';
import { machineSummary, today } from '../lib/machine.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const OCCURRENCES = 10_000;
const root = fileURLToPath(new URL('../../', import.meta.url));

let seed = 20_260_105;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
const pad = (n: number) => String(n).padStart(2, '0');

const ZONES = ['America/New_York', 'Europe/Berlin', 'Asia/Tokyo'];
const CALENDARS = ZONES.map((timeZone, i) => ({
  id: `cal_${i}`,
  summary: ['Work', 'Client Projects — Acme', 'Équipe Tokyo'][i] as string,
  timeZone,
  ownerEmail: `owner${i}@example.com`,
}));
const TITLE_WORDS = [
  'Standup',
  'Daily',
  'Weekly',
  'Sync',
  'Acme',
  'Globex',
  'Initech',
  'Review',
  'Planning',
  'Sprint',
  'Retro',
  '1:1',
  'Lunch',
  'Interview',
  'Design',
  'Budget',
  'Q3',
  'Réunion',
  'Kickoff',
  'Demo',
  'All-hands',
  'Team-meeting',
  'Customer',
  'Onboarding',
  'Workshop',
  'Focus',
  'Café',
  'Strategy',
  'Hiring',
  'Support',
];
const DOMAINS = ['acme.com', 'eu.acme.com', 'globex.io', 'initech.co.uk', 'example.com', 'müller.de'];
const NAMES = ['Ann', 'Bob', 'Sarah', 'Jürgen', 'Zoë', 'Mei', 'Carlos', 'Priya', 'Olu', 'Sam'];
const RESPONSES = ['accepted', 'declined', 'tentative', 'needsAction'];

function makeOccurrence(i: number): EventOccurrence {
  const calendar = CALENDARS[i % 3] as (typeof CALENDARS)[number];
  const title = Array.from({ length: int(1, 4) }, () => pick(TITLE_WORDS)).join(' ');
  const attendees = Array.from({ length: int(0, 6) }, () => {
    const name = pick(NAMES);
    return {
      email: `${name.toLowerCase()}${int(1, 9)}@${pick(DOMAINS)}`,
      displayName: `${name} ${pick(NAMES)}son`,
    };
  });
  if (attendees.length > 0) {
    attendees.push({
      email: calendar.ownerEmail,
      displayName: 'Me',
      ...{ self: true, responseStatus: pick(RESPONSES) },
    });
  }
  const day = `2026-${pad(int(1, 12))}-${pad(int(1, 28))}`;
  const allDay = random() < 0.1;
  return {
    calendar,
    event: {
      id: `evt_${i}`,
      summary: title,
      ...(random() < 0.4
        ? { description: `Agenda: ${pick(TITLE_WORDS)} and ${pick(TITLE_WORDS)} for ${pick(DOMAINS)}` }
        : {}),
      start: allDay
        ? { date: day }
        : {
            dateTime: `${day}T${pad(int(0, 23))}:${pad(pick([0, 15, 30, 45]))}:00Z`,
            ...(random() < 0.3 ? { timeZone: pick(ZONES) } : {}),
          },
      attendees,
      ...(random() < 0.4 ? { recurringEventId: `series_${int(1, 200)}` } : {}),
      ...(random() < 0.15 ? { transparency: 'transparent' } : {}),
    },
  };
}

const TEMPLATES: (() => string)[] = [
  () => `title:${pick(TITLE_WORDS).toLowerCase()}`,
  () => `title:"${pick(TITLE_WORDS)} ${pick(TITLE_WORDS)}"`,
  () => `title:${pick(TITLE_WORDS).slice(0, 3).toLowerCase()}*`,
  () => `domain:${pick(DOMAINS)}`,
  () => `domain:${pick(DOMAINS)} -response:declined`,
  () => `email:${pick(NAMES).toLowerCase()}${int(1, 9)}@${pick(DOMAINS)}`,
  () => `attendees:${pick(NAMES).toLowerCase()}`,
  () => `text:${pick(TITLE_WORDS).toLowerCase()}`,
  () => `${pick(TITLE_WORDS).toLowerCase()} ${pick(TITLE_WORDS).toLowerCase()}`,
  () => `description:agenda calendar:${pick(['work', 'acme', 'equipe'])}`,
  () => `day-of-week:${pick(['sat,sun', 'mon,wed,fri', 'tue', 'thursday'])} -is-all-day:yes`,
  () => `time-of-day:${pick(['>', '>=', '<', '<='])}${pad(int(7, 19))}:${pick(['00', '30'])}`,
  () => `(domain:${pick(DOMAINS)} OR domain:${pick(DOMAINS)}) title:${pick(TITLE_WORDS).toLowerCase()}`,
  () => `recurring:yes has-attendees:${pick(['yes', 'no'])} transparency:opaque`,
  () => `-(title:lunch OR title:focus) response:${pick(RESPONSES)} time-of-day:>=09:00 time-of-day:<18:00`,
];

const QUERIES = Array.from({ length: 100 }, (_, i) => (TEMPLATES[i % TEMPLATES.length] as () => string)());
const RULES: CompiledQuery[] = QUERIES.map((query) => {
  const compiled = compileQuery(query);
  if (!compiled.ok) {
    throw compiled.error;
  }
  return compiled.value;
});
const SCORING: ScoringRule[] = RULES.map((query, i) => ({
  id: `rule_${i}`,
  projectId: `prj_${i % 7}`,
  weight: 1 + (i % 3),
  query,
}));
const EVENTS = Array.from({ length: OCCURRENCES }, (_, i) => makeOccurrence(i));
const PARSE_QUERIES = Array.from(
  { length: 1000 },
  (_, i) => `${QUERIES[i % 100]}${i % 2 ? ' OR title:x' : ''}`,
);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function timed(fn: () => void): number[] {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    fn();
    samples.push(performance.now() - started);
  }
  return samples;
}

let sink = 0;
/** One occurrence at a time, as a single event is tested. */
const previewOneByOne = (prepared: PreparedOccurrence[], query: CompiledQuery) => {
  let count = 0;
  for (const occurrence of prepared) {
    if (query.matches(occurrence)) {
      count += 1;
    }
  }
  return count;
};

// Warm-up so the JIT has seen every path once.
for (let i = 0; i < 2; i++) {
  const set = new OccurrenceSet(EVENTS);
  for (const rule of RULES) {
    sink += set.count(rule);
  }
}

const checkSet = new OccurrenceSet(EVENTS);
const matchCounts = RULES.map((rule) => checkSet.count(rule));
const checkPrepared = EVENTS.map((event) => new PreparedOccurrence(event));
RULES.forEach((rule, i) => {
  if (previewOneByOne(checkPrepared, rule) !== matchCounts[i]) {
    throw new Error(`rule ${i} (${QUERIES[i]}): the set and the one-by-one test disagree`);
  }
});

const cold = timed(() => {
  const set = new OccurrenceSet(EVENTS);
  for (const rule of RULES) {
    sink += set.indexesOf(rule).length;
  }
});
const warmSet = new OccurrenceSet(EVENTS);
for (const rule of RULES) {
  sink += warmSet.count(rule);
}
const warm = timed(() => {
  for (const rule of RULES) {
    sink += warmSet.indexesOf(rule).length;
  }
});
const oneRule = timed(() => {
  sink += new OccurrenceSet(EVENTS).indexesOf(RULES[14] as CompiledQuery).length;
});
const oneByOne = timed(() => {
  for (const occurrence of checkPrepared) {
    for (const rule of RULES) {
      sink += rule.matches(occurrence) ? 1 : 0;
    }
  }
});
const classifyAll = timed(() => {
  for (const occurrence of checkPrepared) {
    sink += classify(occurrence, SCORING).confidence;
  }
});
const parse = timed(() => {
  for (const query of PARSE_QUERIES) {
    sink += compileQuery(query).ok ? 1 : 0;
  }
});

const total = matchCounts.reduce((a, b) => a + b, 0);
const row = (work: string, samples: number[], target = '') =>
  `| ${work} | ${median(samples).toFixed(2)} | ${Math.max(...samples).toFixed(2)} | ${target} |`;
const rows = [
  row('preview: 100 rules × 10,000 occurrences on an indexed OccurrenceSet', warm, '≤ 50'),
  row('the same with the set built in the run (fold, read starts, index: once per fetch)', cold),
  row('preview: 1 rule (a nested one) × 10,000 occurrences, indexing included', oneRule),
  row('100 rules × 10,000 occurrences one by one (`matches`, fields folded)', oneByOne),
  row('classify 10,000 occurrences with all 100 rules (fields folded)', classifyAll),
  row('parse and compile 1,000 queries', parse),
];
const header = '| work | p50 ms | max ms | target ms |';
const summary = `Medians of ${RUNS} runs; 10,000 occurrences on calendars in ${ZONES.join(', ')} (30% with their own start zone), 100 rules over every property; ${total.toLocaleString('en-US')} matches in all (${Math.min(...matchCounts)}–${Math.max(...matchCounts)} per rule).`;
console.log(`rules: ${machineSummary()}`);
console.log(summary);
console.log(header);
console.log('|---|---|---|---|');
console.log(rows.join('\n'));
if (sink === Number.NEGATIVE_INFINITY) {
  console.log(sink);
}
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/rules.md`,
    `\n## ${today()} — ${machineSummary()}\n\n${summary} Load average at the start: ${loadavg()[0]?.toFixed(1)}.\n\n${header}\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}
