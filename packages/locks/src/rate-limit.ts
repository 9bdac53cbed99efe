import type { Redis } from 'ioredis';

export interface RateDecision {
  allowed: boolean;
  /** When refused: milliseconds until one more request would be allowed. */
  retryAfterMs: number;
}

/** Per-key request budgets: `burst` at once, refilled at `perMinute` (GCRA). */
export interface RateLimiter {
  /** Spends `cost` (default 1) from the key's budget, all or nothing. */
  take(key: string, cost?: number): Promise<RateDecision>;
  /** The most one request may spend at once. */
  readonly burst: number;
}

export interface RateLimitPolicy {
  perMinute: number;
  burst: number;
}

function intervalOf(policy: RateLimitPolicy): number {
  return 60_000 / policy.perMinute;
}

/** In-process limiter: exact for a single gateway process (embedded mode, tests). */
export class MemoryRateLimiter implements RateLimiter {
  readonly burst: number;
  readonly #interval: number;
  readonly #tolerance: number;
  readonly #tat = new Map<string, number>();
  readonly #now: () => number;

  constructor(policy: RateLimitPolicy, now: () => number = Date.now) {
    this.burst = policy.burst;
    this.#interval = intervalOf(policy);
    this.#tolerance = this.#interval * policy.burst;
    this.#now = now;
  }

  async take(key: string, cost = 1): Promise<RateDecision> {
    const now = this.#now();
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    const next = tat + this.#interval * cost;
    if (next - now > this.#tolerance) {
      return { allowed: false, retryAfterMs: Math.ceil(next - now - this.#tolerance) };
    }
    this.#tat.set(key, next);
    if (this.#tat.size > 100_000) {
      this.#sweep(now);
    }
    return { allowed: true, retryAfterMs: 0 };
  }

  #sweep(now: number): void {
    for (const [key, tat] of this.#tat) {
      if (tat <= now) {
        this.#tat.delete(key);
      }
    }
  }
}

// GCRA in one round trip, on Redis's clock so several gateways agree.
const GCRA = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local interval = tonumber(ARGV[1]) * tonumber(ARGV[3])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local nextTat = tat + interval
if nextTat - now > tolerance then
  return math.ceil(nextTat - now - tolerance)
end
redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now) + 1000)
return 0`;

/** Redis-backed limiter shared by every gateway process. */
export class RedisRateLimiter implements RateLimiter {
  readonly burst: number;
  readonly #redis: Redis;
  readonly #interval: number;
  readonly #tolerance: number;
  readonly #prefix: string;

  constructor(redis: Redis, policy: RateLimitPolicy, prefix = 'calgate:rl:') {
    this.burst = policy.burst;
    this.#redis = redis;
    this.#interval = intervalOf(policy);
    this.#tolerance = this.#interval * policy.burst;
    this.#prefix = prefix;
    if (typeof (redis as Partial<RateScript>).calgateGcra !== 'function') {
      redis.defineCommand('calgateGcra', { numberOfKeys: 1, lua: GCRA });
    }
  }

  async take(key: string, cost = 1): Promise<RateDecision> {
    const wait = await (this.#redis as unknown as RateScript).calgateGcra(
      this.#prefix + key,
      this.#interval,
      this.#tolerance,
      cost,
    );
    return wait > 0 ? { allowed: false, retryAfterMs: wait } : { allowed: true, retryAfterMs: 0 };
  }
}

interface RateScript {
  calgateGcra(key: string, interval: number, tolerance: number, cost: number): Promise<number>;
}
