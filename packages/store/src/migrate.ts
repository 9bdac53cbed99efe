import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { fillSearchDocuments, SEARCH_DOCUMENTS_MIGRATION } from './search-documents.ts';

/** Prisma's own advisory lock key, so this runner and `prisma migrate` exclude each other. */
const MIGRATION_LOCK = 72707369;

export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Reads `<dir>/<stamp>_<name>/migration.sql` in name order (Prisma's layout). */
export async function loadMigrations(dir = DEFAULT_MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies pending migrations, each in its own transaction, under an advisory lock so concurrent
 * starters serialise. Applied migrations are verified by checksum: an edited migration, or one
 * the database knows but this build does not, stops the run before anything changes.
 */
export async function migrate(pool: pg.Pool, migrations?: Migration[]): Promise<MigrationReport> {
  const wanted = migrations ?? (await loadMigrations());
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(BOOKKEEPING);
      const { rows } = await client.query<{ migration_name: string; checksum: string }>(
        `SELECT migration_name, checksum FROM "_prisma_migrations"
         WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      );
      const done = new Map(rows.map((row) => [row.migration_name, row.checksum]));
      const known = new Set(wanted.map((migration) => migration.name));
      const unknown = [...done.keys()].filter((name) => !known.has(name));
      if (unknown.length > 0) {
        throw new MigrationError(
          `The database has migrations this build does not know: ${unknown.join(', ')}. Run a newer Calgate.`,
        );
      }
      const report: MigrationReport = { applied: [], alreadyApplied: [] };
      for (const migration of wanted) {
        const checksum = done.get(migration.name);
        if (checksum !== undefined) {
          if (checksum !== migration.checksum) {
            throw new MigrationError(
              `Migration ${migration.name} was changed after it was applied (checksum mismatch).`,
            );
          }
          report.alreadyApplied.push(migration.name);
          continue;
        }
        await applyOne(client, migration);
        report.applied.push(migration.name);
      }
      if (known.has(SEARCH_DOCUMENTS_MIGRATION)) {
        // Documents Postgres cannot make: local rows written before they were kept get theirs.
        await fillSearchDocuments(client);
      }
      return report;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

async function applyOne(client: pg.PoolClient, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${reason}`, {
      cause: error,
    });
  }
}
