import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { machineSummary, today } from '../lib/machine.ts';
import { startBenchStack } from '../lib/stack.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const THROUGHPUT_LEVELS = (process.env.BENCH_CONCURRENCY ?? '1,8,32').split(',').map(Number);
const CONTENTION_LEVELS = (process.env.BENCH_CONTENTION ?? '2,16,64').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const root = fileURLToPath(new URL('../../', import.meta.url));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const stack = await startBenchStack({});
const { base, secret, calendar } = stack;
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  authorization: `Bearer ${secret}`,
};

/** One book_slot call: whether it booked, and how long it took. */
async function bookOnce(slot: number, minutes = 30): Promise<{ ok: boolean; ms: number; text: string }> {
  const start = Date.parse('2030-01-01T00:00:00Z') + slot * 30 * 60_000;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'book_slot',
      arguments: {
        calendarId: calendar.id,
        start: new Date(start).toISOString(),
        end: new Date(start + minutes * 60_000).toISOString(),
        summary: `Bench ${slot}`,
      },
    },
  });
  const began = performance.now();
  const response = await fetch(`${base}/api/mcp`, { method: 'POST', headers, body });
  const answer = (await response.json()) as {
    result?: { isError?: boolean; content: { text: string }[] };
  };
  const ms = performance.now() - began;
  const text = answer.result?.content[0]?.text ?? JSON.stringify(answer).slice(0, 200);
  return { ok: response.ok && answer.result?.isError !== true, ms, text };
}

let nextSlot = 0;
const throughputRows: string[] = [];
const contentionRows: string[] = [];
try {
  // Warm-up.
  for (let i = 0; i < 50; i++) {
    await bookOnce(nextSlot++);
  }

  console.log(`booking: book_slot on one local calendar, ${machineSummary()}`);
  const throughputHeader = '| clients | bookings/s | p50 ms | p99 ms | failed |';
  console.log(`\ndistinct slots, ${DURATION_S}s per level\n${throughputHeader}\n|---|---|---|---|---|`);
  for (const clients of THROUGHPUT_LEVELS) {
    const latencies: number[] = [];
    let failed = 0;
    const deadline = performance.now() + DURATION_S * 1000;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < deadline) {
          const result = await bookOnce(nextSlot++);
          latencies.push(result.ms);
          if (!result.ok) {
            failed++;
            if (failed === 1) {
              console.error(`unexpected failure: ${result.text}`);
            }
          }
        }
      }),
    );
    const seconds = (performance.now() - began) / 1000;
    latencies.sort((x, y) => x - y);
    const row = `| ${clients} | ${((latencies.length - failed) / seconds).toFixed(0)} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${failed} |`;
    throughputRows.push(row);
    console.log(row);
  }

  const contentionHeader =
    '| clients on one slot | rounds | p50 ms (all) | p99 ms (all) | p50 ms (winner) | p99 ms (winner) | rounds with exactly one booking |';
  console.log(`\ncontention, ${ROUNDS} rounds per level\n${contentionHeader}\n|---|---|---|---|---|---|---|`);
  for (const clients of CONTENTION_LEVELS) {
    const all: number[] = [];
    const winners: number[] = [];
    let exact = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const slot = nextSlot++;
      const results = await Promise.all(Array.from({ length: clients }, () => bookOnce(slot)));
      const won = results.filter((r) => r.ok);
      exact += won.length === 1 ? 1 : 0;
      all.push(...results.map((r) => r.ms));
      winners.push(...won.map((r) => r.ms));
    }
    all.sort((x, y) => x - y);
    winners.sort((x, y) => x - y);
    const row = `| ${clients} | ${ROUNDS} | ${percentile(all, 50).toFixed(1)} | ${percentile(all, 99).toFixed(1)} | ${percentile(winners, 50).toFixed(1)} | ${percentile(winners, 99).toFixed(1)} | ${exact}/${ROUNDS} |`;
    contentionRows.push(row);
    console.log(row);
  }

  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(
      `${root}bench/results/booking.md`,
      `\n## ${today()} — ${machineSummary()}\n\nbook_slot on one local calendar through /api/mcp; one gateway process, Postgres ledger, Redis locks.\n\nDistinct 30-minute slots, ${DURATION_S}s per level:\n\n${throughputHeader}\n|---|---|---|---|---|\n${throughputRows.join('\n')}\n\nN clients racing for the same slot, ${ROUNDS} rounds per level (losers get a conflict):\n\n${contentionHeader}\n|---|---|---|---|---|---|---|\n${contentionRows.join('\n')}\n`,
    );
  }
} finally {
  await stack.stop();
}
