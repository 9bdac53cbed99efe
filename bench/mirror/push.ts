/**
 * How soon an upstream change reaches the mirror (issue 15: ≤ 2 s after the push), end to end:
 * `calgate serve` with its worker in process, PUBLIC_URL its own loopback address, the Google
 * emulator's watch channels and Postgres, all started here. Someone changes an event in Google
 * (the emulator, as the account itself); the bench times it until the row is in mirror_events.
 *
 * Two runs on two calendars: push (MIRROR_PUSH=true: notification → 'push' sync job) and polling
 * only (MIRROR_PUSH=false, MIRROR_POLL_INTERVAL=5, the calendar recently read: the planner's
 * once-a-minute pass is all there is). Changes come at random moments (0.2–1.5 s apart for push,
 * 3–20 s for polling), so the sync queue's poll interval is met at random too.
 * Prints medians and appends them to bench/results/mirror-push.md (BENCH_RECORD=0 to only print).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startGoogleEmulator } from '@calgate/google-emulator';
import { GOOGLE_SCOPES } from '@calgate/providers';
import { ConnectionRepository, migrate, openDatabase, SecretBox, TenancyRepository } from '@calgate/store';
import { freePort, startPostgres } from '@calgate/testkit';
import { machineSummary, today } from '../lib/machine.ts';
import { median, percentile } from './measure.ts';

const PUSH_CHANGES = Number(process.env.BENCH_PUSH_CHANGES ?? 20);
const POLL_CHANGES = Number(process.env.BENCH_POLL_CHANGES ?? 6);
const TARGET_MS = 2_000;
const CLIENT = { clientId: 'bench-client', clientSecret: 'bench-secret' };
const PUSHED = 'pushed@example.com';
const POLLED = 'polled@example.com';
const root = fileURLToPath(new URL('../../', import.meta.url));
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number) => low + Math.random() * (high - low);
const event = (summary: string, day: number) => ({
  summary,
  start: { dateTime: `2026-12-${String(day).padStart(2, '0')}T09:00:00Z` },
  end: { dateTime: `2026-12-${String(day).padStart(2, '0')}T10:00:00Z` },
});

const port = await freePort();
const publicUrl = `http://127.0.0.1:${port}`;
const emulator = await startGoogleEmulator({
  seed: {
    oauthClients: [{ ...CLIENT, redirectUris: [`${publicUrl}/oauth/google/callback`] }],
    accounts: [PUSHED, POLLED].map((email) => ({
      email,
      events: Array.from({ length: 200 }, (_, i) => event(`Existing ${i}`, (i % 28) + 1)),
    })),
  },
});
const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await admin.pool.query('CREATE DATABASE bench');
await admin.close();
const dbUrl = postgres.url.replace(/\/postgres$/, '/bench');
const db = openDatabase({ url: dbUrl });
await migrate(db.pool);
const encryptionKey = randomBytes(32);
const connections = new ConnectionRepository(db.prisma, new SecretBox([new Uint8Array(encryptionKey)]));
const tenancy = new TenancyRepository(db.prisma);
const tenant = await tenancy.createTenant('Bench');
const calendarIds = new Map<string, string>();

/**
 * Connects the account as the dashboard would (sealed refresh token, its primary calendar). The
 * polled account is connected only after the push run: a worker with push on opens a channel on
 * every synced calendar, and its notifications would still be taken by the next gateway.
 */
async function connect(email: string): Promise<string> {
  const connection = await connections.upsert(tenant.id, {
    provider: 'google',
    accountEmail: email,
    auth: 'oauth',
  });
  const refreshToken = emulator.admin.issueTokens({
    email,
    offline: true,
    clientId: CLIENT.clientId,
    scopes: [...GOOGLE_SCOPES],
  }).refresh_token;
  await connections.storeCredentials(tenant.id, connection.id, JSON.stringify({ refreshToken }));
  const { calendars } = await tenancy.syncCalendars(tenant.id, connection.id, [
    { externalId: email, summary: email, timeZone: 'UTC', primary: true, accessRole: 'owner' },
  ]);
  const id = calendars[0]?.id as string;
  calendarIds.set(email, id);
  return id;
}

/** `calgate serve` with its worker, until stopped. */
async function startGateway(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['apps/gateway/src/bin/calgate.ts', 'serve'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: publicUrl,
      DATABASE_URL: dbUrl,
      ENCRYPTION_KEY: encryptionKey.toString('base64'),
      GOOGLE_CLIENT_ID: CLIENT.clientId,
      GOOGLE_CLIENT_SECRET: CLIENT.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulator.url}/`,
      GOOGLE_OAUTH_URL: emulator.url,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      WORKER_IN_PROCESS: 'true',
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i >= 300) {
      throw new Error('gateway did not become ready');
    }
    try {
      if ((await fetch(`${publicUrl}/readyz`)).ok) {
        return child;
      }
    } catch {}
    await sleep(100);
  }
}

async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms`);
    }
    await sleep(10);
  }
}

const inMirror = (calendarId: string, summary: string) => async () =>
  (
    await db.pool.query('SELECT 1 FROM mirror_events WHERE calendar_id = $1 AND summary = $2', [
      calendarId,
      summary,
    ])
  ).rows.length > 0;

/** Adds an event as the account itself; resolves with the ms until the mirror holds it. */
async function change(email: string, summary: string, timeoutMs: number): Promise<number> {
  const token = emulator.admin.issueTokens({ email, scopes: [...GOOGLE_SCOPES] }).access_token;
  const started = Date.now();
  const response = await fetch(`${emulator.url}/calendar/v3/calendars/${encodeURIComponent(email)}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(event(summary, 15)),
  });
  if (response.status !== 200) {
    throw new Error(`the emulator refused the change (HTTP ${response.status})`);
  }
  await until(inMirror(calendarIds.get(email) as string, summary), timeoutMs, summary);
  return Date.now() - started;
}

const row = (label: string, values: number[], target: string) => {
  say(
    `| ${label} | ${values.length} | ${median(values)} | ${percentile(values, 95)} | ${Math.max(...values)} | ${target} |`,
  );
};

try {
  say();
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    '`npm run bench:mirror-push`: `calgate serve` with its worker in process, PUBLIC_URL its own loopback address, the Google emulator and Postgres on loopback (no emulated latency; everything shares the machine). Each change is an event added as the account itself; timed from the write until its row is in mirror_events.',
  );
  say();
  say('| mode | changes | median ms | p95 ms | max ms | target |');
  say('|---|---|---|---|---|---|');

  // Push: the worker syncs the calendar, opens its channel; each change is a notification.
  const pushedId = await connect(PUSHED);
  const pushGateway = await startGateway({ MIRROR_PUSH: 'true', MIRROR_POLL_INTERVAL: '3600' });
  const pushed: number[] = [];
  try {
    const calendarId = pushedId;
    await until(
      async () =>
        (await db.pool.query('SELECT 1 FROM mirror_channels WHERE calendar_id = $1', [calendarId])).rows
          .length > 0,
      30_000,
      'the push channel',
    );
    for (let i = 0; i < PUSH_CHANGES; i += 1) {
      await sleep(between(200, 1500));
      pushed.push(await change(PUSHED, `Pushed ${i}`, 30_000));
    }
  } finally {
    await stopGateway(pushGateway);
  }
  const pushMedian = median(pushed);
  row('push (MIRROR_PUSH=true)', pushed, pushMedian <= TARGET_MS ? `≤ 2 s: met` : '≤ 2 s: **missed**');

  // Polling only, on the other calendar (no channel is ever opened for it).
  const polledId = await connect(POLLED);
  const pollGateway = await startGateway({ MIRROR_PUSH: 'false', MIRROR_POLL_INTERVAL: '5' });
  const polled: number[] = [];
  try {
    const calendarId = polledId;
    await until(inMirror(calendarId, 'Existing 0'), 90_000, 'the first sync');
    await db.pool.query(
      `INSERT INTO mirror_reads (calendar_id, tenant_id) VALUES ($1, $2)
       ON CONFLICT (calendar_id) DO UPDATE SET last_read_at = now()`,
      [calendarId, tenant.id],
    );
    // Concurrent changes at random moments: each waits for the planner pass after it.
    const pending: Promise<number>[] = [];
    for (let i = 0; i < POLL_CHANGES; i += 1) {
      await sleep(between(3_000, 20_000));
      pending.push(change(POLLED, `Polled ${i}`, 180_000));
    }
    polled.push(...(await Promise.all(pending)));
    if (emulator.admin.channels().some((channel) => channel.calendarId === POLLED)) {
      throw new Error('The polling-only calendar has a push channel: its figures would be push figures.');
    }
  } finally {
    await stopGateway(pollGateway);
  }
  row('polling only (MIRROR_PUSH=false, MIRROR_POLL_INTERVAL=5)', polled, 'none (fallback)');
  say();
  say(
    `Push: notification → receiver → 'push' sync job → worker (polls its queue every 0.5 s) → one incremental events.list. Polling only: the planner runs once a minute, so a change waits for its next pass; tool reads of a stale calendar sync first (MIRROR_MAX_STALENESS), which this bench does not exercise. With real Google add its notification delay and one events.list round trip (≈100–300 ms).`,
  );
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/mirror-push.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await db.close();
  await postgres.stop();
  await emulator.close();
}
