// list_events over 50 local events through /api/mcp (real HTTP, real Postgres, real Redis) at 1, 16
// and 64 concurrent clients. The gateway runs in its own process, exactly as `calgate serve`;
// autocannon drives it from this one. Prints p50/p99 latency, calls per second and the gateway's
// peak RSS, and appends the table to bench/results/.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LocalCalendarProvider } from '@calgate/providers';
import { ApiKeyRepository, LocalEventStore, migrate, openDatabase, TenancyRepository } from '@calgate/store';
import { freePort, startPostgres, startRedis } from '@calgate/testkit';
import autocannon from 'autocannon';
import { machineSummary, today } from '../lib/machine.ts';

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

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) {
      throw new Error('gateway exited during start');
    }
    try {
      if ((await fetch(`${url}/readyz`)).ok) {
        return;
      }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('gateway did not become ready');
}

function fire(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
const admin = openDatabase({ url: postgres.url, max: 1 });
await admin.pool.query('CREATE DATABASE bench');
await admin.close();
const dbUrl = postgres.url.replace(/\/postgres$/, '/bench');
const db = openDatabase({ url: dbUrl });
await migrate(db.pool);
const tenancy = new TenancyRepository(db.prisma);
const tenant = await tenancy.createTenant('Bench');
const calendar = await tenancy.createLocalCalendar(tenant.id, {
  summary: 'Bench',
  timeZone: 'Europe/Berlin',
});
const { key, secret } = await new ApiKeyRepository(db.prisma).create(tenant.id, { name: 'bench' });
await tenancy.setGrant(tenant.id, key.id, calendar.id, { read: true, write: true });
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
await db.close();

const port = await freePort();
// BENCH_GATEWAY_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the gateway.
const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const child = spawn(process.execPath, [...nodeArgs, 'apps/gateway/src/bin/calgate.ts', 'serve'], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: dbUrl,
    REDIS_URL: redis.url,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_BURST: '1000000',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
const rows: string[] = [];
try {
  await waitReady(base, child);
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
      void rssOf(child.pid ?? 0).then(({ rss }) => {
        peak = Math.max(peak, rss);
      });
    }, 100);
    const cpuBefore = await cpuSecondsOf(child.pid ?? 0);
    const result = await fire({
      url: `${base}/api/mcp`,
      method: 'POST',
      headers,
      body,
      connections,
      duration: DURATION_S,
    });
    clearInterval(sampler);
    const { hwm } = await rssOf(child.pid ?? 0);
    const cpuMsPerCall =
      (((await cpuSecondsOf(child.pid ?? 0)) - cpuBefore) * 1000) / Math.max(result.requests.total, 1);
    const errors = result.errors + result.non2xx + result.timeouts;
    const row = `| ${connections} | ${result.requests.average.toFixed(0)} | ${result.latency.p50.toFixed(2)} | ${result.latency.p99.toFixed(2)} | ${errors} | ${cpuMsPerCall.toFixed(2)} | ${(Math.max(peak, 0) / 2 ** 20).toFixed(0)} (high-water ${(hwm / 2 ** 20).toFixed(0)}) |`;
    rows.push(row);
    console.log(row);
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(
      `${root}bench/results/mcp-overhead.md`,
      `\n## ${today()} — ${machineSummary()}\n\nlist_events, 50 local events, ${DURATION_S}s per level, gateway with Postgres + Redis rate limiting${nodeArgs.length > 0 ? `, node ${nodeArgs.join(' ')}` : ''}.\n\n${header}\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
    );
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await Promise.all([postgres.stop(), redis.stop()]);
}
