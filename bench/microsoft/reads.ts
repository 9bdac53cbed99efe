/**
 * list_events of a mirrored Outlook calendar through the gateway (real HTTP, the MCP SDK client)
 * while the Graph emulator answers every call after 100 ms (target p50 ≤ 5 ms, as for Google),
 * beside a mirrored Google calendar with the same events under the same latency, and the Outlook
 * read with MIRROR_READS=false (every read asks Graph) on a second gateway sharing the database.
 * The workload is bench:mirror-reads's: one month, 20 single events and a weekday series.
 * Appends the figures to bench/results/microsoft-reads.md (BENCH_RECORD=0 to only print).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startGoogleEmulator } from '@calgate/google-emulator';
import { startMicrosoftEmulator } from '@calgate/microsoft-emulator';
import { migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { BENCH_OAUTH_CLIENT, benchGatewayEnv, serveBenchGateway } from '../lib/google-gateway.ts';
import { machineSummary, today } from '../lib/machine.ts';
import { benchSession } from '../lib/mcp-session.ts';
import { benchMicrosoftEnv, connectOutlook, outlookEvent } from '../lib/microsoft-gateway.ts';
import { median, percentile } from '../mirror/measure.ts';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const UPSTREAM_ROUNDS = Number(process.env.BENCH_UPSTREAM_ROUNDS ?? 15);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20);
const GOOGLE = 'ann@example.com';
const OUTLOOK = 'ann@contoso.example';
const root = fileURLToPath(new URL('../../', import.meta.url));

const day = (e: number) => `2026-12-${String(1 + e).padStart(2, '0')}`;
const google = await startGoogleEmulator({
  seed: {
    oauthClients: [{ ...BENCH_OAUTH_CLIENT, redirectUris: ['http://127.0.0.1/oauth/google/callback'] }],
    accounts: [
      {
        email: GOOGLE,
        timeZone: 'UTC',
        events: [
          ...Array.from({ length: EVENTS }, (_, e) => ({
            summary: `Meeting ${e}`,
            description: 'Agenda and notes for the weekly review of the plan.',
            location: 'Room 4',
            start: { dateTime: `${day(e)}T09:00:00Z` },
            end: { dateTime: `${day(e)}T09:45:00Z` },
            attendees: [{ email: 'ann@example.com' }, { email: 'bob@example.com' }],
          })),
          {
            summary: 'Daily standup',
            start: { dateTime: '2026-11-02T07:30:00Z', timeZone: 'UTC' },
            end: { dateTime: '2026-11-02T07:45:00Z', timeZone: 'UTC' },
            recurrence: ['RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR'],
          },
        ],
      },
    ],
  },
});
const microsoft = await startMicrosoftEmulator({
  seed: {
    users: [
      {
        email: OUTLOOK,
        timeZone: 'UTC',
        calendars: [
          {
            name: 'Calendar',
            isDefaultCalendar: true,
            events: [
              ...Array.from({ length: EVENTS }, (_, e) =>
                outlookEvent(`Meeting ${e}`, `${day(e)}T09:00:00Z`, `${day(e)}T09:45:00Z`, {
                  body: {
                    contentType: 'text',
                    content: 'Agenda and notes for the weekly review of the plan.',
                  },
                  location: { displayName: 'Room 4' },
                  attendees: [
                    { emailAddress: { address: 'ann@contoso.example' }, type: 'required' },
                    { emailAddress: { address: 'bob@contoso.example' }, type: 'required' },
                  ],
                }),
              ),
              outlookEvent('Daily standup', '2026-11-02T07:30:00Z', '2026-11-02T07:45:00Z', {
                recurrence: {
                  pattern: {
                    type: 'weekly',
                    interval: 1,
                    daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
                    firstDayOfWeek: 'monday',
                  },
                  range: { type: 'noEnd', startDate: '2026-11-02' },
                },
              }),
            ],
          },
        ],
      },
    ],
  },
});

const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await migrate(admin.pool);
await admin.close();
const base = { ...benchGatewayEnv(google, postgres.url), ...benchMicrosoftEnv(microsoft) };
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
  const tokens = google.admin.issueTokens({
    email: GOOGLE,
    offline: true,
    clientId: BENCH_OAUTH_CLIENT.clientId,
  });
  const googleCalendars = await mirrored.runtime.google.connectOAuth(
    tenant.id,
    { email: GOOGLE, refreshToken: tokens.refresh_token as string },
    { access: 'read', keyIds: [key.id] },
  );
  const outlook = await connectOutlook(mirrored, microsoft, tenant.id, OUTLOOK, [key.id]);
  const googleId = googleCalendars.calendars[0]?.id as string;
  const outlookId = outlook.calendars[0]?.id as string;
  const connect = (url: string) => benchSession(url, secret, sessions);
  const viaMirror = await connect(mirrored.url);
  const viaUpstream = await connect(direct.url);
  const args = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z', maxResults: 2500 };
  const call = async (session: Client, calendarId: string) => {
    const started = performance.now();
    const result = await session.callTool({ name: 'list_events', arguments: { ...args, calendarId } });
    const ms = performance.now() - started;
    if (result.isError) {
      throw new Error(JSON.stringify(result.content));
    }
    const out = result.structuredContent as { events: unknown[]; syncedAt?: string };
    return { ms, events: out.events.length, syncedAt: out.syncedAt };
  };
  // First reads queue each calendar's first sync; wait until both answer from the mirror.
  const syncStarted = performance.now();
  for (const calendarId of [googleId, outlookId]) {
    while ((await call(viaMirror, calendarId)).syncedAt === undefined) {
      if (performance.now() - syncStarted > 120_000) {
        throw new Error('first syncs did not finish within 120 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const syncMs = performance.now() - syncStarted;
  google.admin.setLatency({ ms: LATENCY_MS });
  microsoft.admin.setLatency({ ms: LATENCY_MS });
  // Calls on the calendars compared take turns, so warm-up and the machine's load fall on both alike.
  const measure = async (session: Client, calendarIds: string[], rounds: number) => {
    for (const calendarId of calendarIds) {
      await call(session, calendarId);
    }
    google.admin.clearRequests();
    microsoft.admin.clearRequests();
    const out = calendarIds.map(() => ({ times: [] as number[], events: 0, fromMirror: 0, upstream: 0 }));
    for (let i = 0; i < rounds; i++) {
      for (const [c, calendarId] of calendarIds.entries()) {
        const result = await call(session, calendarId);
        const into = out[c] as (typeof out)[number];
        into.times.push(result.ms);
        into.events = result.events;
        into.fromMirror += result.syncedAt === undefined ? 0 : 1;
      }
    }
    const upstream = google.admin.requests().length + microsoft.admin.requests().length;
    return out.map((result) => ({ ...result, upstream }));
  };
  const load = loadavg();
  type Measured = Awaited<ReturnType<typeof measure>>[number];
  const [outlookMirror, googleMirror] = (await measure(viaMirror, [outlookId, googleId], ROUNDS)) as [
    Measured,
    Measured,
  ];
  const [outlookGraph] = (await measure(viaUpstream, [outlookId], UPSTREAM_ROUNDS)) as [Measured];
  const rows = [
    ['Outlook', 'mirror', outlookMirror, 5],
    ['Google', 'mirror', googleMirror, 5],
    ['Outlook', 'Graph (MIRROR_READS=false)', outlookGraph, null],
  ] as const;
  const loadAfter = loadavg();
  say(`\n## ${today()} — ${machineSummary()}\n`);
  say(
    `\`npm run bench:microsoft-reads\`: list_events of one calendar (one month, maxResults 2500) through the gateway over HTTP with the MCP SDK client; both emulators answer every call after ${LATENCY_MS} ms; each calendar has ${EVENTS} events and a weekday series. Outlook and Google reads take turns. Upstream requests: those both emulators received during the mirrored reads of both calendars together (incremental syncs, token refreshes). Default MIRROR_MAX_STALENESS (15 s): a read after it runs one incremental sync first, which the percentiles include. First syncs of both calendars (no latency) took ${(syncMs / 1000).toFixed(1)} s. Load average (1, 5, 15 min) ${load.map((l) => l.toFixed(1)).join(', ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(', ')} after (the machine is shared).\n`,
  );
  say(
    '| calendar | read from | calls | from mirror | upstream requests | events | p50 ms | p95 ms | p99 ms | target p50 |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|');
  for (const [calendar, from, result, target] of rows) {
    const p50 = median(result.times);
    const verdict = target === null ? '' : `≤ ${target} ms: ${p50 <= target ? 'met' : '**missed**'}`;
    say(
      `| ${calendar} | ${from} | ${result.times.length} | ${result.fromMirror} | ${result.upstream} | ${result.events} | ${p50.toFixed(1)} | ${percentile(result.times, 95).toFixed(1)} | ${percentile(result.times, 99).toFixed(1)} | ${verdict} |`,
    );
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/microsoft-reads.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await Promise.all(sessions.map((session) => session.close()));
  await direct.close();
  await mirrored.close();
  await postgres.stop();
  await Promise.all([google.close(), microsoft.close()]);
}
