// list_events across 3 Google accounts × 10 calendars with the emulator answering every call
// after 100 ms: a fan-out should cost about one upstream round trip, not thirty. Prints the
// median wall time of the tool call over one calendar and over all 30, and their ratio
// (target ≤ 2.5×), and appends them to bench/results/fanout.md.
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startGoogleEmulator } from '@calgate/google-emulator';
import { migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BENCH_OAUTH_CLIENT, benchGatewayEnv, serveBenchGateway } from '../lib/google-gateway.ts';
import { machineSummary, today } from '../lib/machine.ts';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ACCOUNTS = ['ann@example.com', 'bob@example.com', 'cat@example.com'];
const root = fileURLToPath(new URL('../../', import.meta.url));

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const client = BENCH_OAUTH_CLIENT;
const emulator = await startGoogleEmulator({
  seed: {
    oauthClients: [{ ...client, redirectUris: ['http://127.0.0.1/oauth/google/callback'] }],
    accounts: ACCOUNTS.map((email, a) => ({
      email,
      timeZone: 'UTC',
      events: [
        {
          summary: `${email} primary`,
          start: { dateTime: `2026-12-0${a + 1}T09:00:00Z` },
          end: { dateTime: `2026-12-0${a + 1}T10:00:00Z` },
        },
      ],
      calendars: Array.from({ length: 9 }, (_, c) => ({
        id: `c${c}-${email.split('@')[0]}@group.calendar.google.com`,
        summary: `${email} #${c}`,
        events: Array.from({ length: 5 }, (_, e) => ({
          summary: `event ${e}`,
          start: { dateTime: `2026-12-1${e}T${String(8 + c).padStart(2, '0')}:00:00Z` },
          end: { dateTime: `2026-12-1${e}T${String(8 + c).padStart(2, '0')}:30:00Z` },
        })),
      })),
    })),
  },
});
const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await migrate(admin.pool);
await admin.close();

const gateway = await serveBenchGateway(benchGatewayEnv(emulator, postgres.url));
let mcp: Client | undefined;
try {
  const tenant = await gateway.runtime.tenancy.createTenant('Bench');
  const { key, secret } = await gateway.runtime.keys.create(tenant.id, { name: 'bench' });
  for (const email of ACCOUNTS) {
    const tokens = emulator.admin.issueTokens({ email, offline: true, clientId: client.clientId });
    await gateway.runtime.google.connectOAuth(
      tenant.id,
      { email, refreshToken: tokens.refresh_token as string },
      { access: 'read', keyIds: [key.id] },
    );
  }
  emulator.admin.setLatency({ ms: LATENCY_MS });
  mcp = new Client({ name: 'bench', version: '1' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  const listed = await mcp.callTool({ name: 'list_calendars', arguments: {} });
  const calendars = (listed.structuredContent as { calendars: { id: string }[] }).calendars;
  if (calendars.length !== 30) {
    throw new Error(`expected 30 calendars, got ${calendars.length}`);
  }
  const args = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z', maxResults: 2500 };
  const session = mcp;
  const time = async (extra: Record<string, unknown>) => {
    const started = performance.now();
    const result = await session.callTool({ name: 'list_events', arguments: { ...args, ...extra } });
    if (result.isError) {
      throw new Error(JSON.stringify(result.content));
    }
    return {
      ms: performance.now() - started,
      events: (result.structuredContent as { events: unknown[] }).events.length,
    };
  };
  await time({});
  const single: number[] = [];
  const all: number[] = [];
  let events = 0;
  for (let i = 0; i < ROUNDS; i++) {
    single.push((await time({ calendarId: calendars[1]?.id })).ms);
    const fan = await time({});
    all.push(fan.ms);
    events = fan.events;
  }
  const ratio = median(all) / median(single);
  const row = `| ${LATENCY_MS} | ${median(single).toFixed(0)} | ${median(all).toFixed(0)} | ${events} | ${ratio.toFixed(2)}× |`;
  console.log(
    `fanout: list_events, 3 accounts × 10 calendars, emulator latency ${LATENCY_MS} ms, ${ROUNDS} rounds, ${machineSummary()}`,
  );
  console.log('| upstream latency ms | one calendar median ms | 30 calendars median ms | events | ratio |');
  console.log('|---|---|---|---|---|');
  console.log(row);
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(
      `${root}bench/results/fanout.md`,
      `\n## ${today()} — ${machineSummary()}\n\nlist_events over 30 calendars of 3 accounts (in parallel: at most 10 upstream calls per account, 32 in all) vs one calendar; ${ROUNDS} rounds, medians. Target ratio ≤ 2.5×.\n\n| upstream latency ms | one calendar median ms | 30 calendars median ms | events | ratio |\n|---|---|---|---|---|\n${row}\n`,
    );
  }
} finally {
  await mcp?.close();
  await gateway.close();
  await postgres.stop();
  await emulator.close();
}
