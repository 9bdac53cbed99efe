import { CalgateError } from '@calgate/core';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type MirrorChange,
  type MirrorEventInput,
  MirrorFeedCursors,
  MirrorRepository,
} from '../src/index.ts';
import { mirrorEvent } from './mirror-events.ts';
import { failure } from './support.ts';

let db: TestDatabase;
let mirror: MirrorRepository;
let cursors: MirrorFeedCursors;
/** A second pool: another worker process as far as Postgres can tell. */
let otherPool: pg.Pool;
let other: MirrorFeedCursors;

const TENANT = 'tnt_feed';
const CALENDAR = 'cal_feed';
let version = 0;

const event = (eventId: string): MirrorEventInput =>
  mirrorEvent(eventId, { etag: `"${eventId}-${++version}"` });

/** Changes these events in the mirror (a new etag each time): one feed row each. */
async function change(...ids: string[]): Promise<void> {
  await mirror.applyPage(CALENDAR, TENANT, ids.map(event), { nextSyncToken: `sync-${version}` });
}

/** A consumer that records what it was handed. */
function recorder(log: string[]) {
  return async (changes: readonly MirrorChange[]) => {
    log.push(...changes.map((c) => c.eventId));
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: TENANT, name: 'Feed' } });
  await db.prisma.connection.create({
    data: {
      id: 'con_feed',
      tenantId: TENANT,
      provider: 'google',
      accountEmail: 'feed@example.com',
      auth: 'oauth',
    },
  });
  await db.prisma.calendar.create({
    data: {
      id: CALENDAR,
      tenantId: TENANT,
      connectionId: 'con_feed',
      externalId: 'feed@example.com',
      summary: 'Feed',
      timeZone: 'UTC',
    },
  });
  mirror = new MirrorRepository(db);
  cursors = new MirrorFeedCursors(db);
  otherPool = new pg.Pool({ connectionString: db.url, max: 2 });
  other = new MirrorFeedCursors({ pool: otherPool });
});

afterAll(async () => {
  await otherPool?.end();
  await db?.close();
});

describe('mirror feed cursors', () => {
  it("registers at the feed's start or after its newest change, and keeps a cursor on later registrations", async () => {
    await change('a1', 'a2');
    const newest = (await mirror.changesSince(0n, 10_000)).cursor;
    expect(await cursors.register('from-start', 'beginning')).toBe(0n);
    expect(await cursors.register('from-now', 'now')).toBe(newest);
    expect(await cursors.pending('from-start')).toBe(true);
    expect(await cursors.pending('from-now')).toBe(false);

    const seen: string[] = [];
    expect(await cursors.consume('from-start', recorder(seen))).toMatchObject({ kind: 'handled', count: 2 });
    expect(seen).toEqual(['a1', 'a2']);
    // Registering again (a restart) neither rewinds nor jumps.
    await change('a3');
    expect(await cursors.register('from-start', 'now')).toBe(newest);
    expect(await cursors.register('from-start', 'beginning')).toBe(newest);
    await cursors.consume('from-start', recorder(seen));
    expect(seen).toEqual(['a1', 'a2', 'a3']);
  });

  it('hands changes in commit order, a batch at a time, and is idle once caught up', async () => {
    const start = await cursors.register('batches', 'now');
    await change('b1', 'b2', 'b3');
    await change('b4');
    await change('b5', 'b6');
    const seen: string[] = [];
    const turns = [];
    for (;;) {
      const turn = await cursors.consume('batches', recorder(seen), 4);
      turns.push(turn.kind === 'handled' ? turn.count : turn.kind);
      if (turn.kind !== 'handled') {
        expect(turn).toEqual({ kind: 'idle', at: start + 6n });
        break;
      }
    }
    expect(turns).toEqual([4, 2, 'idle']);
    expect(seen).toEqual(['b1', 'b2', 'b3', 'b4', 'b5', 'b6']);
    expect(await cursors.position('batches')).toBe(start + 6n);
    expect(await cursors.pending('batches')).toBe(false);
  });

  it('a handler that fails leaves the cursor, and the next turn gets the same changes', async () => {
    const start = await cursors.register('fails', 'now');
    await change('c1', 'c2');
    const broken = await failure(
      cursors.consume('fails', async () => {
        throw new CalgateError('unavailable', 'Planning failed.');
      }),
    );
    expect(broken.message).toBe('Planning failed.');
    expect(await cursors.position('fails')).toBe(start);
    const seen: string[] = [];
    expect(await cursors.consume('fails', recorder(seen))).toMatchObject({ kind: 'handled', count: 2 });
    expect(seen).toEqual(['c1', 'c2']);
  });

  it("two workers never hold one consumer's turn at once; what commits meanwhile goes to the next turn", async () => {
    await cursors.register('shared', 'now');
    await change('d1');
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first: string[] = [];
    let entered: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const slow = cursors.consume('shared', async (changes) => {
      await recorder(first)(changes);
      entered();
      await held;
    });
    await inside;
    // The other worker skips instead of waiting or handling d1 too; a change arriving now is
    // not part of the turn in progress.
    const second: string[] = [];
    expect(await other.consume('shared', recorder(second))).toEqual({ kind: 'busy' });
    await change('d2');
    expect(await other.consume('shared', recorder(second))).toEqual({ kind: 'busy' });
    release();
    expect(await slow).toMatchObject({ kind: 'handled', count: 1 });
    expect(await other.consume('shared', recorder(second))).toMatchObject({ kind: 'handled', count: 1 });
    expect(first).toEqual(['d1']);
    expect(second).toEqual(['d2']);
  });

  it('a worker whose connection dies mid-turn loses nothing: the batch goes to the next turn', async () => {
    const start = await other.register('killed', 'now');
    await change('e1', 'e2');
    const turn = other.consume('killed', async () => {
      // The process holding the turn is gone: Postgres ends its session and rolls it back.
      await db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE pid <> pg_backend_pid() AND state LIKE 'idle in transaction%' AND datname = current_database()`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    await expect(turn).rejects.toThrow();
    expect(await cursors.position('killed')).toBe(start);
    const seen: string[] = [];
    expect(await cursors.consume('killed', recorder(seen))).toMatchObject({ kind: 'handled', count: 2 });
    expect(seen).toEqual(['e1', 'e2']);
  });

  it('prunes only what every consumer has handled and is older than the time kept', async () => {
    await cursors.register('pruning', 'now');
    await change('p1', 'p2', 'p3');
    const oldest = async () =>
      (await db.pool.query('SELECT min(last_id) AS id FROM mirror_feed_cursors')).rows[0].id;
    const ids = async () =>
      (await db.pool.query('SELECT id FROM mirror_changes ORDER BY id')).rows.map((row) => BigInt(row.id));
    // Kept for a week: nothing is old enough yet.
    expect(await cursors.prune(7 * 86_400_000)).toBe(0);
    const before = await ids();
    const floor = BigInt(await oldest());
    const pruned = await cursors.prune(0);
    expect(pruned).toBe(before.filter((id) => id <= floor).length);
    expect(await ids()).toEqual(before.filter((id) => id > floor));
    // What 'pruning' has not handled yet is still there for it.
    const seen: string[] = [];
    await cursors.consume('pruning', recorder(seen));
    expect(seen).toEqual(['p1', 'p2', 'p3']);
  });

  it('refuses consumers never registered and names that are not plain', async () => {
    const missing = await failure(cursors.consume('never-registered', recorder([])));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toContain("'never-registered'");
    const bad = await failure(cursors.register("x'; DROP TABLE mirror_changes", 'now'));
    expect(bad.code).toBe('invalid_argument');
  });
});
