import type { Database } from './db.ts';

export interface AuditPruneOptions {
  /** Entries created strictly before this instant are deleted. */
  before: Date;
  /** Rows per DELETE, so one run never holds a long lock or a huge transaction. */
  batchSize: number;
  /** Checked between batches: a shutdown does not wait for a large backlog. */
  signal?: AbortSignal;
}

/**
 * Deletes old audit entries in batches and returns how many went. Batches walk the primary key
 * from the oldest id, where old rows live, so each DELETE touches a small range of the table.
 */
export async function pruneAuditLog(db: Database, options: AuditPruneOptions): Promise<number> {
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1) {
    throw new RangeError(`batchSize must be a positive integer, got ${options.batchSize}`);
  }
  let total = 0;
  while (options.signal?.aborted !== true) {
    const deleted = await db.prisma.$executeRaw`
      DELETE FROM "audit_log"
      WHERE "id" IN (
        SELECT "id" FROM "audit_log"
        WHERE "created_at" < ${options.before}
        ORDER BY "id"
        LIMIT ${options.batchSize}
      )`;
    total += deleted;
    if (deleted < options.batchSize) {
      break;
    }
  }
  return total;
}
