/**
 * list_events of mirrored Google calendars through the gateway (real HTTP, the MCP SDK client)
 * while the emulator answers every Google call after 100 ms: one calendar (target p50 ≤ 5 ms)
 * and a fan-out over 30 calendars of 3 accounts (target p50 ≤ 8 ms), beside the same calls with
 * MIRROR_READS=false (every read asks Google) on a second gateway sharing the database.
 * Appends the figures to bench/results/mirror-reads.md (BENCH_RECORD=0 to only print).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startGoogleEmulator } from '@calgate/google-emulator';
import { migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BENCH_OAUTH_CLIENT, benchGatewayEnv, serveBenchGateway } from '../lib/google-gateway.ts';
import { machineSummary, today } from '../lib/machine.ts';
import { median, percentile } from './measure.ts';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const UPSTREAM_ROUNDS = Number(process.env.BENCH_UPSTREAM_ROUNDS ?? 15);
const ACCOUNTS = ['ann@example.com', 'bob@example.com', 'cat@example.com'];
/** Single events per calendar in the month read (BENCH_EVENTS), besides a weekday series. */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20);
const SERIES = process.env.BENCH_SERIES !== '0';
const root = fileURLToPath(new URL('../../', import.meta.url));

const client = BENCH_OAUTH_CLIENT;
// A month with 3 × 10 calendars: 20 single events and a daily series each.
const emulator = await startGoogleEmulator({
  seed: {
    oauthClients: [{ ...client, redirectUris: ['http://127.0.0.1/oauth/google/callback'] }],
    accounts: ACCOUNTS.map((email) => ({
      email,
      timeZone: 'UTC',
      calendars: Array.from({ length: 9 }, (_, c) => ({
        id: `c${c}-${email.split('@')[0]}@group.calendar.google.com`,
        summary: `${email} #${c}`,
      })),
    })),
  },
});
const calendarsOf = (email: string) => [
  email,
  ...Array.from({ length: 9 }, (_, c) => `c${c}-${email.split('@')[0]}@group.calendar.google.com`),
];
for (const email of ACCOUNTS) {
  const token = emulator.admin.issueTokens({ email }).access_token as string;
  for (const [c, calendarId] of calendarsOf(email).entries()) {
    const events = [
      ...Array.from({ length: EVENTS }, (_, e) => ({
        summary: `Meeting ${e} on ${c}`,
        description: 'Agenda and notes for the weekly review of the plan.',
        location: 'Room 4',
        start: {
          dateTime: `2026-12-${String(1 + e).padStart(2, '0')}T${String(8 + (c % 8)).padStart(2, '0')}:00:00Z`,
        },
        end: {
          dateTime: `2026-12-${String(1 + e).padStart(2, '0')}T${String(8 + (c % 8)).padStart(2, '0')}:45:00Z`,
        },
        attendees: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }],
      })),
      ...(SERIES
        ? [
            {
              summary: `Daily standup ${c}`,
              start: { dateTime: '2026-11-02T07:30:00Z', timeZone: 'UTC' },
              end: { dateTime: '2026-11-02T07:45:00Z', timeZone: 'UTC' },
              recurrence: ['RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR'],
            },
          ]
        : []),
    ];
    for (const event of events) {
      const response = await fetch(
        `${emulator.url}/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(event),
        },
      );
      if (!response.ok) {
        throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
      }
    }
  }
}

const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await migrate(admin.pool);
await admin.close();
const base = benchGatewayEnv(emulator, postgres.url);
// The mirrored gateway runs its worker (the syncs); the other reads Google every time.
const mirrored = await serveBenchGateway({ ...base, WORKER_IN_PROCESS: 'true' });
const direct = await serveBenchGateway({ ...base, MIRROR_READS: 'false' });
const sessions: Client[] = [];
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
try {
  const tenant = await mirrored.runtime.tenancy.createTenant('Bench');
  const { key, secret } = await mirrored.runtime.keys.create(tenant.id, { name: 'bench' });
  for (const email of ACCOUNTS) {
    const tokens = emulator.admin.issueTokens({ email, offline: true, clientId: client.clientId });
    await mirrored.runtime.google.connectOAuth(
      tenant.id,
      { email, refreshToken: tokens.refresh_token as string },
      { access: 'read', keyIds: [key.id] },
    );
  }
  const connect = async (url: string) => {
    const session = new Client({ name: 'bench', version: '1' });
    await session.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${secret}` } },
      }),
    );
    sessions.push(session);
    return session;
  };
  const viaMirror = await connect(mirrored.url);
  const viaGoogle = await connect(direct.url);
  const listed = await viaMirror.callTool({ name: 'list_calendars', arguments: {} });
  const calendars = (listed.structuredContent as { calendars: { id: string }[] }).calendars;
  if (calendars.length !== 30) {
    throw new Error(`expected 30 calendars, got ${calendars.length}`);
  }
  const args = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z', maxResults: 2500 };
  const call = async (session: Client, extra: Record<string, unknown>) => {
    const started = performance.now();
    const result = await session.callTool({ name: 'list_events', arguments: { ...args, ...extra } });
    const ms = performance.now() - started;
    if (result.isError) {
      throw new Error(JSON.stringify(result.content));
    }
    const out = result.structuredContent as { events: unknown[]; syncedAt?: string };
    return { ms, events: out.events.length, syncedAt: out.syncedAt };
  };
  // First reads queue each calendar's first sync; wait until every calendar answers from the mirror.
  const syncStarted = performance.now();
  for (const calendar of calendars) {
    while ((await call(viaMirror, { calendarId: calendar.id })).syncedAt === undefined) {
      if (performance.now() - syncStarted > 120_000) {
        throw new Error('first syncs did not finish within 120 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const syncMs = performance.now() - syncStarted;
  emulator.admin.setLatency({ ms: LATENCY_MS });
  const one = calendars[1]?.id as string;
  const measure = async (session: Client, extra: Record<string, unknown>, rounds: number) => {
    await call(session, extra);
    const times: number[] = [];
    let events = 0;
    let fromMirror = 0;
    for (let i = 0; i < rounds; i++) {
      const result = await call(session, extra);
      times.push(result.ms);
      events = result.events;
      fromMirror += result.syncedAt === undefined ? 0 : 1;
    }
    return { times, events, fromMirror };
  };
  const rows = [
    ['mirror', 'one calendar', await measure(viaMirror, { calendarId: one }, ROUNDS), 5],
    ['mirror', '30 calendars', await measure(viaMirror, {}, ROUNDS), 8],
    [
      'Google (MIRROR_READS=false)',
      'one calendar',
      await measure(viaGoogle, { calendarId: one }, UPSTREAM_ROUNDS),
      null,
    ],
    ['Google (MIRROR_READS=false)', '30 calendars', await measure(viaGoogle, {}, UPSTREAM_ROUNDS), null],
  ] as const;
  say(`\n## ${today()} — ${machineSummary()}\n`);
  say(
    `\`npm run bench:mirror-reads\`: list_events (one month, maxResults 2500) through the gateway over HTTP with the MCP SDK client; the emulator answers every Google call after ${LATENCY_MS} ms; 3 accounts × 10 calendars, each with ${EVENTS} events${SERIES ? ' and a weekday series' : ''}. Default MIRROR_MAX_STALENESS (15 s): a read after it runs one incremental sync first, which the percentiles include. First syncs of all 30 calendars (no latency) took ${(syncMs / 1000).toFixed(1)} s.\n`,
  );
  say('| read from | calendars | calls | from mirror | events | p50 ms | p95 ms | p99 ms | target p50 |');
  say('|---|---|---|---|---|---|---|---|---|');
  for (const [from, what, result, target] of rows) {
    const p50 = median(result.times);
    const verdict = target === null ? '' : `≤ ${target} ms: ${p50 <= target ? 'met' : '**missed**'}`;
    say(
      `| ${from} | ${what} | ${result.times.length} | ${result.fromMirror} | ${result.events} | ${p50.toFixed(1)} | ${percentile(result.times, 95).toFixed(1)} | ${percentile(result.times, 99).toFixed(1)} | ${verdict} |`,
    );
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/mirror-reads.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await Promise.all(sessions.map((session) => session.close()));
  await direct.close();
  await mirrored.close();
  await postgres.stop();
  await emulator.close();
}
