/**
 * Search as agents call it: search_events and list_events' query through the gateway (real HTTP,
 * the MCP SDK client) over 20 mirrored Google calendars × 5,000 events (target p95 ≤ 20 ms).
 * The mirror is filled directly (the same rows a sync stores; bench:mirror measures syncs), and
 * MIRROR_MAX_STALENESS is an hour so no read waits for Google. Appends the figures to
 * bench/results/mirror-search.md (BENCH_RECORD=0 to only print).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startGoogleEmulator } from '@calgate/google-emulator';
import { MirrorRepository, migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BENCH_OAUTH_CLIENT, benchGatewayEnv, serveBenchGateway } from '../lib/google-gateway.ts';
import { machineSummary, today } from '../lib/machine.ts';
import { mirrorCalendar, random } from './data.ts';
import { median, ms, percentile } from './measure.ts';

const QUERIES = Number(process.env.BENCH_QUERIES ?? 120);
const CALENDARS = 20;
const PER_CALENDAR = 5000;
const ANN = 'ann@example.com';
const root = fileURLToPath(new URL('../../', import.meta.url));
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

const client = BENCH_OAUTH_CLIENT;
const emulator = await startGoogleEmulator({
  seed: {
    oauthClients: [{ ...client, redirectUris: ['http://127.0.0.1/oauth/google/callback'] }],
    accounts: [
      {
        email: ANN,
        timeZone: 'Europe/Berlin',
        calendars: Array.from({ length: CALENDARS - 1 }, (_, c) => ({
          id: `s${c}@group.calendar.google.com`,
          summary: `Search ${c}`,
        })),
      },
    ],
  },
});
const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 2 });
await migrate(admin.pool);
const gateway = await serveBenchGateway({
  ...benchGatewayEnv(emulator, postgres.url),
  MIRROR_MAX_STALENESS: '3600',
});
let session: Client | undefined;
try {
  const tenant = await gateway.runtime.tenancy.createTenant('Bench');
  const { key, secret } = await gateway.runtime.keys.create(tenant.id, { name: 'bench' });
  const tokens = emulator.admin.issueTokens({ email: ANN, offline: true, clientId: client.clientId });
  await gateway.runtime.google.connectOAuth(
    tenant.id,
    { email: ANN, refreshToken: tokens.refresh_token as string },
    { access: 'read', keyIds: [key.id] },
  );
  const { rows } = await admin.pool.query<{ id: string }>(
    'SELECT id FROM calendars WHERE tenant_id = $1 ORDER BY external_id',
    [tenant.id],
  );
  if (rows.length !== CALENDARS) {
    throw new Error(`expected ${CALENDARS} calendars, got ${rows.length}`);
  }
  const mirror = new MirrorRepository(admin);
  for (const [c, { id }] of rows.entries()) {
    const events = mirrorCalendar(100 + c, PER_CALENDAR - 100, 50);
    await mirror.resetForFullSync(id, tenant.id);
    await mirror.applyPage(id, tenant.id, events.slice(0, 2500), { nextPageToken: 'p2' });
    await mirror.applyPage(id, tenant.id, events.slice(2500), { nextSyncToken: 'bench' });
  }
  await admin.pool.query('VACUUM ANALYZE mirror_events');

  session = new Client({ name: 'bench', version: '1' });
  await session.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  const words = ['budget', 'retro', 'réunion', 'zurich', 'onboard', 'cafe zoe', 'budg', 'workshop'];
  const rand = random(11);
  const plan = Array.from({ length: QUERIES }, () => words[Math.floor(rand() * words.length)] as string);
  const year = { timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' };
  const tools = [
    ['search_events (25 nearest of a year, all calendars)', 'search_events', { ...year }],
    ['list_events query (100 of a year, all calendars)', 'list_events', { ...year }],
    [
      'list_events query (a month, all calendars)',
      'list_events',
      { timeMin: '2026-06-01T00:00:00Z', timeMax: '2026-07-01T00:00:00Z' },
    ],
  ] as const;
  say(`\n## ${today()} — ${machineSummary()}\n`);
  say(
    `\`npm run bench:mirror-search\`: ${CALENDARS} mirrored Google calendars × ${PER_CALENDAR.toLocaleString('en')} events (2026; weekly series with a moved occurrence each), tool calls through the gateway over HTTP with the MCP SDK client, ${QUERIES} queries each (words: ${words.map((w) => `\`${w}\``).join(', ')}), after 10 warm-up calls. Target p95 ≤ 20 ms.\n`,
  );
  say('| tool | p50 ms | p95 ms | max ms | events per answer | target |');
  say('|---|---|---|---|---|---|');
  for (const [label, name, window] of tools) {
    const call = async (query: string) => {
      const started = performance.now();
      const result = await (session as Client).callTool({
        name,
        arguments: { ...window, query, format: 'json' },
      });
      const took = performance.now() - started;
      if (result.isError) {
        throw new Error(JSON.stringify(result.content));
      }
      return { took, events: (result.structuredContent as { events: unknown[] }).events.length };
    };
    for (const query of plan.slice(0, 10)) {
      await call(query);
    }
    const times: number[] = [];
    let events = 0;
    for (const query of plan) {
      const { took, events: n } = await call(query);
      times.push(took);
      events += n;
    }
    const p95 = percentile(times, 95);
    say(
      `| ${label} | ${ms(median(times))} | ${ms(p95)} | ${ms(Math.max(...times))} | ${(events / plan.length).toFixed(1)} | ${p95 <= 20 ? 'met' : '**missed**'} |`,
    );
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/mirror-search.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await session?.close();
  await gateway.close();
  await admin.close();
  await postgres.stop();
  await emulator.close();
}
