/** A migrated test database with one tenant and a local connection, and fresh calendars on demand. */
import { CalgateError } from '@calgate/core';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { expect } from 'vitest';
import type { CalendarRef } from '../src/index.ts';

export interface LocalFixture {
  db: TestDatabase;
  newCalendar(timeZone: string): Promise<CalendarRef>;
}

export async function localFixture(): Promise<LocalFixture> {
  const db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: 'tnt_x', name: 'Tenant X' } });
  await db.prisma.connection.create({
    data: { id: 'con_x', tenantId: 'tnt_x', provider: 'local', accountEmail: 'local', auth: 'none' },
  });
  let fresh = 0;
  return {
    db,
    async newCalendar(timeZone) {
      fresh += 1;
      const id = `cal_f${fresh}`;
      await db.prisma.calendar.create({
        data: { id, tenantId: 'tnt_x', connectionId: 'con_x', externalId: id, summary: id, timeZone },
      });
      return { id, externalId: id, timeZone };
    },
  };
}

/** The CalgateError a promise rejects with, after checking its code. */
export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<CalgateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CalgateError);
    expect((error as CalgateError).code).toBe(code);
    return error as CalgateError;
  }
  throw new Error(`expected a ${code} error`);
}
