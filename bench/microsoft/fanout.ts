/**
 * Free/busy across three accounts (a Google calendar, an Outlook calendar and a Calgate calendar)
 * against one calendar alone, through the gateway over HTTP with the MCP SDK client, while both
 * emulators answer every call after 100 ms: get_availability and find_free_slots over the key
 * that holds all three, and over each calendar alone (target: the three ≤ 1.2× one calendar's,
 * taken as the slowest single calendar, since a fan-out cannot beat its slowest member). Once
 * with every read asking the upstreams (MIRROR_READS=false), once read from the event mirror.
 * Rounds interleave the four calls; medians, and the median of each round's three-calendar time
 * over the same round's time of the slowest single calendar (steadier on a shared machine). Appends to
 * bench/results/microsoft-fanout.md (BENCH_RECORD=0 to only print; BENCH_ROUNDS,
 * BENCH_MIRROR_ROUNDS, BENCH_LATENCY_MS).
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
import { median } from '../mirror/measure.ts';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const MIRROR_ROUNDS = Number(process.env.BENCH_MIRROR_ROUNDS ?? 200);
const TARGET = 1.2;
const GOOGLE = 'ann@example.com';
const OUTLOOK = 'bob@contoso.example';
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Two meetings a working day in December 2026, at hours that differ per calendar. */
const slots = (hour: number) =>
  Array.from({ length: 22 }, (_, d) => {
    const date = `2026-12-${String(1 + d).padStart(2, '0')}`;
    return [
      {
        start: `${date}T${String(hour).padStart(2, '0')}:00:00Z`,
        end: `${date}T${String(hour).padStart(2, '0')}:45:00Z`,
      },
      {
        start: `${date}T${String(hour + 4).padStart(2, '0')}:00:00Z`,
        end: `${date}T${String(hour + 5).padStart(2, '0')}:00:00Z`,
      },
    ];
  }).flat();

const google = await startGoogleEmulator({
  seed: {
    oauthClients: [{ ...BENCH_OAUTH_CLIENT, redirectUris: ['http://127.0.0.1/oauth/google/callback'] }],
    accounts: [
      {
        email: GOOGLE,
        timeZone: 'UTC',
        events: slots(8).map((s, i) => ({
          summary: `Google meeting ${i}`,
          start: { dateTime: s.start },
          end: { dateTime: s.end },
        })),
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
            events: slots(9).map((s, i) => outlookEvent(`Outlook meeting ${i}`, s.start, s.end)),
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
const direct = await serveBenchGateway({ ...base, MIRROR_READS: 'false' });
const mirrored = await serveBenchGateway({ ...base, WORKER_IN_PROCESS: 'true' });
const sessions: Client[] = [];
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
try {
  const { runtime } = direct;
  const tenant = await runtime.tenancy.createTenant('Bench');
  const { key, secret } = await runtime.keys.create(tenant.id, { name: 'bench' });
  const tokens = google.admin.issueTokens({
    email: GOOGLE,
    offline: true,
    clientId: BENCH_OAUTH_CLIENT.clientId,
  });
  const googleId = (
    await runtime.google.connectOAuth(
      tenant.id,
      { email: GOOGLE, refreshToken: tokens.refresh_token as string },
      { access: 'read', keyIds: [key.id] },
    )
  ).calendars[0]?.id as string;
  const outlookId = (await connectOutlook(direct, microsoft, tenant.id, OUTLOOK, [key.id])).calendars[0]
    ?.id as string;
  const local = await runtime.tenancy.createLocalCalendar(tenant.id, { summary: 'Team', timeZone: 'UTC' });
  await runtime.tenancy.setGrant(tenant.id, key.id, local.id, { read: true, write: true });
  runtime.deps.authenticator.invalidate();
  const connect = (url: string) => benchSession(url, secret, sessions);
  const viaUpstream = await connect(direct.url);
  const viaMirror = await connect(mirrored.url);
  for (const [i, s] of slots(10).entries()) {
    const created = await viaUpstream.callTool({
      name: 'create_event',
      arguments: {
        calendarId: local.id,
        summary: `Local meeting ${i}`,
        start: { dateTime: s.start },
        end: { dateTime: s.end },
      },
    });
    if (created.isError) {
      throw new Error(JSON.stringify(created.content));
    }
  }
  const window = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-29T00:00:00Z', timeZone: 'UTC' };
  const call = async (session: Client, name: string, calendarIds: string[]) => {
    const started = performance.now();
    const result = await session.callTool({ name, arguments: { ...window, calendarIds } });
    const ms = performance.now() - started;
    if (result.isError) {
      throw new Error(JSON.stringify(result.content));
    }
    const out = result.structuredContent as { busy?: unknown[]; slots?: unknown[]; syncedAt?: string };
    return { ms, items: (out.busy ?? out.slots ?? []).length, syncedAt: out.syncedAt };
  };
  // The mirrored gateway's first reads queue the first syncs; wait until both answer from it.
  const started = performance.now();
  for (const id of [googleId, outlookId]) {
    const listed = async () =>
      (
        await viaMirror.callTool({
          name: 'list_events',
          arguments: { calendarId: id, timeMin: window.timeMin, timeMax: window.timeMax },
        })
      ).structuredContent as { syncedAt?: string } | undefined;
    while ((await listed())?.syncedAt === undefined) {
      if (performance.now() - started > 120_000) {
        throw new Error('first syncs did not finish within 120 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  google.admin.setLatency({ ms: LATENCY_MS });
  microsoft.admin.setLatency({ ms: LATENCY_MS });
  const sets: [string, string[]][] = [
    ['Google alone', [googleId]],
    ['Outlook alone', [outlookId]],
    ['Calgate calendar alone', [local.id]],
    ['Google + Outlook + Calgate', [googleId, outlookId, local.id]],
  ];
  const load = loadavg();
  const results: {
    mode: string;
    tool: string;
    medians: number[];
    items: number[];
    mirrored: number;
    paired: number;
  }[] = [];
  for (const [mode, session, rounds] of [
    ['upstream (MIRROR_READS=false)', viaUpstream, ROUNDS],
    ['mirror', viaMirror, MIRROR_ROUNDS],
  ] as const) {
    for (const tool of ['get_availability', 'find_free_slots']) {
      for (const [, ids] of sets) {
        await call(session, tool, ids);
      }
      const times = sets.map(() => [] as number[]);
      const items = sets.map(() => 0);
      let mirrored = 0;
      for (let round = 0; round < rounds; round++) {
        for (const [i, [, ids]] of sets.entries()) {
          const result = await call(session, tool, ids);
          (times[i] as number[]).push(result.ms);
          items[i] = result.items;
          mirrored += result.syncedAt === undefined ? 0 : 1;
        }
      }
      // Each round's three-calendar call against the same round's call of the slowest single
      // calendar (by median): the machine's pace changes between rounds far more than within
      // one, so this ratio moves less with load.
      const singles = times.slice(0, 3).map(median);
      const slowestAlone = singles.indexOf(Math.max(...singles));
      const paired = median(
        Array.from({ length: rounds }, (_, round) => {
          const at = (i: number) => (times[i] as number[])[round] as number;
          return at(3) / at(slowestAlone);
        }),
      );
      results.push({ mode, tool, medians: times.map(median), items, mirrored, paired });
      process.stderr.write(`${mode} ${tool}: ${mirrored} answers with syncedAt\n`);
    }
  }
  const loadAfter = loadavg();
  say(`\n## ${today()} — ${machineSummary()}\n`);
  say(
    `\`npm run bench:microsoft-fanout\`: free/busy over a key holding a Google, an Outlook and a Calgate calendar (each with two meetings a working day), four weeks of December, through the gateway over HTTP with the MCP SDK client; both emulators answer every call after ${LATENCY_MS} ms. Rounds interleave the four calls (${ROUNDS} rounds against the upstreams, ${MIRROR_ROUNDS} from the mirror); medians in ms, and the median over rounds of the three-calendar call's time divided by the same round's call of the slowest single calendar. Target: the three ≤ ${TARGET}× the slowest single calendar. Load average (1, 5, 15 min) ${load.map((l) => l.toFixed(1)).join(', ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(', ')} after (the machine is shared).\n`,
  );
  say(
    `| read from | tool | ${sets.map(([name]) => name).join(' | ')} | ratio to the slowest single | ratio to Outlook alone | median of per-round ratios | target ≤ ${TARGET}× |`,
  );
  say(`|---|---|${sets.map(() => '---|').join('')}---|---|---|---|`);
  for (const { mode, tool, medians, items, paired } of results) {
    const all = medians[3] as number;
    const slowest = Math.max(...medians.slice(0, 3));
    const ratio = all / slowest;
    say(
      `| ${mode} | ${tool} | ${medians.map((m, i) => `${m.toFixed(2)} (${items[i]})`).join(' | ')} | ${ratio.toFixed(2)}× | ${(all / (medians[1] as number)).toFixed(2)}× | ${paired.toFixed(2)}× | ${ratio <= TARGET ? 'met' : '**missed**'} |`,
    );
  }
  say();
  say('In brackets: busy blocks (get_availability) or free slots (find_free_slots) in the answer.');
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/microsoft-fanout.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await Promise.all(sessions.map((session) => session.close()));
  await mirrored.close();
  await direct.close();
  await postgres.stop();
  await Promise.all([google.close(), microsoft.close()]);
}
