// How long the thread that serves calls spends on one expand_rrule answer of 10,000 instances,
// made the way the tool made it before (expansion in a worker thread, then the JSON and the text
// on this thread: TOON by re-parsing the JSON) and the way it does now (the whole answer made in
// the worker, JSON and text once). Measures this thread's active time (event loop utilisation)
// per answer, medians of BENCH_RUNS rounds of 20 answers; prints a table (see bench/results/rrule-mcp.md).
//
//   node bench/rrule/main-thread.ts    (BENCH_RUNS=7)

import { CpuPool, formatText, jsonOf, rememberAnswer, toonView } from '@calgate/tools';
import { encode } from '@toon-format/toon';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const request = {
  rrule: 'FREQ=DAILY',
  dtstart: '2026-01-05T09:30:00',
  timeZone: 'America/New_York',
  durationMinutes: 60,
  count: 10_000,
  exdates: [] as string[],
};
const pool = new CpuPool(1);

async function before(format: 'json' | 'toon'): Promise<number> {
  const expanded = await pool.run('expandRrule', request);
  const result = { timeZone: request.timeZone, ...expanded };
  const json = JSON.stringify(result);
  const text = format === 'toon' ? encode(toonView(JSON.parse(json)) as Parameters<typeof encode>[0]) : json;
  return json.length + text.length;
}

async function after(format: 'json' | 'toon'): Promise<number> {
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
  console.log('| format | before: ms of the serving thread per answer | now | ');
  console.log('|---|---|---|');
  for (const format of ['json', 'toon'] as const) {
    await activeMs(() => before(format));
    await activeMs(() => after(format));
    const was = await activeMs(() => before(format));
    const now = await activeMs(() => after(format));
    console.log(`| ${format} | ${was.toFixed(1)} | ${now.toFixed(1)} |`);
  }
} finally {
  await pool.close();
}
