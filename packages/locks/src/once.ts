import type { Redis } from 'ioredis';

/**
 * Ids that may be used once, shared by every gateway process: the nonce of a 2026-07-28
 * `requestState` is claimed when the person's answer in it is used, so the same answer cannot
 * authorise its call a second time on any gateway. A claim is remembered as long as the id could
 * still be presented (`ttlMs`), then forgotten.
 */
export interface OnceLedger {
  /**
   * 'first' for the first claim of `id` within `ttlMs`, 'used' for every later one. Throws when
   * the ledger cannot answer (Redis away): the caller must then not treat the id as unused.
   */
  claim(id: string, ttlMs: number): Promise<'first' | 'used'>;
}

/** In-process ledger: exact for one gateway process (embedded mode, tests). */
export class MemoryOnceLedger implements OnceLedger {
  readonly #claimed = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async claim(id: string, ttlMs: number): Promise<'first' | 'used'> {
    const now = this.#now();
    const until = this.#claimed.get(id);
    if (until !== undefined && until > now) {
      return 'used';
    }
    if (this.#claimed.size > 10_000) {
      for (const [key, expires] of this.#claimed) {
        if (expires <= now) {
          this.#claimed.delete(key);
        }
      }
    }
    this.#claimed.set(id, now + Math.max(1, ttlMs));
    return 'first';
  }
}

/** `SET key 1 PX ttl NX`: one atomic step, so two gateways claiming at once cannot both win. */
export class RedisOnceLedger implements OnceLedger {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = 'calgate:once:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async claim(id: string, ttlMs: number): Promise<'first' | 'used'> {
    const set = await this.#redis.set(`${this.#prefix}${id}`, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
    return set === 'OK' ? 'first' : 'used';
  }
}
