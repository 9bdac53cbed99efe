import { ApiKeyRepository, type Database } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyAuthenticator } from '../src/auth.ts';

// A key lookup that read the database before a revocation and answers after the invalidation
// that announced it must not decide later calls: neither shared with them nor kept in the cache.
describe('key lookups in flight across an invalidation (real Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a lookup begun before invalidate() is not reused after it, nor cached', async () => {
    const keys = new ApiKeyRepository(db.prisma);
    await db.prisma.tenant.create({ data: { id: 'tnt_if', name: 'In flight' } });
    const { key, secret } = await keys.create('tnt_if', { name: 'to revoke' });
    // The first query runs now and answers only when released: it has read the key as live.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = 0;
    const pool = new Proxy(db.pool, {
      get(target, property, receiver) {
        if (property !== 'query') {
          return Reflect.get(target, property, receiver);
        }
        return async (...args: Parameters<typeof target.query>) => {
          const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          if (held++ === 0) {
            await gate;
          }
          return result;
        };
      },
    });
    const gated: Database = { prisma: db.prisma, pool, close: () => db.close() };
    const authenticator = new KeyAuthenticator({ db: gated, keys, ttlMs: 60_000 });
    const header = `Bearer ${secret}`;
    const early = authenticator.authenticate(header);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(held).toBe(1);

    await db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    authenticator.invalidate();
    const late = authenticator.authenticate(header);
    expect(await late).toEqual({ ok: false, reason: 'revoked' });
    release();
    // The early caller asked before the revocation and may be answered as then.
    expect((await early).ok).toBe(true);
    // What it read is not kept: the next call reads the revocation.
    expect(await authenticator.authenticate(header)).toEqual({ ok: false, reason: 'revoked' });
    await authenticator.close();
  });
});
