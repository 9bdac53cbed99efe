// Screens every text of the firewall corpus (bench/firewall/*.jsonl, made by generate.ts) as a
// write would: the share of injection payloads refused (target ≥ 95 %), how many benign meeting
// texts were refused (target 0) and the median time to screen one text. Prints the result and
// appends it to bench/results/firewall.md (BENCH_RECORD=0 to skip).
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
// The bench screens exactly what the write tools screen; the package entry point does not export it.
import { screenText } from '@calgate/tools';
import { machineSummary, today } from '../lib/machine.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const root = fileURLToPath(new URL('../../', import.meta.url));

interface Entry {
  id: string;
  kind: string;
  lang: string;
  field: string;
  text: string;
}

async function load(name: string): Promise<Entry[]> {
  const text = await readFile(`${root}bench/firewall/${name}`, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Entry);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const injections = await load('injections.jsonl');
const benign = await load('benign.jsonl');
const refused = (entry: Entry) => !screenText(entry.field, entry.text).ok;

const missed = injections.filter((entry) => !refused(entry));
const wronglyRefused = benign.filter(refused);

// Warm up the regular expressions, then time each text as the median of RUNS screenings.
for (const entry of [...injections, ...benign].slice(0, 200)) {
  screenText(entry.field, entry.text);
}
const perText = [...injections, ...benign].map((entry) => {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    screenText(entry.field, entry.text);
    samples.push(performance.now() - started);
  }
  return median(samples);
});
const sortedTimes = [...perText].sort((a, b) => a - b);
const p95 = sortedTimes[Math.floor(sortedTimes.length * 0.95)] ?? 0;

const byKind = new Map<string, { total: number; refused: number }>();
for (const entry of injections) {
  const kind = entry.kind.startsWith('disguised:') ? 'disguised' : entry.kind;
  const row = byKind.get(kind) ?? { total: 0, refused: 0 };
  row.total++;
  row.refused += missed.includes(entry) ? 0 : 1;
  byKind.set(kind, row);
}

const rate = ((injections.length - missed.length) / injections.length) * 100;
const lines = [
  `| injection payloads refused | ${injections.length - missed.length} / ${injections.length} (${rate.toFixed(1)} %) | ≥ 95 % |`,
  `| benign texts refused | ${wronglyRefused.length} / ${benign.length} | 0 |`,
  `| median screening time per text | ${(median(perText) * 1000).toFixed(0)} µs (p95 ${(p95 * 1000).toFixed(0)} µs) | |`,
];
const kinds = [...byKind].map(([kind, row]) => `| ${kind} | ${row.refused} / ${row.total} |`).join('\n');
const misses = [...missed, ...wronglyRefused]
  .map((entry) => `- ${entry.id} (${entry.kind}): ${JSON.stringify(entry.text.slice(0, 100))}`)
  .join('\n');

const report = `| measure | result | target |\n|---|---|---|\n${lines.join('\n')}\n\n| payload kind | refused |\n|---|---|\n${kinds}\n${misses === '' ? '' : `\nNot as targeted:\n\n${misses}\n`}`;
console.log(`firewall corpus, ${machineSummary()}, medians of ${RUNS} runs per text\n\n${report}`);
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/firewall.md`,
    `\n## ${today()} — ${machineSummary()}\n\nCorpus: ${injections.length} injection payloads, ${benign.length} benign meeting texts (bench/firewall). Time: median of ${RUNS} screenings per text.\n\n${report}`,
  );
}
if (rate < 95 || wronglyRefused.length > 0) {
  process.exitCode = 1;
}
