/**
 * expand_rrule over MCP (streamable HTTP, the production tree), call by call interleaved: 10,000
 * instances answered as JSON and as TOON on a kept-alive connection, and 20 instances on a new
 * connection per call (a kept-alive connection's small answers can wait on Nagle and delayed
 * ACK, which would flatter or hide the server's own time). Prints the median and p90 latency and
 * the answer's size for each, and appends them to bench/results/rrule-mcp.md (BENCH_RECORD=0 to
 * only print). Temporal Cortex, the peer these figures were compared with, is not installed
 * here, so this measures Calgate alone.
 *
 *   npm run bench:rrule-mcp    (BENCH_CALLS=200 BENCH_WARMUP_CALLS=50)
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { machineSummary, today } from '../lib/machine.ts';
import { GATEWAY_NODE_FLAGS, startBenchStack } from '../lib/stack.ts';
import { McpClient, messageOf } from './load.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP_CALLS ?? 50);
const root = fileURLToPath(new URL('../../', import.meta.url));
const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const RULE = { rrule: 'FREQ=DAILY', dtstart: '2026-01-05T09:30:00', timeZone: 'America/New_York' };

interface Case {
  name: string;
  args: Record<string, unknown>;
  /** A new connection (same session) for every call. */
  fresh: boolean;
  instances: number;
  latencies: number[];
  bytes: number;
  structuredBytes: number;
  textBytes: number;
}

const cases: Case[] = [
  {
    name: '10,000 instances, JSON',
    args: { ...RULE, count: 10_000, format: 'json' },
    fresh: false,
    instances: 10_000,
  },
  {
    name: '10,000 instances, TOON',
    args: { ...RULE, count: 10_000, format: 'toon' },
    fresh: false,
    instances: 10_000,
  },
  { name: '20 instances, new connection per call', args: { ...RULE, count: 20 }, fresh: true, instances: 20 },
].map((c) => ({ ...c, latencies: [], bytes: 0, structuredBytes: 0, textBytes: 0 }));

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

const stack = await startBenchStack({ nodeArgs });
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
try {
  const target = { url: `${stack.base}/api/mcp`, headers: { authorization: `Bearer ${stack.secret}` } };
  const clients = new Map<Case, McpClient>();
  for (const c of cases) {
    const client = new McpClient(target);
    await client.initialize();
    clients.set(c, client);
  }
  for (let round = 0; round < WARMUP + CALLS; round++) {
    for (const c of cases) {
      const client = clients.get(c) as McpClient;
      if (c.fresh) {
        client.close();
      }
      const before = performance.now();
      const answer = await client.call('expand_rrule', c.args);
      const elapsed = performance.now() - before;
      if (round === 0) {
        const message = messageOf(answer);
        const result = message.result as {
          isError?: boolean;
          structuredContent?: { instances?: unknown[] };
          content?: { text: string }[];
        };
        if (result?.isError === true || result?.structuredContent?.instances?.length !== c.instances) {
          throw new Error(
            `expand_rrule did not answer ${c.instances} instances: ${answer.body.toString().slice(0, 300)}`,
          );
        }
        c.bytes = answer.body.length;
        c.structuredBytes = Buffer.byteLength(JSON.stringify(result.structuredContent));
        c.textBytes = (result.content ?? []).reduce((sum, part) => sum + Buffer.byteLength(part.text), 0);
      }
      if (round >= WARMUP) {
        c.latencies.push(elapsed);
      }
    }
  }
  for (const client of clients.values()) {
    client.close();
  }
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    `expand_rrule (${RULE.rrule}, ${RULE.timeZone}) over MCP, ${CALLS} calls of each case interleaved call by call after ${WARMUP} rounds of warm-up; one client per case, its own session; gateway node ${[...GATEWAY_NODE_FLAGS, ...nodeArgs].join(' ')}. Calgate alone: Temporal Cortex is not installed here.`,
  );
  say();
  say('| case | p50 ms | p90 ms | answer bytes | structuredContent bytes | text bytes |');
  say('|---|---|---|---|---|---|');
  for (const c of cases) {
    say(
      `| ${c.name} | ${percentile(c.latencies, 50).toFixed(1)} | ${percentile(c.latencies, 90).toFixed(1)} | ${c.bytes} | ${c.structuredBytes} | ${c.textBytes} |`,
    );
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/rrule-mcp.md`, `\n${lines.join('\n')}\n`);
  }
} finally {
  await stack.stop();
}
