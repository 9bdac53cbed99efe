import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import autocannon from 'autocannon';
import { machineSummary, today } from '../lib/machine.ts';
import { GATEWAY_NODE_FLAGS, startBenchStack } from '../lib/stack.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const LEVELS = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
const root = fileURLToPath(new URL('../../', import.meta.url));

async function rssOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** CPU seconds (user + system) the process has used so far. */
async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function fire(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

// BENCH_GATEWAY_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the gateway.
const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const stack = await startBenchStack({
  nodeArgs,
  async seed(db, calendar) {
    const provider = new LocalCalendarProvider(new LocalEventStore(db));
    const ref = { id: calendar.id, externalId: calendar.id, timeZone: calendar.timeZone };
    for (let i = 0; i < 50; i++) {
      const day = String(1 + (i % 28)).padStart(2, '0');
      const hour = String(8 + (i % 9)).padStart(2, '0');
      await provider.insertEvent(ref, {
        summary: `Meeting ${i}`,
        description: 'Agenda: review the numbers, decide next steps.',
        location: 'Room 4',
        start: { dateTime: `2026-12-${day}T${hour}:00:00Z` },
        end: { dateTime: `2026-12-${day}T${hour}:30:00Z` },
        attendees: [{ email: 'ada@example.com' }, { email: 'bob@example.com' }],
      });
    }
  },
});
const { base, secret, calendar } = stack;
const rows: string[] = [];
try {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'list_events',
      arguments: {
        calendarId: calendar.id,
        timeMin: '2026-12-01T00:00:00Z',
        timeMax: '2027-01-01T00:00:00Z',
        maxResults: 50,
      },
    },
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    authorization: `Bearer ${secret}`,
  };
  const check = (await (await fetch(`${base}/api/mcp`, { method: 'POST', headers, body })).json()) as {
    result: { isError?: boolean; structuredContent: { events: unknown[] } };
  };
  if (check.result.isError || check.result.structuredContent.events.length !== 50) {
    throw new Error(`unexpected result: ${JSON.stringify(check).slice(0, 300)}`);
  }
  await fire({ url: `${base}/api/mcp`, method: 'POST', headers, body, connections: 16, duration: 3 });

  console.log(
    `mcp-overhead: list_events over 50 local events, ${DURATION_S}s per level, ${machineSummary()}`,
  );
  const header =
    '| clients | calls/s | p50 ms | p99 ms | errors | gateway CPU ms/call | gateway peak RSS MB |';
  console.log(header);
  console.log('|---|---|---|---|---|---|---|');
  for (const connections of LEVELS) {
    let peak = 0;
    const sampler = setInterval(() => {
      void rssOf(stack.pid).then(({ rss }) => {
        peak = Math.max(peak, rss);
      });
    }, 100);
    const cpuBefore = await cpuSecondsOf(stack.pid);
    const result = await fire({
      url: `${base}/api/mcp`,
      method: 'POST',
      headers,
      body,
      connections,
      duration: DURATION_S,
    });
    clearInterval(sampler);
    const { hwm } = await rssOf(stack.pid);
    const cpuMsPerCall =
      (((await cpuSecondsOf(stack.pid)) - cpuBefore) * 1000) / Math.max(result.requests.total, 1);
    const errors = result.errors + result.non2xx + result.timeouts;
    const row = `| ${connections} | ${result.requests.average.toFixed(0)} | ${result.latency.p50.toFixed(2)} | ${result.latency.p99.toFixed(2)} | ${errors} | ${cpuMsPerCall.toFixed(2)} | ${(Math.max(peak, 0) / 2 ** 20).toFixed(0)} (high-water ${(hwm / 2 ** 20).toFixed(0)}) |`;
    rows.push(row);
    console.log(row);
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(
      `${root}bench/results/mcp-overhead.md`,
      `\n## ${today()} — ${machineSummary()}\n\nlist_events, 50 local events, ${DURATION_S}s per level, gateway with Postgres + Redis rate limiting, node ${[...GATEWAY_NODE_FLAGS, ...nodeArgs].join(' ')}.\n\n${header}\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
    );
  }
} finally {
  await stack.stop();
}
