/**
 * One small expand_rrule call (20 instances) on a new connection per call, in a loop, against the
 * gateway alone: the per-call work a fresh connection costs, for profiling and before/after
 * comparisons (`BENCH_GATEWAY_NODE_ARGS=--cpu-prof` writes the gateway's profile on exit).
 * Prints the median and p90 latency and the gateway's CPU per call.
 *
 *   node bench/rrule/fresh-call.ts    (BENCH_CALLS=2000 BENCH_WARMUP_CALLS=300)
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { startBenchStack } from '../lib/stack.ts';
import { McpClient } from '../peer/load.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const WARMUP = Number(process.env.BENCH_WARMUP_CALLS ?? 300);
/** A pause before each call, as between the calls of an interleaved comparison (0: back to back). */
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 0);
const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const stack = await startBenchStack({ nodeArgs });
try {
  // What the gateway spends with nothing asked of it (timers, pools, listeners), so the CPU per
  // call below can be read against it: a call loop of ~600 calls/s carries this share too.
  const idleBefore = cpuMs(stack.pid);
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const idleMsPerS = (cpuMs(stack.pid) - idleBefore) / 5;
  const client = new McpClient({
    url: `${stack.base}/api/mcp`,
    headers: { authorization: `Bearer ${stack.secret}` },
  });
  await client.initialize();
  const args = {
    rrule: 'FREQ=DAILY',
    dtstart: '2026-01-05T09:30:00',
    timeZone: 'America/New_York',
    count: 20,
  };
  const times: number[] = [];
  let cpu = 0;
  for (let i = 0; i < WARMUP + CALLS; i++) {
    client.close();
    if (GAP_MS > 0) {
      await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    }
    const cpuBefore = i === WARMUP ? cpuMs(stack.pid) : 0;
    const before = performance.now();
    const answer = await client.call('expand_rrule', args);
    if (answer.status !== 200 || answer.body.includes('"isError":true')) {
      throw new Error(`expand_rrule failed: ${answer.body.toString().slice(0, 300)}`);
    }
    if (i >= WARMUP) {
      times.push(performance.now() - before);
    }
    if (i === WARMUP) {
      cpu = -cpuBefore;
    }
  }
  cpu += cpuMs(stack.pid);
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
  process.stdout.write(
    `${CALLS} calls: p50 ${at(0.5).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms, gateway CPU ${(cpu / CALLS).toFixed(3)} ms/call (idle: ${idleMsPerS.toFixed(1)} ms/s); load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  client.close();
} finally {
  await stack.stop();
}
