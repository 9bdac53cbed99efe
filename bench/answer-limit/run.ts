// What the 25,000-token answer limit costs a tool answer (fitAnswer, as callTool runs it): a
// list_events answer of 20 events (about 10 kB: passes on its byte length, the common case),
// one of 100 events with descriptions (about 60 kB: over 25,000 bytes, so counted exactly, and
// within the limit), and one of 500 (cut into a page with nextPageToken). Each against the
// work the answer needed before (its JSON and text), in microseconds per answer, median of
// rounds. Appends them to bench/results/answer-limit.md (BENCH_RECORD=0 to skip).
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { fitAnswer, jsonOf, tokenCount } from '@calgate/tools';
import { machineSummary, today } from '../lib/machine.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const root = fileURLToPath(new URL('../../', import.meta.url));

const WORDS = 'agenda review budget decide hiring roadmap launch metrics owner risk follow-up notes'.split(
  ' ',
);

function answer(count: number, describe: boolean, salt: number) {
  return {
    timeZone: 'Europe/Berlin',
    events: Array.from({ length: count }, (_, i) => ({
      calendarId: 'cal_bench',
      id: `evt${salt}x${i}`,
      status: 'confirmed',
      summary: `Meeting ${i} ${salt}`,
      ...(describe
        ? {
            description: Array.from(
              { length: 90 },
              (_, w) => WORDS[(i * 7 + w * 3 + salt) % WORDS.length],
            ).join(' '),
          }
        : {}),
      start: {
        dateTime: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00+01:00`,
        timeZone: 'Europe/Berlin',
      },
      end: {
        dateTime: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T10:30:00+01:00`,
        timeZone: 'Europe/Berlin',
      },
      htmlLink: `https://calgate.test/event/${i}`,
      updated: '2026-11-01T10:00:00Z',
    })),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * Microseconds per answer without and with the limit, over fresh answers (nothing cached between
 * them), the two taking turns round by round; the first round warms up and is not counted.
 */
async function measure(
  make: (salt: number) => object,
  perRound: number,
  before: (answer: object) => unknown,
  after: (answer: object) => unknown,
): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let round = 0; round <= ROUNDS; round += 1) {
    for (const [index, work] of [before, after].entries()) {
      const answers = Array.from({ length: perRound }, (_, i) => make((round * 2 + index) * perRound + i));
      const started = performance.now();
      for (const one of answers) {
        await work(one);
      }
      if (round > 0) {
        times[index]?.push(((performance.now() - started) * 1000) / perRound);
      }
    }
  }
  return [median(times[0]), median(times[1])];
}

await tokenCount('warm the tokenizer up');
const cases = [
  { name: 'list_events, 20 events (passes on bytes)', make: (s: number) => answer(20, false, s), per: 2000 },
  {
    name: 'list_events, 100 events with descriptions (counted, fits)',
    make: (s: number) => answer(100, true, s),
    per: 40,
  },
  {
    name: 'list_events, 500 events with descriptions (cut, paged)',
    make: (s: number) => answer(500, true, s),
    per: 10,
  },
];
const lines = [
  `\n## ${today()} — ${machineSummary()}`,
  '',
  '| answer | bytes | before µs | with the limit µs | added µs |',
  '|---|---:|---:|---:|---:|',
];
for (const { name, make, per } of cases) {
  const [before, after] = await measure(
    make,
    per,
    (one) => jsonOf(one),
    (one) =>
      fitAnswer({
        tool: 'list_events',
        answer: one as Record<string, unknown>,
        render: jsonOf,
        pageable: true,
        digest: () => 'bench',
        before: 0,
      }),
  );
  const bytes = Buffer.byteLength(JSON.stringify(make(0)));
  lines.push(
    `| ${name} | ${bytes} | ${before.toFixed(1)} | ${after.toFixed(1)} | ${(after - before).toFixed(1)} |`,
  );
}
console.info(lines.join('\n'));
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(`${root}bench/results/answer-limit.md`, `${lines.join('\n')}\n`);
}
