/**
 * Initial sync of a 10,000-event Outlook calendar into the event mirror (target ≤ 15 s), through
 * the worker's own path: the calendar connected as `calgate connect microsoft` does, the sync
 * sources built as `calgate worker` builds them (calendarProviders: MIRROR_SYNC_PAGE_SIZE, the
 * mailbox's limiter of 4 requests in flight, the sealed refresh token), and each run one sync job
 * (runMirrorSync) from an empty mirror to the delta link. The Graph emulator is seeded through its
 * admin API: 9,000 single events (one in twenty all-day) and 200 weekly series of 5 occurrences,
 * 10,000 items in the calendarView/delta listing. Runs without latency and with 100 ms on every
 * Graph call, at the configured page size and at 200; medians. The emulator's throttle (4 in
 * flight, 10,000 per 10 minutes) stays on, and its 429s are counted.
 * Appends the figures to bench/results/microsoft-sync.md (BENCH_RECORD=0 to only print).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type SeedEvent, startMicrosoftEmulator } from '@calgate/microsoft-emulator';
import { MirrorRepository, migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { loadConfig } from '../../apps/gateway/src/config.ts';
import { createLogger } from '../../apps/gateway/src/logger.ts';
import { runMirrorSync } from '../../apps/gateway/src/mirror/jobs.ts';
import { calendarProviders } from '../../apps/gateway/src/runtime.ts';
import { benchGatewayEnv, serveBenchGateway } from '../lib/google-gateway.ts';
import { machineSummary, today } from '../lib/machine.ts';
import { benchMicrosoftEnv, connectOutlook, outlookEvent } from '../lib/microsoft-gateway.ts';
import { median } from '../mirror/measure.ts';

const RUNS = Number(process.env.BENCH_SYNC_RUNS ?? 3);
const TARGET_MS = 15_000;
const ANN = 'ann@contoso.example';
const DAY = 86_400_000;
const root = fileURLToPath(new URL('../../', import.meta.url));
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

// Events from 300 days ago to 600 days ahead: all inside the mirrored window.
const first = Math.floor(Date.now() / DAY) * DAY - 300 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
let seed = 7;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const events: SeedEvent[] = [];
for (let i = 0; i < 9_000; i++) {
  const day = first + Math.floor(random() * 900) * DAY;
  if (i % 20 === 0) {
    const date = iso(day).slice(0, 10);
    const next = iso(day + DAY).slice(0, 10);
    events.push({
      subject: `Offsite ${i}`,
      isAllDay: true,
      start: { dateTime: `${date}T00:00:00`, timeZone: 'UTC' },
      end: { dateTime: `${next}T00:00:00`, timeZone: 'UTC' },
    });
    continue;
  }
  const start = day + (7 + Math.floor(random() * 10)) * 3_600_000 + (random() < 0.5 ? 0 : 1_800_000);
  events.push(
    outlookEvent(`Meeting ${i}`, iso(start), iso(start + (1 + Math.floor(random() * 4)) * 900_000), {
      body: { contentType: 'text', content: 'Agenda and notes for the review of the plan.' },
      location: { displayName: `Room ${i % 12}` },
      attendees: [
        { emailAddress: { address: ANN }, type: 'required' },
        { emailAddress: { address: `guest${i % 50}@example.com` }, type: 'required' },
      ],
    }),
  );
}
const weekdays = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
for (let s = 0; s < 200; s++) {
  const start = first + Math.floor(random() * 800) * DAY + (8 + (s % 9)) * 3_600_000;
  events.push(
    outlookEvent(`Weekly ${s}`, iso(start), iso(start + 1_800_000), {
      recurrence: {
        pattern: { type: 'weekly', interval: 1, daysOfWeek: [weekdays[new Date(start).getUTCDay()]] },
        range: { type: 'numbered', startDate: iso(start).slice(0, 10), numberOfOccurrences: 5 },
      },
    }),
  );
}

const emulator = await startMicrosoftEmulator();
emulator.admin.seed({
  users: [
    { email: ANN, timeZone: 'UTC', calendars: [{ name: 'Calendar', isDefaultCalendar: true, events }] },
  ],
});
const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await migrate(admin.pool);
await admin.close();
const quiet = () => createLogger('warn', new Writable({ write: (_c, _e, done) => done() }));
const env = {
  ...benchGatewayEnv({ url: 'http://127.0.0.1:9' } as never, postgres.url),
  ...benchMicrosoftEnv(emulator),
};
const gateway = await serveBenchGateway(env);
try {
  const tenant = await gateway.runtime.tenancy.createTenant('Bench');
  const { key } = await gateway.runtime.keys.create(tenant.id, { name: 'bench' });
  const calendarId = (await connectOutlook(gateway, emulator, tenant.id, ANN, [key.id])).calendars[0]
    ?.id as string;
  const { db } = gateway.runtime;
  const mirror = new MirrorRepository(db);
  const log = createLogger('warn');
  const rows = async () =>
    Number(
      (
        await db.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM mirror_events WHERE calendar_id = $1 AND status <> 'cancelled'`,
          [calendarId],
        )
      ).rows[0]?.n,
    );
  const pgVersion =
    (await db.pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
  const configured = loadConfig(env).mirror.pageSize;
  const load = loadavg();
  const results: string[] = [];
  for (const [latency, pageSize] of [
    [0, configured],
    [100, configured],
    [100, 200],
  ] as const) {
    // As `calgate worker` builds them, with this page size.
    const config = loadConfig({ ...env, MIRROR_SYNC_PAGE_SIZE: String(pageSize) });
    const { sources } = await calendarProviders(config, db, gateway.runtime.connections, quiet(), () => {});
    emulator.admin.setLatency(latency === 0 ? null : { ms: latency });
    const runs: number[] = [];
    let requests = 0;
    let throttled = 0;
    for (let run = 0; run < RUNS; run++) {
      await mirror.deleteCalendar(calendarId);
      await db.pool.query('VACUUM ANALYZE mirror_events');
      emulator.admin.clearRequests();
      const started = performance.now();
      await runMirrorSync(
        { db, mirror, sources, log },
        { tenantId: tenant.id, calendarId, reason: 'initial' },
      );
      runs.push(performance.now() - started);
      const stored = await rows();
      if (stored !== 10_000) {
        throw new Error(`The initial sync stored ${stored} events; 10,000 expected.`);
      }
      const made = emulator.admin.requests().filter((r) => r.op !== 'oauth.token');
      requests = made.length;
      throttled = made.filter((r) => r.status === 429).length;
    }
    const mid = median(runs);
    results.push(
      `| ${latency} | ${pageSize === configured ? `${pageSize} (default; Graph pages ≤ 1000)` : pageSize} | ${requests} | ${throttled} | ${(mid / 1000).toFixed(2)} | ${(Math.min(...runs) / 1000).toFixed(2)} | ${(Math.max(...runs) / 1000).toFixed(2)} | ${(10_000 / (mid / 1000)).toFixed(0)} | ${mid <= TARGET_MS ? 'met' : '**missed**'} |`,
    );
  }
  const loadAfter = loadavg();
  say(`\n## ${today()} — ${machineSummary()}, PostgreSQL ${pgVersion}\n`);
  say(
    `\`npm run bench:microsoft-sync\`: initial sync of a 10,000-event Outlook calendar (9,000 single events, 450 of them all-day, and 200 weekly series of 5 occurrences) from the Graph emulator into the mirror, one sync job (runMirrorSync) with the sources \`calgate worker\` builds; median of ${RUNS} runs each. Target ≤ 15 s. Load average (1, 5, 15 min) ${load.map((l) => l.toFixed(1)).join(', ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(', ')} after (the machine is shared).\n`,
  );
  say(
    '| Graph latency ms | MIRROR_SYNC_PAGE_SIZE | Graph requests | 429 answers | median s | min s | max s | events/s | target |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  for (const row of results) {
    say(row);
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/microsoft-sync.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await gateway.close();
  await postgres.stop();
  await emulator.close();
}
