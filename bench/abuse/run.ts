// One key attacks with the worst batches it can send; another key's list_events, /healthz and
// the gateway's memory are measured meanwhile, and at rest before it for comparison.
// The attack: ATTACKERS connections each sending, back to back, batches of expand_rrule
// (FREQ=SECONDLY, count 10,000; 100 of them were 18 KB in and 132 MB out before the limits).
// BENCH_LIMITS=shipped (default): the gateway as configured by default (600 calls/min, burst 60,
// so batches of 60); BENCH_LIMITS=lifted: rate limit out of the way, batches of 100, so only the
// work budget, the answer cap, per-key concurrency and CPU turns stand in the way.
// Targets: bystander list_events p99 < 200 ms, /healthz p99 < 100 ms, gateway RSS < 600 MB.
// Appends to bench/results/abuse.md.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ApiKeyRepository, TenancyRepository } from '@calgate/store';
import { machineSummary, today } from '../lib/machine.ts';
import { startBenchStack } from '../lib/stack.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const ATTACKERS = Number(process.env.BENCH_ATTACKERS ?? 8);
const LIMITS = process.env.BENCH_LIMITS === 'lifted' ? 'lifted' : 'shipped';
const BATCH = Number(process.env.BENCH_BATCH ?? (LIMITS === 'lifted' ? 100 : 60));
const root = fileURLToPath(new URL('../../', import.meta.url));

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

let bystander = '';
const stack = await startBenchStack({
  env: LIMITS === 'shipped' ? { RATE_LIMIT_PER_MINUTE: '600', RATE_LIMIT_BURST: '60' } : {},
  ...(process.env.BENCH_GATEWAY_NODE_ARGS
    ? { nodeArgs: process.env.BENCH_GATEWAY_NODE_ARGS.split(' ') }
    : {}),
  async seed(db, calendar) {
    const tenancy = new TenancyRepository(db.prisma);
    const tenant = await tenancy.createTenant('Bystander');
    const own = await tenancy.createLocalCalendar(tenant.id, { summary: 'Own', timeZone: 'Europe/Berlin' });
    const { key, secret } = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'bystander' });
    await tenancy.setGrant(tenant.id, key.id, own.id, { read: true, write: true });
    bystander = secret;
    void calendar;
  },
});
const { base, secret: attacker, pid } = stack;
const headers = (secret: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  authorization: `Bearer ${secret}`,
});

const listEvents = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'list_events', arguments: { timeMin: '2026-12-01', timeMax: '2026-12-31' } },
});
const worstBatch = JSON.stringify(
  Array.from({ length: BATCH }, (_, id) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'expand_rrule',
      arguments: { rrule: 'FREQ=SECONDLY', dtstart: '2026-01-01T00:00:00', timeZone: 'UTC', count: 10_000 },
    },
  })),
);

async function rssMb(): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Latencies of one probe, sent back to back every `gapMs` until the deadline. */
async function probe(send: () => Promise<boolean>, deadline: number, gapMs: number) {
  const latencies: number[] = [];
  let failed = 0;
  while (performance.now() < deadline) {
    const began = performance.now();
    if (!(await send())) {
      failed++;
    }
    latencies.push(performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return { sorted: latencies.sort((a, b) => a - b), failed };
}

const bystanderCall = async () => {
  const response = await fetch(`${base}/api/mcp`, {
    method: 'POST',
    headers: headers(bystander),
    body: listEvents,
  });
  const answer = (await response.json()) as { result?: { isError?: boolean } };
  return response.ok && answer.result?.isError !== true;
};
const health = async () => (await fetch(`${base}/healthz`)).ok;

async function measure(attack: boolean) {
  const deadline = performance.now() + DURATION_S * 1000;
  let peakRss = await rssMb();
  let batches = 0;
  let refusedCalls = 0;
  let answeredCalls = 0;
  let bytesOut = 0;
  const sampler = (async () => {
    while (performance.now() < deadline) {
      peakRss = Math.max(peakRss, await rssMb());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const attackers = attack
    ? Array.from({ length: ATTACKERS }, async () => {
        while (performance.now() < deadline) {
          const response = await fetch(`${base}/api/mcp`, {
            method: 'POST',
            headers: headers(attacker),
            body: worstBatch,
          });
          const text = await response.text();
          bytesOut += text.length;
          batches++;
          for (const answer of JSON.parse(text) as { result?: { isError?: boolean } }[]) {
            if (answer.result?.isError) {
              refusedCalls++;
            } else {
              answeredCalls++;
            }
          }
        }
      })
    : [];
  const [events, healthz] = await Promise.all([
    // Within the bystander's own rate limit (600 calls/min) when the limits are the shipped ones.
    probe(bystanderCall, deadline, LIMITS === 'shipped' ? 110 : 20),
    probe(health, deadline, 20),
    sampler,
    ...attackers,
  ]);
  return { events, healthz, peakRss, batches, refusedCalls, answeredCalls, bytesOut };
}

const rows: string[] = [];
let pass = true;
try {
  for (let i = 0; i < 20; i++) {
    await bystanderCall();
  }
  console.log(
    `abuse: ${ATTACKERS} connections × batches of ${BATCH} expand_rrule (SECONDLY, count 10,000), ${DURATION_S}s; ${machineSummary()}`,
  );
  const header =
    '| phase | list_events p50 / p99 / max ms | /healthz p50 / p99 / max ms | peak RSS MB | attack batches | calls answered / refused | MB out |';
  console.log(`${header}\n|---|---|---|---|---|---|---|`);
  for (const attack of [false, true]) {
    const m = await measure(attack);
    const fmt = (sorted: readonly number[]) =>
      `${percentile(sorted, 50).toFixed(1)} / ${percentile(sorted, 99).toFixed(1)} / ${(sorted.at(-1) ?? Number.NaN).toFixed(1)}`;
    const row = `| ${attack ? 'under attack' : 'at rest'} | ${fmt(m.events.sorted)} | ${fmt(m.healthz.sorted)} | ${m.peakRss.toFixed(0)} | ${m.batches} | ${m.answeredCalls} / ${m.refusedCalls} | ${(m.bytesOut / 1e6).toFixed(1)} |`;
    console.log(row);
    rows.push(row);
    if (m.events.failed + m.healthz.failed > 0) {
      console.error(`probe failures: list_events ${m.events.failed}, healthz ${m.healthz.failed}`);
      pass = false;
    }
    if (attack) {
      const ok =
        percentile(m.events.sorted, 99) < 200 && percentile(m.healthz.sorted, 99) < 100 && m.peakRss < 600;
      pass &&= ok;
      console.log(
        `targets (list_events p99 < 200 ms, /healthz p99 < 100 ms, RSS < 600 MB): ${ok ? 'met' : 'MISSED'}`,
      );
    }
  }
} finally {
  await stack.stop();
}

await mkdir(`${root}bench/results`, { recursive: true });
await appendFile(
  `${root}bench/results/abuse.md`,
  `\n## ${today()}, ${LIMITS} limits\n\n${ATTACKERS} connections of one key send batches of ${BATCH} × expand_rrule (FREQ=SECONDLY, count 10,000) back to back for ${DURATION_S} s, ${LIMITS === 'shipped' ? 'default settings (600 calls/min, burst 60;' : 'rate limit lifted (only'} work budget 20,000 instances and 5 MB per request, 4 concurrent calls per key, one worker thread); another key calls list_events every ${LIMITS === 'shipped' ? 110 : 20} ms (within its own rate limit) and /healthz every 20 ms. ${machineSummary()}.\n\n| phase | list_events p50 / p99 / max ms | /healthz p50 / p99 / max ms | peak RSS MB | attack batches | calls answered / refused | MB out |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n\nTargets ${pass ? 'met' : 'missed'}.\n`,
);
process.exitCode = pass ? 0 : 1;
