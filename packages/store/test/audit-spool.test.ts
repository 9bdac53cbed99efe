import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, cuttableRelay, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditRecord,
  type BufferedAuditLogOptions,
  type Database,
  openDatabase,
  PostgresAuditLog,
} from '../src/index.ts';

type AuditSpoolEvent = Parameters<NonNullable<BufferedAuditLogOptions['onSpool']>>[0];

function call(tenantId: string, n: number, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    tenantId,
    keyId: 'key_audit',
    requestId: `req_${n}`,
    tool: 'list_events',
    calendarIds: ['cal_a'],
    outcome: 'ok',
    errorCode: null,
    latencyMs: n,
    at: new Date(),
    ...overrides,
  };
}

async function spoolLines(dir: string): Promise<number> {
  const names = (await readdir(dir).catch(() => [])).filter((name) => name.endsWith('.jsonl'));
  let lines = 0;
  for (const name of names) {
    lines += (await readFile(join(dir, name), 'utf8')).split('\n').filter((line) => line !== '').length;
  }
  return lines;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const FAST = { flushIntervalMs: 10, maxBatch: 50, retryBaseMs: 20, retryMaxMs: 200 };

describe('the audit log keeps every row through a Postgres outage', () => {
  let db: TestDatabase;
  let relay: Awaited<ReturnType<typeof cuttableRelay>>;
  let viaRelay: Database;
  let spoolDir: string;
  let tenant = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    relay = await cuttableRelay(db.url);
    viaRelay = openDatabase({ url: relay.url, max: 4 });
  });
  afterAll(async () => {
    await viaRelay.close();
    await relay.cut();
    await db.close();
  });

  async function newTenant(): Promise<string> {
    tenant += 1;
    const id = `tnt_audit${tenant}`;
    await db.pool.query('INSERT INTO tenants (id, name) VALUES ($1, $2)', [id, 'Audit']);
    spoolDir = await mkdtemp(join(tmpdir(), 'calgate-audit-spool-'));
    return id;
  }

  async function stored(tenantId: string): Promise<{ rows: number; ids: number }> {
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS rows, count(DISTINCT entry_id)::int AS ids FROM audit_log WHERE tenant_id = $1',
      [tenantId],
    );
    return rows[0];
  }

  it('retries a failed batch with backoff until Postgres answers, writing each row once', async () => {
    const tenantId = await newTenant();
    const failures: unknown[] = [];
    let successes = 0;
    const audit = new PostgresAuditLog(viaRelay, {
      ...FAST,
      spoolDir,
      health: { failed: (error) => failures.push(error), succeeded: () => (successes += 1) },
    });
    for (let n = 0; n < 100; n++) {
      audit.record(call(tenantId, n));
    }
    await audit.flush();
    await relay.cut();
    for (let n = 100; n < 300; n++) {
      audit.record(call(tenantId, n));
    }
    await until(async () => failures.length >= 3, 'three failed attempts');
    await relay.restore();
    await until(async () => (await stored(tenantId)).rows === 300, 'all 300 rows');
    await audit.close();
    expect(await stored(tenantId)).toEqual({ rows: 300, ids: 300 });
    // Retried batches keep their order: ids follow the calls.
    const { rows } = await db.pool.query(
      'SELECT latency_ms FROM audit_log WHERE tenant_id = $1 ORDER BY id',
      [tenantId],
    );
    expect(rows.map((row) => row.latency_ms)).toEqual(Array.from({ length: 300 }, (_, n) => n));
    expect(successes).toBeGreaterThan(0);
    // Nothing needed the disk: the buffer held every row.
    expect(await spoolLines(spoolDir)).toBe(0);
  });

  it('spills rows beyond the buffer to disk and replays them once, also after a crash mid-replay', async () => {
    const tenantId = await newTenant();
    const events: AuditSpoolEvent[] = [];
    const dropped: number[] = [];
    await relay.cut();
    const audit = new PostgresAuditLog(viaRelay, {
      ...FAST,
      bufferRows: 100,
      spoolDir,
      onSpool: (event) => events.push(event),
      onError: (_error, n) => dropped.push(n),
    });
    for (let n = 0; n < 250; n++) {
      audit.record(call(tenantId, n));
    }
    await until(async () => (await spoolLines(spoolDir)) === 150, '150 rows in the spool');
    expect(events[0]).toMatchObject({ kind: 'spilling', dir: spoolDir });
    const segments = (await readdir(spoolDir)).filter((name) => name.endsWith('.jsonl'));
    const text = await readFile(join(spoolDir, segments[0] ?? ''), 'utf8');
    const row = JSON.parse(text.split('\n')[0] ?? '{}');
    expect(Object.keys(row).sort()).toEqual(
      [
        'at',
        'calendarIds',
        'entryId',
        'errorCode',
        'keyId',
        'latencyMs',
        'outcome',
        'requestId',
        'tenantId',
        'tool',
      ].sort(),
    );
    // Keep copies, as if the process had crashed after the replay's inserts but before deleting.
    const saved = await mkdtemp(join(tmpdir(), 'calgate-audit-saved-'));
    for (const name of segments) {
      await copyFile(join(spoolDir, name), join(saved, name));
    }

    await relay.restore();
    await audit.flush();
    expect(await stored(tenantId)).toEqual({ rows: 250, ids: 250 });
    expect(events.at(-1)).toMatchObject({ kind: 'replayed', rows: 150, unreadable: 0 });
    expect(await readdir(spoolDir)).toEqual([]);
    await audit.close();

    // The next start finds the segments again, plus a line a crash cut short: nothing twice.
    for (const name of segments) {
      await copyFile(join(saved, name), join(spoolDir, name));
    }
    const torn = join(spoolDir, segments[0] ?? '');
    await writeFile(torn, `${await readFile(torn, 'utf8')}{"entryId":"cut sh`);
    const unreadable: number[] = [];
    const restarted = new PostgresAuditLog(db, { ...FAST, spoolDir, onError: (_e, n) => unreadable.push(n) });
    await restarted.flush();
    expect(await stored(tenantId)).toEqual({ rows: 250, ids: 250 });
    expect(unreadable).toEqual([1]);
    expect(await readdir(spoolDir)).toEqual([]);
    await restarted.close();
    expect(dropped).toEqual([]);
    await rm(saved, { recursive: true, force: true });
  });

  it('spools what is unwritten at shutdown; the next start writes it', async () => {
    const tenantId = await newTenant();
    await relay.cut();
    const audit = new PostgresAuditLog(viaRelay, { ...FAST, spoolDir });
    for (let n = 0; n < 40; n++) {
      // Half of them with a client address: the spool keeps it, and its absence, as recorded.
      audit.record(call(tenantId, n, n % 2 === 0 ? { clientAddress: '203.0.113.7' } : {}));
    }
    await audit.close();
    expect(await spoolLines(spoolDir)).toBe(40);
    expect(await stored(tenantId)).toEqual({ rows: 0, ids: 0 });
    await relay.restore();

    const next = new PostgresAuditLog(db, { ...FAST, spoolDir });
    await next.flush();
    expect(await stored(tenantId)).toEqual({ rows: 40, ids: 40 });
    const { rows: addresses } = await db.pool.query(
      'SELECT client_address, count(*)::int AS n FROM audit_log WHERE tenant_id = $1 GROUP BY 1 ORDER BY 1',
      [tenantId],
    );
    expect(addresses).toEqual([
      { client_address: '203.0.113.7', n: 20 },
      { client_address: null, n: 20 },
    ]);
    await next.close();
  });

  it('drops and reports only a row Postgres rejects, writing the rest of its batch', async () => {
    const tenantId = await newTenant();
    const rejected: { error: unknown; n: number }[] = [];
    const audit = new PostgresAuditLog(db, {
      ...FAST,
      spoolDir,
      onError: (error, n) => rejected.push({ error, n }),
    });
    audit.record(call(tenantId, 1));
    audit.record(call(tenantId, 2, { latencyMs: 2 ** 31 }));
    audit.record(call(tenantId, 3));
    await audit.close();
    expect(await stored(tenantId)).toEqual({ rows: 2, ids: 2 });
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.n).toBe(1);
    expect(rejected[0]?.error).toMatchObject({ code: '22003' });
  });
});

describe('the audit log under steady traffic', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO tenants (id, name) VALUES ('tnt_steady', 'Steady')`);
  });
  afterAll(async () => {
    await db.close();
  });

  it('gathers rows for the flush interval between inserts; a flush or a full batch does not wait', async () => {
    let inserts = 0;
    const counting = {
      ...db,
      pool: {
        query: (...args: Parameters<Database['pool']['query']>) => {
          inserts += 1;
          return (db.pool.query as (...a: unknown[]) => unknown)(...args);
        },
      },
    } as unknown as Database;
    const audit = new PostgresAuditLog(counting, { flushIntervalMs: 100, maxBatch: 200 });
    // ~600 ms of a call every 2 ms: without gathering, each round trip would carry a few rows.
    const started = Date.now();
    let n = 0;
    while (Date.now() - started < 600) {
      audit.record(call('tnt_steady', n));
      n += 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const flushed = Date.now();
    await audit.flush();
    expect(Date.now() - flushed).toBeLessThan(90);
    expect(inserts).toBeLessThanOrEqual(9);
    // A full batch goes at once, whatever the interval.
    const before = inserts;
    for (let i = 0; i < 200; i++) {
      audit.record(call('tnt_steady', n + i));
    }
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(inserts).toBe(before + 1);
    await audit.close();
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS rows, count(DISTINCT latency_ms)::int AS distinct FROM audit_log WHERE tenant_id = 'tnt_steady'`,
    );
    expect(rows[0]).toEqual({ rows: n + 200, distinct: n + 200 });
  });
});
