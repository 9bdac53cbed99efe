// What read-side screening adds to a tool answer: a list_events answer of 50 events (the
// bench:peer listing, with an organizer and attendees' names) made into its structured content
// and text as the tool wrapper does, without screening, with screening on a warm cache (the
// common case: the same events read again), and with every text new (a cold cache). Prints
// microseconds per answer. Then the time to screen one field with the firewall's screener (the
// classifier, with the rules where it agrees) and with the rules alone, uncached: every text of the
// development corpus (bench/firewall/frozen/dev) and synthetic long descriptions made of it.
// Appends them to bench/results/read-screen.md (BENCH_RECORD=0 to skip).
import { readFileSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  CachedScreener,
  detectorScreener,
  firewallScreener,
  formatText,
  Insiders,
  jsonOf,
  screenAnswer,
} from '@calgate/tools';
import { machineSummary, today } from '../lib/machine.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 2000);
const root = fileURLToPath(new URL('../../', import.meta.url));

function answer(salt: string) {
  return {
    events: Array.from({ length: 50 }, (_, i) => {
      const day = String(1 + (i % 28)).padStart(2, '0');
      const hour = String(8 + (i % 9)).padStart(2, '0');
      return {
        calendarId: 'cal_bench',
        id: `evt${i}${salt}`,
        status: 'confirmed',
        summary: `Meeting ${i}${salt}`,
        description: `Agenda: review the numbers, decide next steps.${salt}`,
        location: 'Room 4',
        start: { dateTime: `2026-12-${day}T${hour}:00:00+01:00` },
        end: { dateTime: `2026-12-${day}T${hour}:30:00+01:00` },
        attendees: [
          { email: 'ada@example.com', displayName: 'Ada Lovelace', responseStatus: 'accepted' },
          { email: 'bob@partner.test', displayName: 'Bob', responseStatus: 'needsAction' },
        ],
        organizer: { email: 'ada@example.com', displayName: 'Ada Lovelace' },
        updated: '2026-11-20T10:00:00.000Z',
      };
    }),
  };
}

const insiders = new Insiders(['ada@example.com']);

/** The wrapper's work on one answer: structured content, its JSON and the text. */
function shape(result: object): number {
  return jsonOf(result).length + formatText(result, 'json').length;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

let sink = 0;
const cached = new CachedScreener(firewallScreener);
// Each answer is a fresh object, as a tool's is (jsonOf remembers the JSON of an object it saw).
const variants: Record<'plain' | 'warm' | 'cold', (round: number, index: number) => void> = {
  plain: () => {
    sink += shape(answer(''));
  },
  warm: () => {
    const { answer: screened } = screenAnswer(answer(''), { screener: cached, insiders });
    sink += shape(screened);
  },
  cold: (round, index) => {
    const { answer: screened } = screenAnswer(answer(`-${round}-${index}`), {
      screener: new CachedScreener(firewallScreener),
      insiders,
    });
    sink += shape(screened);
  },
};

/** Microseconds per answer of each variant, median of the rounds; rounds interleave the variants so drift hits all alike. */
const rounds: Record<keyof typeof variants, number[]> = { plain: [], warm: [], cold: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const name of ['plain', 'warm', 'cold'] as const) {
    const count = name === 'cold' ? Math.ceil(ANSWERS / 10) : ANSWERS;
    const started = performance.now();
    for (let index = 0; index < count; index++) {
      variants[name](round, index);
    }
    rounds[name].push(((performance.now() - started) * 1000) / count);
  }
}
const plain = median(rounds.plain);
const warm = median(rounds.warm);
const cold = median(rounds.cold);

// Per field, uncached: each text timed as the median of 3 screenings, after a warm-up.
const devTexts = ['injections.jsonl', 'benign.jsonl'].flatMap((name) =>
  readFileSync(new URL(`../firewall/frozen/dev/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { text: string }).text),
);
const longTexts = (size: number): string[] =>
  Array.from({ length: 60 }, (_, i) => {
    let text = '';
    for (let j = i; text.length < size; j = (j + 7) % devTexts.length) {
      text += `${devTexts[j] ?? ''}\n`;
    }
    return text.slice(0, size);
  });
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}
function perField(screen: (text: string) => unknown, texts: string[]): { p50: number; p95: number } {
  const times = texts.map((text) => {
    const samples: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      sink += screen(text) === undefined ? 0 : 1;
      samples.push(performance.now() - started);
    }
    return median(samples);
  });
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}
for (const text of devTexts.slice(0, 300)) {
  firewallScreener.screen(text);
  detectorScreener.screen(text);
}
const fieldRows = [
  { group: `development corpus fields (${devTexts.length})`, texts: devTexts },
  { group: 'synthetic 2 KB descriptions (60)', texts: longTexts(2048) },
  { group: 'synthetic 4 KB descriptions (60)', texts: longTexts(4096) },
].map(({ group, texts }) => {
  const fw = perField((text) => firewallScreener.screen(text), texts);
  const rules = perField((text) => detectorScreener.screen(text), texts);
  return `| ${group} | ${fw.p50.toFixed(2)} / ${fw.p95.toFixed(2)} | ${rules.p50.toFixed(2)} / ${rules.p95.toFixed(2)} |`;
});

const lines = [
  `## ${today()} — ${machineSummary()}`,
  '',
  `A list_events answer of 50 events made into structured content, JSON and text, median of ${ROUNDS} rounds of ${ANSWERS} answers (µs per answer).`,
  '',
  '| wrapper | µs per answer | added |',
  '|---|---|---|',
  `| without screening | ${plain.toFixed(1)} | – |`,
  `| screening, warm cache (texts read before) | ${warm.toFixed(1)} | ${(warm - plain).toFixed(1)} µs |`,
  `| screening, cold cache (every text new) | ${cold.toFixed(1)} | ${(cold - plain).toFixed(1)} µs |`,
  '',
  `Cache: ${cached.hits} hits, ${cached.misses} misses.`,
  '',
  'One field screened, uncached (ms, p50 / p95 of the median of 3 screenings per text):',
  '',
  '| texts | firewall screener (classifier + rules) | rules alone |',
  '|---|---|---|',
  ...fieldRows,
  '',
  `(checksum ${sink % 997})`,
  '',
];
console.info(lines.join('\n'));
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(`${root}bench/results/read-screen.md`, `${lines.join('\n')}\n`);
}
