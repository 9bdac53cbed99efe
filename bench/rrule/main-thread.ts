// How long the thread that serves calls spends on one page of an expand_rrule answer (600
// instances): a first page and a later page of a rule without COUNT, made on this thread as the
// tool makes them, and the last page of a COUNT=10000 rule (which makes the 9,400 instances before
// it again) made here and in a worker thread, as the tool does from 2,000 instances of work.
// Measures this thread's active time (event loop utilisation) per page, medians of BENCH_RUNS
// rounds of 20; prints a table (see bench/results/rrule-mcp.md).
//
//   node bench/rrule/main-thread.ts    (BENCH_RUNS=7)

import { CpuPool, expansionAnswer, formatText, jsonOf, rememberAnswer } from '@calgate/tools';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const base = {
  rrule: 'FREQ=DAILY',
  dtstart: '2026-01-05T09:30:00',
  timeZone: 'America/New_York',
  durationMinutes: 60,
  count: 10_000,
  exdates: [] as string[],
};
const lastOfCount = {
  ...base,
  rrule: 'FREQ=DAILY;COUNT=10000',
  page: { delivered: 9_400, after: Date.parse('2051-10-13T13:30:00Z') },
};
const laterPage = { ...base, page: { delivered: 4_800, after: Date.parse('2039-03-20T13:30:00Z') } };
const pool = new CpuPool(1);

function here(request: typeof base, format: 'json' | 'toon'): Promise<number> {
  const { result, json, text } = expansionAnswer({ request, format });
  rememberAnswer(result, json, format, text);
  return Promise.resolve(jsonOf(result).length + formatText(result, format).length);
}

async function inWorker(request: typeof base, format: 'json' | 'toon'): Promise<number> {
  const { result, json, text } = await pool.run('expandRruleAnswer', { request, format });
  rememberAnswer(result, json, format, text);
  return jsonOf(result).length + formatText(result, format).length;
}

async function activeMs(make: () => Promise<number>): Promise<number> {
  const rounds: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = performance.eventLoopUtilization();
    for (let i = 0; i < 20; i++) {
      await make();
    }
    rounds.push(performance.eventLoopUtilization(start).active / 20);
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)] ?? 0;
}

try {
  console.log('| format | first page | later page | last page of COUNT=10000, here | the same in a worker |');
  console.log('|---|---|---|---|---|');
  for (const format of ['json', 'toon'] as const) {
    const cases = [
      () => here(base, format),
      () => here(laterPage, format),
      () => here(lastOfCount, format),
      () => inWorker(lastOfCount, format),
    ];
    for (const make of cases) {
      await activeMs(make);
    }
    const figures: number[] = [];
    for (const make of cases) {
      figures.push(await activeMs(make));
    }
    console.log(`| ${format} | ${figures.map((ms) => ms.toFixed(2)).join(' | ')} |`);
  }
} finally {
  await pool.close();
}
