import { randomBytes } from 'node:crypto';
import { type Database, openDatabase } from '@calgate/store';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase extends Database {
  url: string;
}

/** A fresh, fully migrated database cloned from the run's template (milliseconds, not seconds). */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const template = options.migrated === false ? 'template0' : 'calgate_template';
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  return { ...openDatabase({ url }), url };
}

export function redisUrl(): string {
  return inject('redisUrl');
}
