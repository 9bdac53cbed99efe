/**
 * The event mirror (issue 15): initial sync of a 10,000-event Google calendar from the emulator
 * (target ≤ 10 s), an upstream change reaching the mirror by incremental sync, search across
 * 20 calendars × 5,000 events (target p95 ≤ 20 ms, with the plans of each kind of query) and a
 * month read of a 5,000-event calendar. Prints the figures and whether each target is met, and
 * appends them to bench/results/mirror.md (BENCH_RECORD=0 to only print).
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startGoogleEmulator } from '@calgate/google-emulator';
import { SYNC_PAGE_SIZE, syncCalendar } from '@calgate/providers';
import { MirrorRepository, migrate, openDatabase } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { auth, calendar as googleCalendar } from '@googleapis/calendar';
import { machineSummary, today } from '../lib/machine.ts';
import { emulatorCalendar, instanceKey, mirrorCalendar, random } from './data.ts';
import { explainingMirror, indexesIn, median, ms, percentile, timed } from './measure.ts';

const SYNC_RUNS = Number(process.env.BENCH_SYNC_RUNS ?? 3);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const READS = Number(process.env.BENCH_READS ?? 200);
const SEARCH_CALENDARS = 20;
const PER_CALENDAR = 5000;
const TENANT = 'tnt_bench';
const ANN = 'ann@example.com';
const BIG = 'big@group.calendar.google.com';
const WEEK = 7 * 86_400_000;
const root = fileURLToPath(new URL('../../', import.meta.url));
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const met = (ok: boolean) => (ok ? 'met' : '**missed**');

// 9,000 single events (one in twenty all-day) and 200 weekly series, each with 3 moved or
// renamed occurrences and 1 cancelled one: 10,000 events in a singleEvents=false listing.
const calendarSpec = emulatorCalendar(15, 9000, 200);
const emulator = await startGoogleEmulator({
  seed: {
    accounts: [
      { email: ANN, calendars: [{ id: BIG, summary: 'Big', timeZone: 'UTC', events: calendarSpec.events }] },
    ],
  },
});
const client = new auth.OAuth2();
client.setCredentials({ access_token: emulator.admin.issueTokens({ email: ANN }).access_token });
const api = googleCalendar({ version: 'v3', rootUrl: `${emulator.url}/`, auth: client, retry: false });
const exceptions = calendarSpec.series.flatMap((s) =>
  [3, 7, 11, 15].map((week, k) => ({ eventId: `${s.id}_${instanceKey(s.firstStart + week * WEEK)}`, k })),
);
for (let i = 0; i < exceptions.length; i += 16) {
  await Promise.all(
    exceptions.slice(i, i + 16).map(({ eventId, k }) =>
      k === 3
        ? api.events.delete({ calendarId: BIG, eventId })
        : api.events.patch({
            calendarId: BIG,
            eventId,
            requestBody: { summary: `Moved occurrence ${k}`, location: 'Salle Érable' },
          }),
    ),
  );
}

const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await admin.pool.query('CREATE DATABASE bench');
await admin.close();
const db = openDatabase({ url: postgres.url.replace(/\/postgres$/, '/bench') });
await migrate(db.pool);
const mirror = new MirrorRepository(db);
await db.prisma.tenant.create({ data: { id: TENANT, name: 'Bench' } });
await db.prisma.connection.create({
  data: { id: 'con_bench', tenantId: TENANT, provider: 'google', accountEmail: ANN, auth: 'oauth' },
});
const searchIds = Array.from({ length: SEARCH_CALENDARS }, (_, i) => `cal_s${String(i).padStart(2, '0')}`);
for (const [id, externalId] of [
  ['cal_sync', BIG],
  ...searchIds.map((id) => [id, `${id}@group.calendar.google.com`]),
]) {
  await db.prisma.calendar.create({
    data: {
      id: id as string,
      tenantId: TENANT,
      connectionId: 'con_bench',
      externalId: externalId as string,
      summary: id as string,
      timeZone: 'UTC',
    },
  });
}
const pgVersion =
  (await db.pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
const sync = (pageSize: number) =>
  syncCalendar({
    calendar: api,
    calendarId: 'cal_sync',
    tenantId: TENANT,
    externalId: BIG,
    store: mirror,
    pageSize,
  });

try {
  say();
  say(`## ${today()} — ${machineSummary()}, PostgreSQL ${pgVersion}`);
  say();
  say(
    '`npm run bench:mirror` (Postgres and the Google emulator started by the bench, on loopback, no emulated latency; everything shares the machine).',
  );

  // 1. Initial sync.
  say();
  say(
    `### Initial sync of a 10,000-event calendar (9,000 single events, 450 of them all-day; 200 weekly series with 600 changed and 200 cancelled occurrences), median of ${SYNC_RUNS} runs. Target ≤ 10 s.`,
  );
  say();
  say('| page size | pages | events | median ms | min ms | max ms | events/s | target |');
  say('|---|---|---|---|---|---|---|---|');
  for (const pageSize of [SYNC_PAGE_SIZE, 2500]) {
    let pages = 0;
    let received = 0;
    const runs: number[] = [];
    for (let run = 0; run < SYNC_RUNS; run++) {
      await mirror.deleteCalendar('cal_sync');
      // Dead rows of the previous run would make each run slower than the first one.
      await db.pool.query('VACUUM ANALYZE mirror_events');
      const started = performance.now();
      const result = await sync(pageSize);
      runs.push(performance.now() - started);
      ({ pages, received } = result);
      // Cancelled occurrences are stored too, but count as deletes for the change feed.
      if (result.upserted + result.deleted !== received || received !== 10_000) {
        throw new Error(
          `Initial sync stored ${result.upserted + result.deleted} of ${received} events; 10,000 expected.`,
        );
      }
    }
    const mid = median(runs);
    say(
      `| ${pageSize} | ${pages} | ${received} | ${ms(mid)} | ${ms(Math.min(...runs))} | ${ms(Math.max(...runs))} | ${(received / (mid / 1000)).toFixed(0)} | ${met(mid <= 10_000)} |`,
    );
  }

  // 2. An upstream change reaching the mirror.
  const syncOnly: number[] = [];
  const toRow = await timed(CHANGES, async (i) => {
    const summary = `Changed upstream ${i}`;
    let eventId: string;
    if (i % 2 === 0) {
      const start = Date.UTC(2026, 11, 1 + i, 9);
      const { data } = await api.events.insert({
        calendarId: BIG,
        requestBody: {
          summary,
          start: { dateTime: new Date(start).toISOString() },
          end: { dateTime: new Date(start + 3_600_000).toISOString() },
        },
      });
      eventId = data.id ?? '';
    } else {
      eventId = `${calendarSpec.series[i]?.id}`;
      await api.events.patch({ calendarId: BIG, eventId, requestBody: { summary } });
    }
    const started = performance.now();
    const result = await sync(SYNC_PAGE_SIZE);
    syncOnly.push(performance.now() - started);
    const { rowCount } = await db.pool.query(
      'SELECT 1 FROM mirror_events WHERE calendar_id = $1 AND event_id = $2 AND summary = $3',
      ['cal_sync', eventId, summary],
    );
    if (rowCount !== 1 || result.mode !== 'incremental') {
      throw new Error(`Change ${i} did not reach the mirror by an incremental sync (${result.mode}).`);
    }
  });
  say();
  say(
    `### An upstream change visible in the mirror (insert or patch through the emulator, then one incremental sync), ${CHANGES} changes`,
  );
  say();
  say('| | p50 ms | p95 ms | max ms |');
  say('|---|---|---|---|');
  say(
    `| write → mirror row | ${ms(median(toRow))} | ${ms(percentile(toRow, 95))} | ${ms(Math.max(...toRow))} |`,
  );
  say(
    `| incremental sync alone | ${ms(median(syncOnly))} | ${ms(percentile(syncOnly, 95))} | ${ms(Math.max(...syncOnly))} |`,
  );
  say();
  say(
    'The sync is started right after the write here; `npm run bench:mirror-push` measures the path from a push (watch channel → sync job) end to end. With real Google add one events.list round trip (≈100–300 ms) to the sync.',
  );

  // 3. Search across 20 calendars × 5,000 events.
  for (const [c, calendarId] of searchIds.entries()) {
    const events = mirrorCalendar(100 + c, PER_CALENDAR - 100, 50);
    await mirror.applyPage(calendarId, TENANT, events.slice(0, 2500), { nextPageToken: 'p2' });
    await mirror.applyPage(calendarId, TENANT, events.slice(2500), { nextSyncToken: 's1' });
  }
  await db.pool.query('VACUUM ANALYZE mirror_events');
  const kinds: Record<string, string[]> = {
    'full word': ['budget', 'retrospective', 'workshop', 'postmortem', 'onboarding', 'helios'],
    prefix: ['budg', 'retro', 'onboard', 'plann', 'archi', 'invest'],
    // Words match at their beginnings only: these find nothing (the cost of a miss).
    'inside a word': ['udget', 'etrospect', 'boardin', 'rchitec', 'stmortem', 'nvestor'],
    accented: ['réunion', 'équipe', 'zürich', 'déjeuner', 'séminaire', 'chloé'],
    unaccented: ['reunion', 'equipe', 'zurich', 'dejeuner', 'seminaire', 'chloe'],
    'several words': [
      'cafe zoe',
      'budget review',
      'team offsite',
      'sprint retro',
      'kunden munchen',
      'formation securite',
    ],
  };
  const kindNames = Object.keys(kinds);
  const rand = random(7);
  const plan = Array.from({ length: QUERIES }, (_, i) => {
    const kind = kindNames[i % kindNames.length] as string;
    const words = kinds[kind] as string[];
    return { kind, text: words[Math.floor(rand() * words.length)] as string };
  });
  for (const { text } of plan.slice(0, 20)) {
    await mirror.search(searchIds, text);
  }
  const byKind = new Map<string, number[]>();
  let hits = 0;
  const all = await timed(plan.length, async (i) => {
    const { kind, text } = plan[i] as { kind: string; text: string };
    const started = performance.now();
    hits += (await mirror.search(searchIds, text)).length;
    byKind.set(kind, [...(byKind.get(kind) ?? []), performance.now() - started]);
  });
  say();
  say(
    `### Search across ${SEARCH_CALENDARS} calendars × ${PER_CALENDAR.toLocaleString('en')} events (${(SEARCH_CALENDARS * PER_CALENDAR).toLocaleString('en')} rows), MirrorRepository.search, ${QUERIES} queries (limit 50), after 20 warm-up queries. Target p95 ≤ 20 ms.`,
  );
  say();
  say('| queries | p50 ms | p95 ms | max ms | example | indexes in the plan (EXPLAIN ANALYZE) | plan ms |');
  say('|---|---|---|---|---|---|---|');
  const plans: string[] = [];
  const explaining = explainingMirror(db.pool, plans);
  for (const kind of kindNames) {
    const times = byKind.get(kind) ?? [];
    const example = (kinds[kind] as string[])[0] as string;
    await explaining.search(searchIds, example);
    const text = plans.at(-1) ?? '';
    const execution = /Execution Time: ([\d.]+)/.exec(text)?.[1] ?? '?';
    say(
      `| ${kind} | ${ms(median(times))} | ${ms(percentile(times, 95))} | ${ms(Math.max(...times))} | \`${example}\` | ${indexesIn(text).join(', ') || 'none (sequential scan)'} | ${execution} |`,
    );
  }
  const p95 = percentile(all, 95);
  say(
    `| **all ${QUERIES}** | **${ms(median(all))}** | **${ms(p95)}** | ${ms(Math.max(...all))} | ${(hits / QUERIES).toFixed(1)} hits/query | | ${met(p95 <= 20)} |`,
  );

  // 4. A month of one 5,000-event calendar.
  const months = Array.from({ length: READS }, (_, i) => i % 12);
  let rows = 0;
  const reads = await timed(READS, async (i) => {
    const m = months[i] as number;
    rows += (
      await mirror.read('cal_s00', {
        timeMin: new Date(Date.UTC(2026, m, 1)),
        timeMax: new Date(Date.UTC(2026, m + 1, 1)),
      })
    ).length;
  });
  const readPlans: string[] = [];
  await explainingMirror(db.pool, readPlans).read('cal_s00', {
    timeMin: new Date(Date.UTC(2026, 5, 1)),
    timeMax: new Date(Date.UTC(2026, 6, 1)),
  });
  say();
  say(
    `### mirror read(calendarId, one month) on a ${PER_CALENDAR.toLocaleString('en')}-event calendar (of the 100,000 rows above), ${READS} reads over the 12 months of 2026`,
  );
  say();
  say('| p50 ms | p95 ms | max ms | rows per read | indexes in the plan |');
  say('|---|---|---|---|---|');
  say(
    `| ${ms(median(reads))} | ${ms(percentile(reads, 95))} | ${ms(Math.max(...reads))} | ${(rows / READS).toFixed(0)} | ${indexesIn(readPlans[0] ?? '').join(', ') || 'none (sequential scan)'} |`,
  );
  say();

  if (process.env.BENCH_PLANS === '1') {
    for (const [i, text] of [...plans, ...readPlans].entries()) {
      process.stdout.write(`\n--- plan ${kindNames[i] ?? 'read'}\n${text}\n`);
    }
  }
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/mirror.md`, lines.join('\n'));
  }
} finally {
  await db.close();
  await postgres.stop();
  await emulator.close();
}
