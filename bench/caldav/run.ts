/**
 * CalDAV calendars against a real Radicale, three targets:
 * - the initial sync of a 5,000-object calendar into the event mirror (≤ 20 s), through the
 *   worker's own path (the sync sources `calgate worker` builds, one sync job from an empty mirror);
 * - list_events of the mirrored calendar through the gateway over HTTP with the MCP SDK client
 *   (p50 ≤ 5 ms), beside the same read with MIRROR_READS=false (every read asks Radicale);
 * - a change made directly on the server (a plain PUT, as another client would) visible through
 *   the mirror within MIRROR_MAX_STALENESS + 2 s.
 * The calendar is connected as `calgate connect caldav` does it. The objects (200 PUT by an
 * independent client, the rest written into Radicale's storage folder, since Radicale takes ~0.1 s a
 * PUT into a large collection) are single events over two years (one in twenty all-day) and, one
 * object in ten, weekly series of five occurrences, every tenth series with a moved occurrence
 * (RECURRENCE-ID in the same object).
 * Appends the figures to bench/results/caldav.md (BENCH_RECORD=0 to only print).
 */
import { writeFileSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { MirrorRepository, migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { main } from '../../apps/gateway/src/cli.ts';
import { loadConfig } from '../../apps/gateway/src/config.ts';
import { installHttpClient } from '../../apps/gateway/src/http-client.ts';
import { createLogger } from '../../apps/gateway/src/logger.ts';
import { runMirrorSync } from '../../apps/gateway/src/mirror/jobs.ts';
import { calendarProviders } from '../../apps/gateway/src/runtime.ts';
import { startRadicale } from '../../packages/providers/test/caldav/servers.ts';
import { benchGatewayEnv, serveBenchGateway } from '../lib/google-gateway.ts';
import { machineSummary, today } from '../lib/machine.ts';
import { benchSession } from '../lib/mcp-session.ts';
import { median, percentile } from '../mirror/measure.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 5_000);
const SYNC_RUNS = Number(process.env.BENCH_SYNC_RUNS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const UPSTREAM_ROUNDS = Number(process.env.BENCH_UPSTREAM_ROUNDS ?? 20);
const PUT_OBJECTS = 200;
const OUT_OF_BAND = Number(process.env.BENCH_OUT_OF_BAND ?? 5);
const STALENESS_S = 2;
// The listing's window: as many events as bench:mirror-reads' month of a lighter calendar.
const LIST_DAYS = 4;
const SERIES_EVERY = 10;
const DAY = 86_400_000;
const root = fileURLToPath(new URL('../../', import.meta.url));
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

const stamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
const date = (ms: number) => stamp(ms).slice(0, 8);
function ics(uid: string, lines: string[], overrides: string[][] = []): string {
  const vevent = (body: string[]) => [
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    ...body,
    'END:VEVENT',
  ];
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Bench//Independent client//EN',
    ...vevent(lines),
    ...overrides.flatMap(vevent),
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

let seed = 11;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
// From a year ago to a year ahead; the listing reads next month.
const first = Math.floor(Date.now() / DAY) * DAY - 365 * DAY;
const objects: { name: string; text: string }[] = [];
for (let i = 0; i < OBJECTS; i++) {
  const day = first + Math.floor(random() * 730) * DAY;
  const start = day + (7 + Math.floor(random() * 10)) * 3_600_000;
  const end = start + (1 + Math.floor(random() * 4)) * 900_000;
  const common = [
    `SUMMARY:Meeting ${i}`,
    'DESCRIPTION:Agenda and notes for the review of the plan.',
    `LOCATION:Room ${i % 12}`,
    'ORGANIZER:mailto:alice@example.com',
    `ATTENDEE;PARTSTAT=ACCEPTED:mailto:guest${i % 50}@example.com`,
  ];
  if (i % SERIES_EVERY === 0) {
    const moved = i % (SERIES_EVERY * 10) === 0;
    objects.push({
      name: `series-${i}.ics`,
      text: ics(
        `series-${i}@bench`,
        [...common, `DTSTART:${stamp(start)}`, `DTEND:${stamp(end)}`, 'RRULE:FREQ=WEEKLY;COUNT=5'],
        moved
          ? [
              [
                `RECURRENCE-ID:${stamp(start + 14 * DAY)}`,
                `SUMMARY:Meeting ${i} (moved)`,
                `DTSTART:${stamp(start + 15 * DAY)}`,
                `DTEND:${stamp(end + 15 * DAY)}`,
              ],
            ]
          : [],
      ),
    });
  } else if (i % 20 === 1) {
    objects.push({
      name: `day-${i}.ics`,
      text: ics(`day-${i}@bench`, [
        `SUMMARY:Offsite ${i}`,
        `DTSTART;VALUE=DATE:${date(day)}`,
        `DTEND;VALUE=DATE:${date(day + DAY)}`,
      ]),
    });
  } else {
    objects.push({
      name: `event-${i}.ics`,
      text: ics(`event-${i}@bench`, [...common, `DTSTART:${stamp(start)}`, `DTEND:${stamp(end)}`]),
    });
  }
}

installHttpClient();
const radicale = await startRadicale();
const postgres = await startPostgres();
const sessions: Client[] = [];
let closeAll: () => Promise<void> = async () => {};
try {
  const calendarPath = `${new URL(radicale.home).pathname}work/`;
  await radicale.makeCalendar(calendarPath, { displayName: 'Work', timeZone: 'UTC' });
  // Radicale takes ~0.1 s a PUT into a large collection: the bulk is written into its storage
  // folder (as a server-side import would), the rest PUT; everything is read over CalDAV only.
  const seedStarted = performance.now();
  const folder = join(radicale.storage, 'collection-root', calendarPath);
  for (const object of objects.slice(PUT_OBJECTS)) {
    writeFileSync(join(folder, object.name), object.text);
  }
  for (let i = 0; i < PUT_OBJECTS; i += 8) {
    await Promise.all(
      objects.slice(i, i + 8).map((object) => radicale.seed(`${calendarPath}${object.name}`, object.text)),
    );
  }
  // Radicale reads and caches the files on the first listing; that is seeding too.
  const warm = await radicale.raw(
    'PROPFIND',
    calendarPath,
    '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>',
    { depth: '1', 'content-type': 'application/xml' },
  );
  if (warm.status !== 207) {
    throw new Error(`PROPFIND ${calendarPath}: ${warm.status}`);
  }
  await warm.text();
  const seedMs = performance.now() - seedStarted;

  const admin = openDatabase({ url: postgres.url, max: 1 });
  await migrate(admin.pool);
  await admin.close();
  const env = {
    ...benchGatewayEnv({ url: 'http://127.0.0.1:9' } as never, postgres.url),
    OUTBOUND_ALLOW_PRIVATE: 'true',
  };
  // Reads at the default staleness (15 s); out-of-band changes on a gateway that allows 2 s.
  const mirrored = await serveBenchGateway({ ...env, WORKER_IN_PROCESS: 'true' });
  const direct = await serveBenchGateway({ ...env, MIRROR_READS: 'false' });
  const strict = await serveBenchGateway({ ...env, MIRROR_MAX_STALENESS: String(STALENESS_S) });
  closeAll = async () => {
    await Promise.all(sessions.map((session) => session.close()));
    await Promise.all([direct.close(), mirrored.close(), strict.close()]);
  };
  const tenant = await mirrored.runtime.tenancy.createTenant('Bench');
  const { key, secret } = await mirrored.runtime.keys.create(tenant.id, { name: 'bench' });
  let out = '';
  let err = '';
  const code = await main(
    [
      'connect',
      'caldav',
      '--tenant',
      tenant.id,
      '--url',
      radicale.root,
      '--username',
      radicale.username,
      '--access',
      'read',
      '--keys',
      key.id,
      '--json',
    ],
    { ...env, CALDAV_PASSWORD: radicale.password },
    { out: (t) => (out += t), err: (t) => (err += t) },
  );
  if (code !== 0) {
    throw new Error(`calgate connect caldav failed: ${err}`);
  }
  const connected = JSON.parse(out) as { calendars: { id: string; summary: string }[] };
  const calendarId = connected.calendars.find((calendar) => calendar.summary === 'Work')?.id as string;

  // 1. Initial sync, as the worker runs it.
  const { db } = mirrored.runtime;
  const mirror = new MirrorRepository(db);
  const quiet = () => createLogger('warn', new Writable({ write: (_c, _e, done) => done() }));
  const { sources } = await calendarProviders(
    loadConfig(env),
    db,
    mirrored.runtime.connections,
    quiet(),
    () => {},
  );
  const expectedRows = OBJECTS + OBJECTS / (SERIES_EVERY * 10);
  const countRows = async () =>
    Number(
      (
        await db.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM mirror_events WHERE calendar_id = $1 AND status <> 'cancelled'`,
          [calendarId],
        )
      ).rows[0]?.n,
    );
  const syncRuns: number[] = [];
  const loadBefore = loadavg();
  for (let run = 0; run < SYNC_RUNS; run++) {
    await mirror.deleteCalendar(calendarId);
    await db.pool.query('VACUUM ANALYZE mirror_events');
    const started = performance.now();
    await runMirrorSync(
      { db, mirror, sources, log: quiet() },
      { tenantId: tenant.id, calendarId, reason: 'initial' },
    );
    syncRuns.push(performance.now() - started);
    const stored = await countRows();
    if (stored !== expectedRows) {
      throw new Error(`The initial sync stored ${stored} rows; ${expectedRows} expected.`);
    }
  }

  // 2. list_events from the mirror and from Radicale.
  const connect = (url: string) => benchSession(url, secret, sessions);
  const viaMirror = await connect(mirrored.url);
  const viaServer = await connect(direct.url);
  const viaStrict = await connect(strict.url);
  const monthStart = Math.floor(Date.now() / DAY) * DAY + 30 * DAY;
  const window = {
    timeMin: new Date(monthStart).toISOString(),
    timeMax: new Date(monthStart + LIST_DAYS * DAY).toISOString(),
  };
  const list = async (session: Client, args: Record<string, unknown> = window) => {
    const started = performance.now();
    const result = await session.callTool({
      name: 'list_events',
      arguments: { ...args, calendarId, maxResults: 2500, format: 'json' },
    });
    const ms = performance.now() - started;
    if (result.isError) {
      throw new Error(JSON.stringify(result.content));
    }
    const answer = result.structuredContent as { events: { summary?: string }[]; syncedAt?: string };
    return { ms, events: answer.events, syncedAt: answer.syncedAt };
  };
  const measure = async (session: Client, rounds: number) => {
    await list(session);
    const times: number[] = [];
    let fromMirror = 0;
    let events = 0;
    for (let i = 0; i < rounds; i++) {
      const result = await list(session);
      times.push(result.ms);
      fromMirror += result.syncedAt === undefined ? 0 : 1;
      events = result.events.length;
    }
    return { times, fromMirror, events };
  };
  const fromMirror = await measure(viaMirror, ROUNDS);
  const fromServer = await measure(viaServer, UPSTREAM_ROUNDS);

  // 3. Out-of-band changes: PUT directly, then read through the mirror until they show.
  const visible: number[] = [];
  for (let n = 0; n < OUT_OF_BAND; n++) {
    const start = monthStart + (n % LIST_DAYS) * DAY + 20 * 3_600_000;
    const summary = `Added elsewhere ${n}`;
    await list(viaStrict);
    await radicale.seed(
      `${calendarPath}oob-${n}.ics`,
      ics(`oob-${n}@bench`, [
        `SUMMARY:${summary}`,
        `DTSTART:${stamp(start)}`,
        `DTEND:${stamp(start + 3_600_000)}`,
      ]),
    );
    const changedAt = performance.now();
    for (;;) {
      const { events } = await list(viaStrict);
      if (events.some((event) => event.summary === summary)) {
        visible.push(performance.now() - changedAt);
        break;
      }
      if (performance.now() - changedAt > (STALENESS_S + 30) * 1000) {
        throw new Error(`${summary} did not show through the mirror within ${STALENESS_S + 30} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // A random phase against the staleness clock for the next change.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * STALENESS_S * 1000)));
  }
  const loadAfter = loadavg();

  const syncMid = median(syncRuns);
  say(`\n## ${today()} — ${machineSummary()}\n`);
  say(
    `\`npm run bench:caldav\`: a Radicale calendar of ${OBJECTS} objects (${OBJECTS - OBJECTS / SERIES_EVERY - OBJECTS / 20} timed single events, ${OBJECTS / 20} all-day, ${OBJECTS / SERIES_EVERY} weekly series of five, ${OBJECTS / (SERIES_EVERY * 10)} of them with a moved occurrence) written by an independent client (${PUT_OBJECTS} PUT 8 at a time, the rest into Radicale's storage folder: ${(seedMs / 1000).toFixed(0)} s) and read only over CalDAV, connected as \`calgate connect caldav\` does. Load average (1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(1)).join(', ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(', ')} after (the machine is shared).\n`,
  );
  say('| measure | result | target |');
  say('|---|---|---|');
  say(
    `| initial sync into the mirror (one sync job, ${SYNC_RUNS} runs: median, min, max) | ${(syncMid / 1000).toFixed(2)} s, ${(Math.min(...syncRuns) / 1000).toFixed(2)} s, ${(Math.max(...syncRuns) / 1000).toFixed(2)} s (${(OBJECTS / (syncMid / 1000)).toFixed(0)} objects/s) | ≤ 20 s: ${syncMid <= 20_000 ? 'met' : '**missed**'} |`,
  );
  const p50 = median(fromMirror.times);
  say(
    `| list_events from the mirror (default MIRROR_MAX_STALENESS, 15 s: the reads include the incremental syncs it asks for), ${LIST_DAYS} days (${fromMirror.events} events, about what bench:mirror-reads lists), ${fromMirror.times.length} calls (${fromMirror.fromMirror} answered from the mirror): p50 / p95 / p99 | ${p50.toFixed(1)} / ${percentile(fromMirror.times, 95).toFixed(1)} / ${percentile(fromMirror.times, 99).toFixed(1)} ms | p50 ≤ 5 ms: ${p50 <= 5 ? 'met' : '**missed**'} |`,
  );
  say(
    `| the same listing asked of Radicale (MIRROR_READS=false), ${fromServer.times.length} calls: p50 / p95 | ${median(fromServer.times).toFixed(1)} / ${percentile(fromServer.times, 95).toFixed(1)} ms | |`,
  );
  const worst = Math.max(...visible);
  say(
    `| a change PUT directly on the server, visible through the mirror (MIRROR_MAX_STALENESS=${STALENESS_S} s, ${visible.length} changes): median / max | ${(median(visible) / 1000).toFixed(2)} / ${(worst / 1000).toFixed(2)} s | ≤ ${STALENESS_S + 2} s: ${worst <= (STALENESS_S + 2) * 1000 ? 'met' : '**missed**'} |`,
  );
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/caldav.md`, `${lines.join('\n')}\n`);
  }
} finally {
  await closeAll();
  await postgres.stop();
  await radicale.stop();
}
