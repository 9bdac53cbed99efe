import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase } from '@calgate/store';
import type { TestDatabase } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import { type RestartableServer, restartablePostgres } from './restartable-servers.ts';

interface LogLine {
  level: number;
  msg: string;
  dependency?: string;
}

function logLines(gw: TestGateway): LogLine[] {
  return gw.logs.flatMap((chunk) =>
    chunk
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine),
  );
}

/** Files waiting in the spool, in any database's subfolder. */
async function spoolFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

describe('the audit log through a Postgres restart (real gateway, SDK client)', () => {
  let postgres: RestartableServer;
  let db: TestDatabase;
  let spoolDir: string;
  // Keys stay cached across the restart, so calls go on while Postgres is away.
  const env = { ...HIGH_RATE_LIMITS, KEY_CACHE_TTL_MS: '5000' };

  beforeAll(async () => {
    postgres = await restartablePostgres();
    db = { ...openDatabase({ url: postgres.url }), url: postgres.url };
    await migrate(db.pool);
    spoolDir = await mkdtemp(join(tmpdir(), 'calgate-audit-spool-'));
  });
  afterAll(async () => {
    await db?.close();
    await postgres?.destroy();
    await rm(spoolDir, { recursive: true, force: true });
  });

  async function auditRows(tenantId: string): Promise<number> {
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1', [
      tenantId,
    ]);
    return rows[0].n;
  }

  it('records every call made while Postgres restarts', async () => {
    const gw = await startTestGateway({ ...env, AUDIT_SPOOL_DIR: spoolDir }, { db });
    let client: Client | undefined;
    try {
      const owner = await gw.seedTenant('Owner');
      const calendar = await gw.localCalendar(owner.tenantId, 'Work');
      await gw.grant(owner.tenantId, owner.keyId, calendar, { read: true, write: false });
      client = await connectClient(gw.mcpUrl, owner.secret);
      const session = client;

      const total = 240;
      let issued = 0;
      let answered = 0;
      let answeredWhileDown = 0;
      let down = false;
      const restart = (async () => {
        while (answered < 80) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        down = true;
        await postgres.stop();
        await new Promise((resolve) => setTimeout(resolve, 400));
        await postgres.start();
        down = false;
      })();
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          while (issued < total) {
            issued += 1;
            const name = issued % 3 === 0 ? 'list_events' : 'get_current_time';
            // Every call gets an answer (list_events may say to try again); each is one audit row.
            await session.callTool({ name, arguments: {} });
            answered += 1;
            if (down) {
              answeredWhileDown += 1;
            }
          }
        }),
      );
      await restart;
      await gw.runtime.deps.audit.flush();

      expect(answered).toBe(total);
      expect(answeredWhileDown).toBeGreaterThan(0);
      expect(await auditRows(owner.tenantId)).toBe(total);
      const { rows } = await db.pool.query(
        'SELECT count(DISTINCT entry_id)::int AS n FROM audit_log WHERE tenant_id = $1',
        [owner.tenantId],
      );
      expect(rows[0].n).toBe(total);
      // The writer did meet the outage, said so once, and nothing had to go to disk.
      const postgresLines = logLines(gw).filter((line) => line.dependency === 'postgres');
      expect(postgresLines.map((line) => line.level)).toEqual([40, 30]);
      expect(await spoolFiles(spoolDir)).toEqual([]);
    } finally {
      await client?.close();
      await gw.stop();
    }
  });

  it('spools rows still unwritten at shutdown and writes them at the next start', async () => {
    const first = await startTestGateway({ ...env, AUDIT_SPOOL_DIR: spoolDir }, { db });
    const owner = await first.seedTenant('Owner');
    const client = await connectClient(first.mcpUrl, owner.secret);
    await client.callTool({ name: 'get_current_time', arguments: {} });
    await first.runtime.deps.audit.flush();

    await postgres.stop();
    const calls = 25;
    for (let i = 0; i < calls; i++) {
      await client.callTool({ name: 'get_current_time', arguments: {} });
    }
    await client.close();
    await first.stop();
    expect((await spoolFiles(spoolDir)).some((name) => name.endsWith('.jsonl'))).toBe(true);
    expect(logLines(first).some((line) => line.msg.startsWith('audit rows are spooled to disk'))).toBe(true);

    await postgres.start();
    const second = await startTestGateway({ ...env, AUDIT_SPOOL_DIR: spoolDir }, { db });
    try {
      await second.runtime.deps.audit.flush();
      expect(await auditRows(owner.tenantId)).toBe(1 + calls);
      expect(await spoolFiles(spoolDir)).toEqual([]);
      expect(logLines(second).some((line) => line.msg === 'spooled audit rows written to Postgres')).toBe(
        true,
      );
    } finally {
      await second.stop();
    }
  });
});
