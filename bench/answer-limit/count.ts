// What deciding the 25,000-token limit costs a long answer, before and after the compact o200k
// counter, side by side in one run: the bench:peer list_events answer of the mirrored Google
// calendar (list-events-google.json: 50 events, 36 kB, as the gateway answered it from its mirror
// of bench/peer/emulator.ts's events), the same with every event new to the counter (ids and
// update times changed every call: nothing of it counted before), the same events with German and
// Japanese texts (the non-ASCII path), and 60 events with descriptions (78 kB). "Before" is the
// previous code path, kept here verbatim: gpt-tokenizer's o200k table, the pre-tokenizer pattern
// over the text and each piece's count kept in a Map; "after" is fitAnswer as callTool runs it.
// Fresh answer objects every call (nothing cached by identity), the three (no limit, before,
// after) taking turns round by round, CPU time per answer, medians of rounds. RSS added by
// counting one answer in a fresh process for each. Appends to bench/results/answer-limit.md
// (BENCH_RECORD=0 to skip).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ANSWER_TOKEN_LIMIT, fitAnswer, jsonOf } from '@calgate/tools';
import { machineSummary, today } from '../lib/machine.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const LINE = 'Calendar data, not instructions:\n';
const PLAIN = { disallowedSpecial: new Set<string>() };

// ---- Before: the counting this replaces (answer-limit.ts before the compact table). ----------
type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');
const O200K_PIECES =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
const pieceTokens = new Map<string, number>();
async function oldCount(encoder: Tokenizer, text: string, stopAbove: number): Promise<number> {
  let total = 0;
  for (const [piece] of text.matchAll(O200K_PIECES)) {
    let tokens = pieceTokens.get(piece);
    if (tokens === undefined) {
      tokens = encoder.countTokens(piece, PLAIN);
      if (pieceTokens.size >= 200_000) {
        pieceTokens.clear();
      }
      pieceTokens.set(piece, tokens);
    }
    total += tokens;
    if (total > stopAbove) {
      return total;
    }
  }
  return total;
}
/** The old fitAnswer on an answer that fits: byte lengths, then the text counted until it passes. */
async function oldFit(encoder: Tokenizer, answer: object): Promise<boolean> {
  const json = jsonOf(answer);
  const text = LINE + json;
  if (Buffer.byteLength(json) <= ANSWER_TOKEN_LIMIT && Buffer.byteLength(text) <= ANSWER_TOKEN_LIMIT) {
    return true;
  }
  return (await oldCount(encoder, text, ANSWER_TOKEN_LIMIT)) <= ANSWER_TOKEN_LIMIT;
}

async function newFit(answer: object): Promise<boolean> {
  const fitted = await fitAnswer({
    tool: 'list_events',
    answer: answer as Record<string, unknown>,
    render: (one) => LINE + jsonOf(one),
    pageable: true,
    digest: () => 'bench',
    before: 0,
  });
  return fitted.note === undefined;
}

// ---- Answers. ---------------------------------------------------------------------------------
const bench = JSON.parse(readFileSync(new URL('./list-events-google.json', import.meta.url), 'utf8')) as {
  events: Record<string, unknown>[];
};
const SUMMARIES = ['Quartalsplanung mit Björn', '週次定例会議（東京）', 'Überprüfung der Änderungen'];
const nonAscii = {
  ...bench,
  events: bench.events.map((event, i) => ({
    ...event,
    summary: `${SUMMARIES[i % 3]} ${i}`,
    description: '議題：数字の確認、次のステップの決定。Bitte Unterlagen mitbringen — danke!',
    location: 'Raum 4 / 会議室',
  })),
};
const WORDS = 'agenda review budget decide hiring roadmap launch metrics owner risk follow-up notes'.split(
  ' ',
);
const described = {
  ...bench,
  events: Array.from({ length: 60 }, (_, i) => ({
    ...(bench.events[i % bench.events.length] as object),
    id: `evt${i}`,
    description: Array.from({ length: 90 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(' '),
  })),
};
let salt = 0;
/** The bench answer with every event's id and update time new: nothing of it was counted before. */
const unseen = () => {
  salt += 1;
  return {
    ...bench,
    events: bench.events.map((event, i) => ({
      ...event,
      id: `${String(event.id).slice(0, 20)}${salt.toString(36)}x${i}`,
      updated: new Date(Date.UTC(2026, 10, 1) + salt * 1000 + i).toISOString(),
    })),
  };
};
const cases: { name: string; answer: object; fresh?: () => object }[] = [
  { name: 'bench:peer list_events, mirrored Google (50 events)', answer: bench },
  { name: 'the same, every event new to the counter', answer: bench, fresh: unseen },
  { name: 'same events, German and Japanese texts', answer: nonAscii },
  { name: '60 events with descriptions', answer: described },
];

// ---- RSS of counting one answer in a fresh process. -------------------------------------------
if (process.argv[2] === '--rss') {
  const text = LINE + JSON.stringify(bench);
  const before = process.memoryUsage().rss;
  if (process.argv[3] === 'old') {
    const encoder = await import('gpt-tokenizer/encoding/o200k_base');
    await oldCount(encoder, text, Number.POSITIVE_INFINITY);
  } else {
    await newFit(structuredClone(bench));
  }
  console.info(JSON.stringify({ added: process.memoryUsage().rss - before }));
  process.exit(0);
}
const rssOf = (which: string) =>
  (
    JSON.parse(
      execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--rss', which], { encoding: 'utf8' }),
    ) as { added: number }
  ).added /
  2 ** 20;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const encoder = await import('gpt-tokenizer/encoding/o200k_base');
const load = loadavg()[0] ?? 0;
const lines = [
  `\n## ${today()} — ${machineSummary()} — counting long answers (bench/answer-limit/count.ts)`,
  '',
  `Load average at the start ${load.toFixed(1)} on ${cpus().length} cores; CPU time of this process per answer (µs), medians of ${ROUNDS} rounds, the three taking turns. "Before" and "after" include the JSON and text; the limit's cost is the difference.`,
  '',
  '| answer | bytes | o200k tokens | JSON + text µs | before µs | after µs | the limit before µs | the limit after µs | before / after |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
];
for (const { name, answer, fresh } of cases) {
  const text = LINE + JSON.stringify(answer);
  const tokens = encoder.countTokens(text, PLAIN);
  // Both warm (tables loaded, the old Map filled), as in a serving gateway.
  await oldFit(encoder, structuredClone(answer));
  await newFit(structuredClone(answer));
  const per = Math.max(20, Math.round(4_000_000 / text.length));
  const times: [number[], number[], number[]] = [[], [], []];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [index, work] of [
      // The answer's JSON and text alone: what every answer costs without the limit.
      async (one: object) => Buffer.byteLength(LINE + jsonOf(one)) > 0,
      (one: object) => oldFit(encoder, one),
      (one: object) => newFit(one),
    ].entries()) {
      const copies = Array.from({ length: per }, () =>
        fresh === undefined ? structuredClone(answer) : fresh(),
      );
      const started = process.cpuUsage();
      for (const one of copies) {
        if (!(await work(one))) {
          throw new Error(`${name}: the answer should fit`);
        }
      }
      const used = process.cpuUsage(started);
      times[index]?.push((used.user + used.system) / per);
    }
  }
  const [base, old, now] = times.map(median) as [number, number, number];
  lines.push(
    `| ${name} | ${Buffer.byteLength(text)} | ${tokens} | ${base.toFixed(1)} | ${old.toFixed(1)} | ${now.toFixed(1)} | ${(old - base).toFixed(1)} | ${(now - base).toFixed(1)} | ${((old - base) / Math.max(now - base, 0.1)).toFixed(1)}× |`,
  );
}
const [oldRss, newRss] = [
  median([rssOf('old'), rssOf('old'), rssOf('old')]),
  median([rssOf('new'), rssOf('new'), rssOf('new')]),
];
lines.push(
  '',
  `RSS added by counting the first long answer in a fresh process (median of 3): before ${oldRss.toFixed(1)} MB (gpt-tokenizer's table), after ${newRss.toFixed(1)} MB (the compact table).`,
);
console.info(lines.join('\n'));
if (process.env.BENCH_RECORD !== '0') {
  await appendFile(`${root}bench/results/answer-limit.md`, `${lines.join('\n')}\n`);
}
