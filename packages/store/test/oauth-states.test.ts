import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthStateRepository, TenancyRepository } from '../src/index.ts';

describe('OAuth states', () => {
  let db: TestDatabase;
  let states: OAuthStateRepository;
  let tenantId: string;
  let otherTenant: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    states = new OAuthStateRepository(db);
    const tenancy = new TenancyRepository(db.prisma);
    tenantId = (await tenancy.createTenant('A')).id;
    otherTenant = (await tenancy.createTenant('B')).id;
  });
  afterAll(async () => {
    await db.close();
  });

  const state = (nonce: string) => ({
    nonce,
    tenantId,
    userId: null,
    codeVerifier: 'x'.repeat(43),
    grantAccess: 'write' as const,
    grantKeyIds: [],
  });

  it('is consumed exactly once, even by concurrent callbacks', async () => {
    await states.create(state('once'), 60_000);
    const results = await Promise.all([1, 2, 3, 4].map(() => states.consume('once', tenantId)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await states.consume('once', tenantId)).toBeNull();
  });

  it('is refused for another tenant and after it expires', async () => {
    await states.create(state('foreign'), 60_000);
    expect(await states.consume('foreign', otherTenant)).toBeNull();
    expect(await states.consume('foreign', tenantId)).toMatchObject({ grantAccess: 'write' });
    await states.create(state('stale'), -1);
    expect(await states.consume('stale', tenantId)).toBeNull();
  });
});
