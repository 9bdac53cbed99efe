/**
 * The mirror's change feed driving prompts relative to calendar events: an event created or moved
 * upstream (the Google emulator), brought into the mirror by a real sync, has its prompt queued
 * through the feed within seconds, with no minute sweep running. Two workers' loops share one
 * cursor without handling a change twice, and a loop stopped or failing mid-turn loses nothing.
 */
import { PROMPT_QUEUE, Scheduling, startBoss } from '@calgate/scheduler';
import {
  ApiKeyRepository,
  type MirrorChange,
  MirrorFeedCursors,
  MirrorRepository,
  type ScheduleRecord,
  SchedulerRepository,
  TenancyRepository,
} from '@calgate/store';
import { createTestDatabase, type TestDatabase, until } from '@calgate/testkit';
import type { ProviderResolver } from '@calgate/tools';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GoogleConnections } from '../src/google/service.ts';
import { googleSyncSources } from '../src/google/sync-sources.ts';
import { type FeedConsumer, type FeedLoop, startFeedConsumer } from '../src/mirror/feed.ts';
import { runMirrorSync } from '../src/mirror/jobs.ts';
import { SyncSources } from '../src/mirror/sources.ts';
import {
  EVENT_SCHEDULES_FEED,
  type EventScheduleDeps,
  eventScheduleFeed,
  planSchedule,
  readsChanged,
} from '../src/scheduler-events.ts';
import { emulatorGoogleProviders, startTestEmulator, type TestEmulator } from './google-fixture.ts';

const TENANT = 'tnt_feed';
const ANN = 'ann@example.com';
const HOUR = 3_600_000;
const OFFSET_MINUTES = -30;

const log = pino({ level: 'silent' });
let db: TestDatabase;
let emulator: TestEmulator;
let boss: PgBoss;
let deps: EventScheduleDeps;
let mirror: MirrorRepository;
let cursors: MirrorFeedCursors;
let sync: () => Promise<void>;
let calendarId: string;
let schedule: ScheduleRecord;
/** A second pool, as a second worker process would have. */
let otherPool: pg.Pool;
const loops: FeedLoop[] = [];

/** An hour-long event `hours` from now, on whole minutes. */
function timed(summary: string, hours: number) {
  const start = Math.ceil((Date.now() + hours * HOUR) / 60_000) * 60_000;
  return {
    start,
    body: {
      summary,
      start: { dateTime: new Date(start).toISOString(), timeZone: 'UTC' },
      end: { dateTime: new Date(start + HOUR).toISOString(), timeZone: 'UTC' },
    },
  };
}

async function createUpstream(summary: string, hours: number): Promise<{ id: string; start: number }> {
  const event = timed(summary, hours);
  const response = await emulator.editDirectly(ANN, 'POST', '', event.body);
  expect(response.status).toBe(200);
  return { id: String(((await response.json()) as { id: string }).id), start: event.start };
}

async function moveUpstream(eventId: string, hours: number): Promise<number> {
  const event = timed('Acme kickoff', hours);
  const response = await emulator.editDirectly(ANN, 'PATCH', `/${encodeURIComponent(eventId)}`, {
    start: event.body.start,
    end: event.body.end,
  });
  expect(response.status).toBe(200);
  return event.start;
}

/** The prompt jobs queued for the schedule, as `eventId@due instant`. */
async function queued(scheduleId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ event_id: string; at: string }>(
    `SELECT data->'event'->>'eventId' AS event_id, data->>'at' AS at FROM pgboss.job
     WHERE name = $1 AND data->>'scheduleId' = $2 ORDER BY 2, 1`,
    [PROMPT_QUEUE, scheduleId],
  );
  return rows.map((row) => `${row.event_id}@${new Date(Number(row.at)).toISOString()}`);
}

const due = (eventId: string, start: number) =>
  `${eventId}@${new Date(start + OFFSET_MINUTES * 60_000).toISOString()}`;

/** The schedules feed, with what each turn was handed recorded (and optionally a twist). */
function recorded(
  seen: bigint[],
  around?: (handle: () => Promise<void>, changes: readonly MirrorChange[]) => Promise<void>,
): FeedConsumer {
  const real = eventScheduleFeed(deps);
  return {
    ...real,
    handle: async (changes, signal) => {
      const handle = () => real.handle(changes, signal);
      await (around === undefined ? handle() : around(handle, changes));
      seen.push(...changes.map((change) => change.id));
    },
  };
}

async function startLoop(consumer: FeedConsumer, pool: pg.Pool = db.pool, pollMs = 100): Promise<FeedLoop> {
  const loop = await startFeedConsumer(consumer, { db: { pool }, log, pollMs });
  loops.push(loop);
  return loop;
}

async function feedIdsAfter(cursor: bigint): Promise<bigint[]> {
  return (await mirror.changesSince(cursor, 5000)).changes.map((change) => change.id);
}

beforeAll(async () => {
  emulator = await startTestEmulator(
    { clientId: 'feed-client', clientSecret: 'feed-secret' },
    { accounts: [{ email: ANN, events: [timed('Dentist', 5).body] }] },
  );
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: TENANT, name: 'Feed' } });
  const {
    box,
    connections,
    providers: googleProviders,
  } = emulatorGoogleProviders(emulator, { clientId: 'feed-client', clientSecret: 'feed-secret' }, db, log);
  const keys = new ApiKeyRepository(db.prisma);
  const { key } = await keys.create(TENANT, { name: 'planner', toolsets: ['calendar', 'scheduler'] });
  await new GoogleConnections(
    googleProviders,
    connections,
    new TenancyRepository(db.prisma),
    log,
    () => {},
    keys,
  ).connectOAuth(
    TENANT,
    { email: ANN, refreshToken: emulator.refreshToken(ANN) },
    { access: 'read', keyIds: [key.id] },
  );
  const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM calendars WHERE external_id = $1', [
    ANN,
  ]);
  calendarId = (rows[0] as { id: string }).id;

  boss = await startBoss({ databaseUrl: db.url, role: 'producer' });
  const repository = new SchedulerRepository(db, box);
  const providers: ProviderResolver = (calendar, tenantId) =>
    googleProviders.forConnection(tenantId, calendar.connectionId, calendar.auth, calendar.accountEmail);
  deps = { db, repository, scheduling: new Scheduling(boss, repository), providers, log };
  mirror = new MirrorRepository(db);
  cursors = new MirrorFeedCursors(db);
  const syncDeps = {
    db,
    mirror,
    sources: new SyncSources([googleSyncSources(googleProviders.setup, connections, () => {})]),
    log,
  };
  sync = () => runMirrorSync(syncDeps, { tenantId: TENANT, calendarId, reason: 'manual' });
  await sync();

  schedule = await repository.schedules.create(TENANT, {
    keyId: key.id,
    prompt: 'Prepare for Acme',
    spec: {
      kind: 'around_events',
      query: 'title:Acme',
      offsetMinutes: OFFSET_MINUTES,
      calendarIds: [calendarId],
    } as unknown as ScheduleRecord['spec'],
    nextRunAt: new Date(Date.now() + 48 * HOUR),
  });
  // Planned once, as the tool does when the schedule is made: nothing matches yet.
  expect(await planSchedule(deps, schedule)).toBe(0);
  otherPool = new pg.Pool({ connectionString: db.url, max: 4 });
}, 60_000);

afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
});

afterAll(async () => {
  await boss?.stop({ graceful: false });
  await otherPool?.end();
  await db?.close();
  await emulator?.close();
});

describe('the change feed and prompts relative to events', () => {
  it('an event created, then moved, upstream is planned through the feed within seconds of its sync', async () => {
    const seen: bigint[] = [];
    await startLoop(recorded(seen));
    const acme = await createUpstream('Acme kickoff', 3);
    const other = await createUpstream('Budget review', 3);
    // Nothing is planned before the mirror has the change: the feed is what moves the planner.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await queued(schedule.id)).toEqual([]);

    await sync();
    const synced = Date.now();
    await until(async () => (await queued(schedule.id)).includes(due(acme.id, acme.start)), 10_000, 50);
    expect(Date.now() - synced).toBeLessThan(5_000);
    expect(await queued(schedule.id)).toEqual([due(acme.id, acme.start)]);
    expect(JSON.stringify(await queued(schedule.id))).not.toContain(other.id);
    // The job is queued before the schedule's next run is written: wait for that too.
    const nextRun = async () =>
      (await deps.repository.schedules.get(TENANT, schedule.id))?.nextRunAt?.getTime();
    await until(async () => (await nextRun()) === acme.start + OFFSET_MINUTES * 60_000, 5_000, 50);
    expect(await nextRun()).toBe(acme.start + OFFSET_MINUTES * 60_000);

    const movedStart = await moveUpstream(acme.id, 4);
    await sync();
    await until(async () => (await queued(schedule.id)).includes(due(acme.id, movedStart)), 10_000, 50);
    // The occurrence at the old time stays queued; the check before delivery drops it.
    expect(await queued(schedule.id)).toEqual([due(acme.id, acme.start), due(acme.id, movedStart)]);
    // The consumer records a batch after handling it, so the job can be queued a moment before.
    await until(async () => seen.length >= 3, 5_000, 20);
    expect(seen.length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('a change re-plans only schedules that may read its calendar', () => {
    const spec = (calendarIds?: string[]) =>
      ({
        ...schedule,
        spec: {
          kind: 'around_events',
          query: 'x',
          offsetMinutes: 0,
          ...(calendarIds ? { calendarIds } : {}),
        },
      }) as unknown as ScheduleRecord;
    const changed = new Map([[TENANT, new Set([calendarId])]]);
    expect(readsChanged(spec([calendarId]), changed)).toBe(true);
    expect(readsChanged(spec(), changed)).toBe(true);
    expect(readsChanged(spec(['primary']), changed)).toBe(true);
    expect(readsChanged(spec(['cal_elsewhere']), changed)).toBe(false);
    expect(readsChanged({ ...spec(), tenantId: 'tnt_other' }, changed)).toBe(false);
  });

  it("two workers' loops share the cursor: every change is handled once, by one of them at a time", async () => {
    const from = (await cursors.position(EVENT_SCHEDULES_FEED)) ?? 0n;
    const seenA: bigint[] = [];
    const seenB: bigint[] = [];
    let inside = 0;
    let overlapped = false;
    // Slow turns, so the other loop's probes land while a turn is in progress.
    const slow = async (handle: () => Promise<void>) => {
      inside += 1;
      overlapped ||= inside > 1;
      await handle();
      await new Promise((resolve) => setTimeout(resolve, 300));
      inside -= 1;
    };
    const a = await startLoop(recorded(seenA, slow), db.pool, 50);
    const b = await startLoop(recorded(seenB, slow), otherPool, 50);
    const made: { id: string; start: number }[] = [];
    for (let i = 0; i < 6; i += 1) {
      made.push(await createUpstream(`Acme round ${i}`, 6 + i));
      await sync();
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const expected = await feedIdsAfter(from);
    expect(expected.length).toBeGreaterThanOrEqual(6);
    await until(() => seenA.length + seenB.length >= expected.length, 20_000, 50);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const all = [...seenA, ...seenB].sort((x, y) => (x < y ? -1 : 1));
    expect(all).toEqual(expected);
    expect(overlapped).toBe(false);
    expect(a.stats.busy + b.stats.busy).toBeGreaterThan(0);
    expect(await cursors.position(EVENT_SCHEDULES_FEED)).toBe(expected.at(-1));
    const jobs = await queued(schedule.id);
    for (const event of made) {
      expect(jobs).toContain(due(event.id, event.start));
    }
  }, 60_000);

  it('a stopped worker resumes from its cursor, and a turn that dies before its commit is handled again', async () => {
    const first = await startLoop(recorded([]));
    await first.stop();
    const stoppedAt = await cursors.position(EVENT_SCHEDULES_FEED);
    const whileDown = await createUpstream('Acme while down', 20);
    await sync();
    expect(await cursors.position(EVENT_SCHEDULES_FEED)).toBe(stoppedAt);
    expect(await cursors.pending(EVENT_SCHEDULES_FEED)).toBe(true);
    expect(await queued(schedule.id)).not.toContain(due(whileDown.id, whileDown.start));
    const missed = await feedIdsAfter(stoppedAt ?? 0n);

    // The restarted worker re-plans, then dies before moving the cursor; the next turn gets the
    // same changes, and planning twice queued the prompt once.
    const seen: bigint[] = [];
    let attempts = 0;
    const restarted = await startLoop(
      recorded(seen, async (handle) => {
        attempts += 1;
        await handle();
        if (attempts === 1) {
          throw new Error('worker died before committing');
        }
      }),
    );
    await until(() => seen.length >= missed.length, 10_000, 50);
    // The turn's handler has seen the changes; its commit (which moves the cursor) follows.
    await until(async () => (await cursors.position(EVENT_SCHEDULES_FEED)) === missed.at(-1), 10_000, 50);
    expect(attempts).toBe(2);
    expect(restarted.stats.failures).toBe(1);
    expect(seen).toEqual(missed);
    expect(await cursors.position(EVENT_SCHEDULES_FEED)).toBe(missed.at(-1));
    const jobs = await queued(schedule.id);
    expect(jobs.filter((job) => job === due(whileDown.id, whileDown.start))).toHaveLength(1);
  }, 60_000);
});
