/**
 * Mirror syncs across real processes: `calgate worker` processes on one Postgres sync Google
 * calendars (the emulator, over HTTP) into the mirror through the calgate-mirror-sync queue.
 * Workers race for the same calendar, one is killed with SIGKILL mid-sync, and a disconnect
 * takes the mirror's rows with it.
 */

import type { ChildProcess } from 'node:child_process';
import { connectRedis } from '@calgate/locks';
import { startBoss } from '@calgate/scheduler';
import { ApiKeyRepository, TenancyRepository } from '@calgate/store';
import { createTestDatabase, redisUrl, type TestDatabase, until } from '@calgate/testkit';
import type { PgBoss } from 'pg-boss';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GoogleConnections } from '../src/google/service.ts';
import { createMirrorQueue, MirrorJobs } from '../src/mirror/jobs.ts';
import { touchRead } from '../src/mirror/reads.ts';
import { emulatorGoogleProviders, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { startWorker as spawnWorker } from './workers.ts';

const TENANT = 'tnt_mirror';
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';
const BIG_EVENTS = 1200;

const log = pino({ level: 'silent' });
let db: TestDatabase;
let emulator: TestEmulator;
let boss: PgBoss;
let jobs: MirrorJobs;
let google: GoogleConnections;

interface SyncRun {
  calendarId: string;
  startedAt: number;
  finishedAt: number;
  resumed: boolean;
  worker: number;
}

const runs: SyncRun[] = [];
const workers = new Set<ChildProcess>();
let workerCount = 0;

const at = (day: number, hour: number) =>
  `2026-06-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00Z`;
const timed = (summary: string, day: number, hour = 9) => ({
  summary,
  start: { dateTime: at(day, hour), timeZone: 'UTC' },
  end: { dateTime: at(day, hour + 1), timeZone: 'UTC' },
});

function startWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const index = ++workerCount;
  let pending = '';
  // Each sync a worker logs, with the worker that ran it.
  const onStdout = (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('calendar mirror synced')) {
        continue;
      }
      const entry = JSON.parse(line) as Omit<SyncRun, 'worker'>;
      runs.push({
        calendarId: entry.calendarId,
        startedAt: entry.startedAt,
        finishedAt: entry.finishedAt,
        resumed: entry.resumed,
        worker: index,
      });
    }
  };
  return spawnWorker({ ...emulator.env, DATABASE_URL: db.url, ...env }, workers, onStdout);
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function calendarIdOf(externalId: string): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM calendars WHERE external_id = $1', [
    externalId,
  ]);
  expect(rows, `calendar ${externalId}`).toHaveLength(1);
  return (rows[0] as { id: string }).id;
}

/** Upstream's live events of a calendar (cancelled single events are not mirrored). */
function upstreamIds(externalId: string): string[] {
  return emulator.admin
    .events(externalId)
    .filter((event) => event.status !== 'cancelled' || event.recurringEventId !== undefined)
    .map((event) => String(event.id))
    .sort();
}

async function mirroredIds(calendarId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ event_id: string }>(
    'SELECT event_id FROM mirror_events WHERE calendar_id = $1 ORDER BY event_id',
    [calendarId],
  );
  return rows.map((row) => row.event_id).sort();
}

async function summaries(calendarId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ summary: string }>(
    'SELECT summary FROM mirror_events WHERE calendar_id = $1',
    [calendarId],
  );
  return rows.map((row) => row.summary);
}

async function addUpstream(email: string, summary: string): Promise<void> {
  const response = await emulator.editDirectly(email, 'POST', '', timed(summary, 10));
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  emulator = await startTestEmulator(
    { clientId: 'mirror-client', clientSecret: 'mirror-secret' },
    {
      accounts: [
        { email: ANN, events: [timed('Planning', 1), timed('Review', 2), timed('Café', 3)] },
        {
          email: BOB,
          events: Array.from({ length: BIG_EVENTS }, (_, i) => ({
            ...timed(`Big event ${i + 1}`, (i % 28) + 1, i % 20),
            description: `Number ${i + 1}`,
          })),
        },
      ],
    },
  );
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: TENANT, name: 'Mirror' } });
  const { connections, providers } = emulatorGoogleProviders(
    emulator,
    { clientId: 'mirror-client', clientSecret: 'mirror-secret' },
    db,
    log,
  );
  google = new GoogleConnections(
    providers,
    connections,
    new TenancyRepository(db.prisma),
    log,
    () => {},
    new ApiKeyRepository(db.prisma),
  );
  boss = await startBoss({ databaseUrl: db.url, role: 'producer' });
  await createMirrorQueue(boss);
  jobs = new MirrorJobs(boss);
}, 60_000);

afterEach(async () => {
  await Promise.all([...workers].map((child) => kill9(child)));
  emulator.admin.clearFaults();
});

afterAll(async () => {
  await boss?.stop({ graceful: false });
  await db?.close();
  await emulator?.close();
});

describe('mirror sync jobs', () => {
  it('a worker gives a newly connected calendar its first sync, and syncs an upstream change when asked', async () => {
    await google.connectOAuth(
      TENANT,
      { email: ANN, refreshToken: emulator.refreshToken(ANN) },
      { access: 'read', keyIds: [] },
    );
    const calendarId = await calendarIdOf(ANN);
    await startWorker();
    await until(async () => (await mirroredIds(calendarId)).length === 3, 30_000);
    expect(await mirroredIds(calendarId)).toEqual(upstreamIds(ANN));
    const { rows } = await db.pool.query(
      'SELECT status, sync_token IS NOT NULL AS synced FROM mirror_sync_state WHERE calendar_id = $1',
      [calendarId],
    );
    expect(rows).toEqual([{ status: 'ok', synced: true }]);

    await addUpstream(ANN, 'Added upstream');
    expect(await jobs.enqueue(TENANT, calendarId, 'manual')).toBe(true);
    await until(async () => (await summaries(calendarId)).includes('Added upstream'), 30_000);
    expect(await mirroredIds(calendarId)).toEqual(upstreamIds(ANN));
  }, 90_000);

  it('two workers never sync one calendar at once, and every enqueue is followed by a sync', async () => {
    const calendarId = await calendarIdOf(ANN);
    // Each page takes a while, so a second concurrent sync would overlap visibly.
    emulator.admin.setLatency({ ms: 150, match: { op: 'events.list' } });
    await Promise.all([startWorker(), startWorker()]);
    const from = runs.length;
    const enqueuedAt: number[] = [];
    for (let i = 0; i < 15; i += 1) {
      await addUpstream(ANN, `Race ${i}`);
      enqueuedAt.push(Date.now());
      await jobs.enqueue(TENANT, calendarId, 'push');
      await new Promise((resolve) => setTimeout(resolve, 40 + (i % 4) * 60));
    }
    const last = enqueuedAt.at(-1) as number;
    await until(
      () => runs.slice(from).some((run) => run.calendarId === calendarId && run.startedAt >= last),
      60_000,
    );
    const mine = runs
      .slice(from)
      .filter((run) => run.calendarId === calendarId)
      .sort((a, b) => a.startedAt - b.startedAt);
    // Coalesced: fewer syncs than enqueues, but more than one.
    expect(mine.length).toBeGreaterThan(1);
    expect(mine.length).toBeLessThanOrEqual(enqueuedAt.length);
    for (let i = 1; i < mine.length; i += 1) {
      const before = mine[i - 1] as SyncRun;
      const run = mine[i] as SyncRun;
      expect(run.startedAt, `sync ${i} started before sync ${i - 1} finished`).toBeGreaterThanOrEqual(
        before.finishedAt,
      );
    }
    for (const time of enqueuedAt) {
      expect(mine.some((run) => run.startedAt >= time)).toBe(true);
    }
    const names = await summaries(calendarId);
    for (let i = 0; i < 15; i += 1) {
      expect(names).toContain(`Race ${i}`);
    }
    expect(await mirroredIds(calendarId)).toEqual(upstreamIds(ANN));
  }, 120_000);

  it('a worker killed with SIGKILL mid-sync leaves the sync to another, which ends with exactly upstream', async () => {
    await google.connectOAuth(
      TENANT,
      { email: BOB, refreshToken: emulator.refreshToken(BOB) },
      { access: 'read', keyIds: [] },
    );
    const calendarId = await calendarIdOf(BOB);
    emulator.admin.setLatency({ ms: 30, match: { op: 'events.list', calendarId: BOB } });
    const first = await startWorker({ MIRROR_SYNC_PAGE_SIZE: '20' });
    // Killed once part of the calendar is stored and the rest is still to come.
    await until(async () => (await mirroredIds(calendarId)).length >= 200, 60_000);
    await kill9(first);
    const partial = (await mirroredIds(calendarId)).length;
    expect(partial).toBeLessThan(BIG_EVENTS);
    const state = await db.pool.query('SELECT page_token FROM mirror_sync_state WHERE calendar_id = $1', [
      calendarId,
    ]);
    expect(state.rows[0]?.page_token).not.toBeNull();

    const from = runs.length;
    await startWorker({ MIRROR_SYNC_PAGE_SIZE: '20' });
    await until(() => runs.slice(from).some((run) => run.calendarId === calendarId), 90_000);
    const resumedRun = runs.slice(from).find((run) => run.calendarId === calendarId);
    expect(resumedRun?.resumed).toBe(true);
    expect(await mirroredIds(calendarId)).toEqual(upstreamIds(BOB));
    expect(await mirroredIds(calendarId)).toHaveLength(BIG_EVENTS);
    // The page the killed worker may have stored and the new one asked again adds no feed row.
    const feed = await db.pool.query<{ event_id: string; n: number }>(
      `SELECT event_id, count(*)::int AS n FROM mirror_changes WHERE calendar_id = $1 GROUP BY event_id`,
      [calendarId],
    );
    expect(feed.rows).toHaveLength(BIG_EVENTS);
    expect(feed.rows.every((row) => row.n === 1)).toBe(true);
  }, 180_000);

  it("an account whose authorization Google revoked is marked needs_reauth, the tenant's cached keys are dropped on every gateway, and its job is not retried", async () => {
    const calendarId = await calendarIdOf(BOB);
    expect(emulator.admin.revokeTokens({ email: BOB })).toBeGreaterThan(0);
    // What the gateways hear on Redis: the worker keeps no key cache, so it tells them to drop theirs.
    const listener = connectRedis(redisUrl(), { name: 'key-changes-listener' });
    const dropped: { from?: string; tenantId?: string }[] = [];
    listener.on('message', (_channel: string, payload: string) => dropped.push(JSON.parse(payload)));
    await new Promise((resolve) => listener.once('ready', resolve));
    await listener.subscribe('calgate:key-changes');
    await startWorker({ REDIS_URL: redisUrl() });
    const since = (await db.pool.query<{ at: Date }>('SELECT now() AS at')).rows[0]?.at;
    await jobs.enqueue(TENANT, calendarId, 'manual');
    await until(async () => {
      const { rows } = await db.pool.query(
        `SELECT s.status, s.error, n.status AS connection FROM mirror_sync_state s
         JOIN calendars c ON c.id = s.calendar_id JOIN connections n ON n.id = c.connection_id
         WHERE s.calendar_id = $1`,
        [calendarId],
      );
      return rows[0]?.connection === 'needs_reauth' && rows[0]?.status === 'error';
    }, 30_000);
    await until(async () => dropped.some((drop) => drop.tenantId === TENANT), 10_000);
    listener.disconnect();
    expect(dropped.filter((drop) => drop.from?.startsWith('worker-'))).toEqual(
      dropped.filter((drop) => drop.from?.startsWith('worker-') && drop.tenantId === TENANT),
    );
    // Permanent: the job completed instead of waiting for a retry, and the mirror kept its rows.
    // (The killed worker's job of the test before is retried once its heartbeat lapses, and
    // completes the same way; on a loaded machine that takes a while.)
    await until(async () => {
      const { rows } = await db.pool.query(
        `SELECT state FROM pgboss.job WHERE name = $1 AND singleton_key = $2 AND state <> 'completed'`,
        ['calgate-mirror-sync', calendarId],
      );
      return rows.length === 0;
    }, 30_000);
    const mine = await db.pool.query<{ retry_count: number }>(
      'SELECT retry_count FROM pgboss.job WHERE name = $1 AND singleton_key = $2 AND created_on >= $3',
      ['calgate-mirror-sync', calendarId, since],
    );
    expect(mine.rows.every((row) => row.retry_count === 0)).toBe(true);
    expect(await mirroredIds(calendarId)).toHaveLength(BIG_EVENTS);
  }, 60_000);

  it('a recently read calendar is polled; disconnecting the account deletes its mirror', async () => {
    const calendarId = await calendarIdOf(ANN);
    // Read a while ago, synced longer ago than the poll interval: the planner's next pass takes it.
    await touchRead(db, calendarId);
    await db.pool.query(
      `UPDATE mirror_sync_state SET synced_at = now() - interval '10 minutes' WHERE calendar_id = $1`,
      [calendarId],
    );
    await addUpstream(ANN, 'Found by polling');
    await startWorker({ MIRROR_POLL_INTERVAL: '30' });
    await until(async () => (await summaries(calendarId)).includes('Found by polling'), 30_000);

    const { rows } = await db.pool.query<{ id: string }>(
      'SELECT connection_id AS id FROM calendars WHERE id = $1',
      [calendarId],
    );
    await google.disconnect(TENANT, (rows[0] as { id: string }).id);
    for (const table of ['mirror_events', 'mirror_sync_state', 'mirror_changes', 'mirror_reads']) {
      const left = await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE calendar_id = $1`, [
        calendarId,
      ]);
      expect(left.rows[0], table).toEqual({ n: 0 });
    }
    // A sync asked for afterwards finds nothing to sync and leaves nothing behind.
    await jobs.enqueue(TENANT, calendarId, 'push');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await db.pool.query(
      'SELECT count(*)::int AS n FROM mirror_sync_state WHERE calendar_id = $1',
      [calendarId],
    );
    expect(after.rows[0]).toEqual({ n: 0 });
  }, 90_000);
});
