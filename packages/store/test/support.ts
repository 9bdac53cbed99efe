import { CalgateError } from '@calgate/core';
import type { TestDatabase } from '@calgate/testkit';
import { expect } from 'vitest';

/** The CalgateError a promise rejects with, so code and message can both be checked. */
export async function failure(promise: Promise<unknown>): Promise<CalgateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CalgateError);
    return error as CalgateError;
  }
  throw new Error('expected a CalgateError, got success');
}

/** Rows of a tenant in a table. */
export async function count(db: TestDatabase, table: string, tenantId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`,
    [tenantId],
  );
  return rows[0]?.n ?? 0;
}
