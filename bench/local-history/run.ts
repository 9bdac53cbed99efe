/**
 * A month's listing of a local calendar as its history grows: the same 180 rows in the window,
 * with 500, 10,000 and 50,000 single events before it. LocalEventStore.listRange against real
 * PostgreSQL (the read list_events makes for a local calendar), medians of 50 reads after 20
 * warm-ups. Appends to bench/results/local-history.md (BENCH_RECORD=0 to only print).
 *
 *   npm run bench:local-history
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LocalEventStore, migrate, openDatabase, TenancyRepository } from '@calgate/store';
import { startPostgres } from '@calgate/testkit';
import { machineSummary, today } from '../lib/machine.ts';
import { median, timed } from '../mirror/measure.ts';

const SIZES = (process.env.BENCH_SIZES ?? '500,10000,50000').split(',').map(Number);
const HOUR = 3_600_000;
const root = fileURLToPath(new URL('../../', import.meta.url));

const postgres = await startPostgres();
const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
try {
  const db = openDatabase({ url: postgres.url });
  await migrate(db.pool);
  const tenancy = new TenancyRepository(db.prisma);
  const tenant = await tenancy.createTenant('History');
  const store = new LocalEventStore(db);
  say(`## ${today()} — ${machineSummary()}`);
  say();
  say(
    'A month of a local calendar (180 events, one every 4 hours) after a history of single events: `LocalEventStore.listRange` over real PostgreSQL, median of 50 reads.',
  );
  say();
  say('| events before the window | rows read | ms per read |');
  say('|---|---|---|');
  for (const size of SIZES) {
    const calendar = await tenancy.createLocalCalendar(tenant.id, { summary: `n${size}`, timeZone: 'UTC' });
    await db.pool.query(
      `INSERT INTO local_events (calendar_id, id, ical_uid, summary, start_at, end_at, etag, updated_at)
       SELECT $2, 'e' || g, 'e' || g || '@bench', 'Event ' || g,
              timestamptz '2020-01-01' + g * interval '4 hours', timestamptz '2020-01-01' + g * interval '4 hours' + interval '1 hour',
              '"1"', now()
         FROM generate_series(1, $1) g`,
      [size + 180, calendar.id],
    );
    await db.pool.query('ANALYZE local_events');
    const end = Date.parse('2020-01-01T00:00:00Z') + (size + 180) * 4 * HOUR;
    const query = {
      timeMin: new Date(end - 30 * 24 * HOUR),
      timeMax: new Date(end + HOUR),
      showDeleted: false,
      limit: 20_000,
    };
    let rows = 0;
    for (let i = 0; i < 20; i++) {
      rows = (await store.listRange(calendar.id, query)).length;
    }
    const times = await timed(50, async () => {
      await store.listRange(calendar.id, query);
    });
    say(`| ${size.toLocaleString('en')} | ${rows} | ${median(times).toFixed(2)} |`);
  }
  await db.close();
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/local-history.md`, `\n${lines.join('\n')}\n`);
  }
} finally {
  await postgres.stop();
}
