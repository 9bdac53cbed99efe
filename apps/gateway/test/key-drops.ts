/**
 * The key-cache drops a gateway makes itself, by the tenant each names. A change made for one
 * tenant (a grant, a calendar created, an account marked needs_reauth, a connection revoked) drops
 * that tenant's cached keys only: an unscoped drop empties every tenant's, here and, through Redis,
 * on every other gateway.
 */
import type { TestGateway } from './harness.ts';

/** What an unscoped drop is recorded as. */
export const EVERY_TENANT = 'every tenant';

export interface KeyDrops {
  /** The tenant each drop so far named, in order ({@link EVERY_TENANT} for an unscoped one). */
  readonly tenants: string[];
  stop(): void;
}

export function watchKeyDrops(gateway: Pick<TestGateway, 'runtime'>): KeyDrops {
  const tenants: string[] = [];
  const stop = gateway.runtime.deps.authenticator.onInvalidate((from, tenantId) => {
    if (from === 'here') {
      tenants.push(tenantId ?? EVERY_TENANT);
    }
  });
  return { tenants, stop };
}
