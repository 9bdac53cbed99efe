import { pruneAuditLog } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startWorker } from '../src/index.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const silent = pino({ level: 'silent' });

async function insertEntries(db: TestDatabase, ageDays: number[]): Promise<void> {
  await db.pool.query(
    `INSERT INTO audit_log (tenant_id, tool, outcome, latency_ms, created_at)
     SELECT 'tnt_test', 'list_events', 'ok', 3, $1::timestamptz - make_interval(secs => age * 86400)
     FROM unnest($2::float8[]) AS age`,
    [NOW, ageDays],
  );
}

async function remainingAges(db: TestDatabase): Promise<number[]> {
  const { rows } = await db.pool.query<{ age: number }>(
    `SELECT round(extract(epoch FROM ($1::timestamptz - created_at)) / 86400, 3)::float8 AS age
     FROM audit_log ORDER BY created_at DESC`,
    [NOW],
  );
  return rows.map((row) => row.age);
}

describe('audit retention', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO tenants (id, name) VALUES ('tnt_test', 'Test tenant')`);
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await db.pool.query('TRUNCATE audit_log');
  });

  it('deletes entries older than the retention period and keeps newer ones', async () => {
    await insertEntries(db, [0, 1, 89.9, 90.1, 91, 400]);
    const worker = await startWorker({
      db,
      log: silent,
      auditRetentionDays: 90,
      auditPruneIntervalMs: 60 * 60 * 1000,
      now: () => NOW,
    });
    try {
      // The first run starts at once; joining it and running again are both safe.
      await worker.pruneAuditLog();
      expect(await worker.pruneAuditLog()).toBe(0);
      expect(await remainingAges(db)).toEqual([0, 1, 89.9]);
      expect(worker.jobs()).toEqual([
        expect.objectContaining({ name: 'audit-retention', running: false, lastError: null }),
        expect.objectContaining({ name: 'oauth-upkeep', lastError: null }),
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('works through a backlog larger than one batch', async () => {
    const old = Array.from({ length: 25 }, (_, i) => 100 + i);
    await insertEntries(db, [...old, 5]);
    const deleted = await pruneAuditLog(db, { before: new Date(NOW.getTime() - 90 * DAY_MS), batchSize: 7 });
    expect(deleted).toBe(25);
    expect(await remainingAges(db)).toEqual([5]);
  });

  it('stops between batches once aborted', async () => {
    await insertEntries(
      db,
      Array.from({ length: 10 }, (_, i) => 200 + i),
    );
    const controller = new AbortController();
    controller.abort();
    const deleted = await pruneAuditLog(db, {
      before: NOW,
      batchSize: 3,
      signal: controller.signal,
    });
    expect(deleted).toBe(0);
    expect(await remainingAges(db)).toHaveLength(10);
  });

  it('records a failing run and keeps the schedule alive', async () => {
    const broken = await createTestDatabase();
    await broken.close();
    const worker = await startWorker({ db: broken, log: silent, auditRetentionDays: 90, now: () => NOW });
    try {
      await expect(worker.pruneAuditLog()).rejects.toThrow();
      const [status] = worker.jobs();
      expect(status?.lastError).toEqual(expect.any(String));
      expect(status?.running).toBe(false);
    } finally {
      await worker.stop();
    }
  });
});
