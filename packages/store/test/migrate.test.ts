import { createTestDatabase } from '@calgate/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations, MigrationError, migrate } from '../src/index.ts';

describe('migrate', () => {
  const opened: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
  });

  it('applies every migration to an empty database, then is a no-op', async () => {
    const db = await createTestDatabase({ migrated: false });
    opened.push(db);
    const all = await loadMigrations();
    expect(all.length).toBeGreaterThan(0);

    const first = await migrate(db.pool);
    expect(first.applied).toEqual(all.map((m) => m.name));
    expect(first.alreadyApplied).toEqual([]);

    const second = await migrate(db.pool);
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toEqual(all.map((m) => m.name));

    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM "_prisma_migrations"');
    expect(rows[0].n).toBe(all.length);
  });

  it('serialises concurrent runners with the advisory lock', async () => {
    const db = await createTestDatabase({ migrated: false });
    opened.push(db);
    const reports = await Promise.all([migrate(db.pool), migrate(db.pool), migrate(db.pool)]);
    const appliedCounts = reports.map((r) => r.applied.length).sort();
    const total = (await loadMigrations()).length;
    expect(appliedCounts).toEqual([0, 0, total]);
  });

  it('refuses a migration that changed after it was applied', async () => {
    const db = await createTestDatabase();
    opened.push(db);
    const all = await loadMigrations();
    const tampered = all.map((m, i) => (i === 0 ? { ...m, checksum: 'f'.repeat(64) } : m));
    await expect(migrate(db.pool, tampered)).rejects.toThrow(MigrationError);
    await expect(migrate(db.pool, tampered)).rejects.toThrow(/changed after it was applied/);
  });

  it('refuses a database that is ahead of this build', async () => {
    const db = await createTestDatabase();
    opened.push(db);
    await expect(migrate(db.pool, [])).rejects.toThrow(/does not know/);
  });

  it('rolls back a failing migration completely', async () => {
    const db = await createTestDatabase();
    opened.push(db);
    const all = await loadMigrations();
    const broken = {
      name: '29990101000000_broken',
      sql: 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;',
      checksum: 'b'.repeat(64),
    };
    await expect(migrate(db.pool, [...all, broken])).rejects.toThrow(/29990101000000_broken failed/);
    const { rows } = await db.pool.query("SELECT to_regclass('half_done') AS t");
    expect(rows[0].t).toBeNull();
    const report = await migrate(db.pool, all);
    expect(report.applied).toEqual([]);
  });
});
