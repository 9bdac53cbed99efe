// Screens every text of the firewall's corpora as a write would and prints, for each, the share of
// injection payloads refused (target ≥ 90 %, every language ≥ 80 %), the share of hard benign texts
// refused (target ≤ 0.5 %) and the time to screen one text. The newest frozen test set comes
// first: it was written and frozen before the detector's last round of changes
// (bench/firewall/frozen/test7/README.md), so it is the figure users get; earlier rounds follow,
// spent. Only their totals by kind and language are printed, never their texts, so that nobody
// tunes on them. Then the data the classifier was trained and cross-validated on: the development
// set (frozen/dev), the training corpus (train/) and the corpus written with the rules
// (bench/firewall/*.jsonl, made by generate.ts), with their misses. Appends the result to
// bench/results/firewall.md (BENCH_RECORD=0 to skip).
import { createHash } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
// The bench screens exactly what the write tools screen.
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

interface Corpus {
  title: string;
  /**
   * Folder under bench/firewall holding injections.jsonl and benign.jsonl, or (`split`) folders
   * of <lang>-inj-NN.jsonl and <lang>-ben-NN.jsonl files.
   */
  dir: string;
  split?: boolean;
  /** Whether its misses may be printed (not for the frozen test set). */
  showMisses: boolean;
  /** A frozen test set: its files are checked against the hashes in its README. */
  frozen?: boolean;
}

const CORPORA: readonly Corpus[] = [
  {
    title:
      'frozen test set, round 7 (never tuned on; written without sight of any corpus; the current figure)',
    dir: 'frozen/test7/',
    showMisses: false,
    frozen: true,
  },
  {
    title:
      'frozen test set, round 6 (spent, and trained on since round 7: not a measurement; its figure when fresh is in bench/results/firewall.md)',
    dir: 'frozen/test6/',
    showMisses: false,
    frozen: true,
  },
  {
    title: 'frozen test set, round 5 (spent, trained on since round 7: not a measurement)',
    dir: 'frozen/test5/',
    showMisses: false,
    frozen: true,
  },
  {
    title: 'frozen test set, round 4 (spent, trained on since round 7: not a measurement)',
    dir: 'frozen/test4/',
    showMisses: false,
    frozen: true,
  },
  {
    title: 'frozen test set, round 3 (spent, trained on since round 7: not a measurement)',
    dir: 'frozen/test3/',
    showMisses: false,
    frozen: true,
  },
  {
    title: 'frozen test set, round 2 (spent, trained on since round 7: not a measurement)',
    dir: 'frozen/test2/',
    showMisses: false,
    frozen: true,
  },
  {
    title: 'frozen test set, round 1 (spent, trained on since round 7: not a measurement)',
    dir: 'frozen/test/',
    showMisses: false,
    frozen: true,
  },
  { title: 'development set (trained and tuned on)', dir: 'frozen/dev/', showMisses: true },
  { title: 'training corpus (trained and tuned on)', dir: 'train/', split: true, showMisses: false },
  { title: 'corpus written with the rules (trained on)', dir: '', showMisses: true },
];

/**
 * Refuses a frozen set whose files no longer hash to what its README recorded when it was frozen:
 * a result on edited files is not that round's result.
 */
async function checkFrozen(dir: string): Promise<void> {
  const readme = await readFile(`${root}bench/firewall/${dir}README.md`, 'utf8');
  for (const name of ['injections.jsonl', 'benign.jsonl']) {
    const recorded = new RegExp(`\`${name.replace('.', '\\.')}\` \\| \\d+ \\| \`([0-9a-f]{64})\``).exec(
      readme,
    )?.[1];
    const actual = createHash('sha256')
      .update(await readFile(`${root}bench/firewall/${dir}${name}`))
      .digest('hex');
    if (recorded !== undefined && recorded !== actual) {
      throw new Error(
        `bench/firewall/${dir}${name} was edited after it was frozen (SHA-256 differs from its README)`,
      );
    }
  }
}

async function load(path: string): Promise<Entry[]> {
  const text = await readFile(`${root}bench/firewall/${path}`, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Entry);
}

/** The files of a split corpus whose names say `kind` (inj or ben), in path order. */
async function loadSplit(dir: string, kind: 'inj' | 'ben'): Promise<Entry[]> {
  const files = (await readdir(`${root}bench/firewall/${dir}`, { recursive: true }))
    .filter((name) => new RegExp(`-${kind}-[^/]*\\.jsonl$`).test(name))
    .sort();
  return (await Promise.all(files.map((name) => load(`${dir}${name}`)))).flat();
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const percent = (part: number, whole: number) => (whole === 0 ? 0 : (part / whole) * 100);
const refused = (entry: Entry) => !screenText(entry.field, entry.text).ok;

/** Refused / total per group, as table rows. */
function tally(entries: readonly Entry[], refusedIds: ReadonlySet<string>, groupOf: (e: Entry) => string) {
  const groups = new Map<string, { total: number; refused: number }>();
  for (const entry of entries) {
    const row = groups.get(groupOf(entry)) ?? { total: 0, refused: 0 };
    row.total++;
    row.refused += refusedIds.has(entry.id) ? 1 : 0;
    groups.set(groupOf(entry), row);
  }
  return [...groups]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([group, row]) =>
        `| ${group} | ${row.refused} / ${row.total} (${percent(row.refused, row.total).toFixed(0)} %) |`,
    )
    .join('\n');
}

function timePerText(entries: readonly Entry[]): { median: number; p95: number } {
  for (const entry of entries.slice(0, 200)) {
    screenText(entry.field, entry.text);
  }
  const perText = entries.map((entry) => {
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      screenText(entry.field, entry.text);
      samples.push(performance.now() - started);
    }
    return median(samples);
  });
  const sorted = [...perText].sort((a, b) => a - b);
  return { median: median(perText), p95: sorted[Math.floor(sorted.length * 0.95)] ?? 0 };
}

async function report(corpus: Corpus): Promise<{ text: string; rate: number; falseRate: number }> {
  if (corpus.frozen === true) {
    await checkFrozen(corpus.dir);
  }
  const injections = corpus.split
    ? await loadSplit(corpus.dir, 'inj')
    : await load(`${corpus.dir}injections.jsonl`);
  const benign = corpus.split ? await loadSplit(corpus.dir, 'ben') : await load(`${corpus.dir}benign.jsonl`);
  const caught = new Set(injections.filter(refused).map((entry) => entry.id));
  const wrong = benign.filter(refused);
  const time = timePerText([...injections, ...benign]);
  const rate = percent(caught.size, injections.length);
  const falseRate = percent(wrong.length, benign.length);
  const baseKind = (entry: Entry) => (entry.kind.startsWith('disguised:') ? 'disguised' : entry.kind);
  const misses = corpus.showMisses
    ? [...injections.filter((entry) => !caught.has(entry.id)), ...wrong]
        .map(
          (entry) =>
            `- ${entry.id} (${entry.kind}, ${entry.lang}): ${JSON.stringify(entry.text.slice(0, 100))}`,
        )
        .join('\n')
    : '';
  const text = [
    `### ${corpus.title}: ${injections.length} injections, ${benign.length} benign texts`,
    '',
    '| measure | result | target |',
    '|---|---|---|',
    `| injection payloads refused | ${caught.size} / ${injections.length} (${rate.toFixed(1)} %) | ≥ 90 %, every language ≥ 80 % |`,
    `| benign texts refused | ${wrong.length} / ${benign.length} (${falseRate.toFixed(2)} %) | ≤ 0.5 % |`,
    `| screening time per text | median ${(time.median * 1000).toFixed(0)} µs, p95 ${(time.p95 * 1000).toFixed(0)} µs | p95 ≤ 5 ms |`,
    '',
    '| injection kind | refused |',
    '|---|---|',
    tally(injections, caught, baseKind),
    '',
    '| injection language | refused |',
    '|---|---|',
    tally(injections, caught, (entry) => entry.lang),
    '',
    '| benign kind | refused |',
    '|---|---|',
    tally(benign, new Set(wrong.map((entry) => entry.id)), (entry) => entry.kind),
    ...(misses === ''
      ? []
      : ['', '<details><summary>Not as targeted</summary>', '', misses, '', '</details>']),
    '',
  ].join('\n');
  return { text, rate, falseRate };
}

// FIREWALL_CORPORA=1: only the first corpus (the newest frozen test set), for one measurement of a model.
const corpora =
  process.env.FIREWALL_CORPORA === undefined
    ? CORPORA
    : CORPORA.slice(0, Number(process.env.FIREWALL_CORPORA));
const results = [];
for (const corpus of corpora) {
  results.push(await report(corpus));
}
const body = results.map((result) => result.text).join('\n');
console.log(`firewall corpora, ${machineSummary()}, medians of ${RUNS} runs per text\n\n${body}`);
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/firewall.md`,
    `\n## ${today()} — ${machineSummary()}\n\nThe newest frozen test set (round 7) is the figure to quote; rounds 1 to 6 are spent and, since round 7, trained on, as are the others.\n\n${body}`,
  );
}
const [test] = results;
if (test === undefined || test.rate < 90 || test.falseRate > 0.5) {
  process.exitCode = 1;
}
