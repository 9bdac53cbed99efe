import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.ts';

export type Prisma = InstanceType<typeof PrismaClient>;

/** One Postgres pool shared by Prisma and the few raw queries (migrations, hot reads). */
export interface Database {
  readonly prisma: Prisma;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  /** Pool size; the default suits one gateway process on a small machine. */
  max?: number;
}

export function openDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    // Calgate's queries are short; JIT compilation (triggered by cost estimates, e.g. a mirror
    // read over 20 calendars) costs tens of milliseconds and never pays back here.
    options: '-c jit=off',
  });
  // An idle client that loses its server must not take the process down with it.
  pool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closed = false;
  return {
    prisma,
    pool,
    async close() {
      if (closed) {
        return;
      }
      closed = true;
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
