import { migrate, openDatabase } from '@calgate/store';
import type { TestProject } from 'vitest/node';
import { type RunningServer, startPostgres, startRedis } from './servers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    redisUrl: string;
  }
}

export const TEMPLATE_DB = 'calgate_template';

let servers: RunningServer[] = [];

/** One Postgres and one Redis for the whole run; each test file makes its own database. */
export async function setup(project: TestProject): Promise<void> {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  servers = [postgres, redis];
  const admin = openDatabase({ url: postgres.url, max: 1 });
  await admin.pool.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.close();
  const template = openDatabase({ url: postgres.url.replace(/\/postgres$/, `/${TEMPLATE_DB}`), max: 1 });
  await migrate(template.pool);
  await template.close();
  project.provide('pgAdminUrl', postgres.url);
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
}
