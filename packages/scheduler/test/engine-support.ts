/** Engine set-up: a tenant with two keys and the scheduler's repositories. */
import { randomBytes } from 'node:crypto';
import { SchedulerRepository, SecretBox } from '@calgate/store';
import type { TestDatabase } from '@calgate/testkit';

export { type Receiver, startReceiver, until } from '@calgate/testkit';

/** A tenant with two keys, a repository and a webhook target pointing at the receiver. */
export async function seedTenant(db: TestDatabase, tenant = 'tnt_a', key: Uint8Array = randomBytes(32)) {
  const box = new SecretBox([key]);
  const repository = new SchedulerRepository(db, box);
  await db.prisma.tenant.create({ data: { id: tenant, name: tenant } });
  for (const id of [`key_${tenant}_1`, `key_${tenant}_2`]) {
    await db.prisma.apiKey.create({
      data: { id, tenantId: tenant, name: id, prefix: `cg_live_${id}`, hash: randomBytes(32) },
    });
  }
  return { box, repository, tenant, key: `key_${tenant}_1`, otherKey: `key_${tenant}_2` };
}
