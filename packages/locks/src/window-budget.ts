import type { Redis } from 'ioredis';
import type { RateDecision } from './rate-limit.ts';

/**
 * At most `limit` units per key in any `windowMs` (an upstream's quota, such as Graph's 10,000
 * requests per mailbox per 10 minutes), shared by every process using the same Redis. Spending is
 * counted in `buckets` slices of the window; a check adds up one slice more than the window
 * holds, so a window starting anywhere inside the oldest slice is covered: the limit is never
 * passed in any window, at the cost of units being counted up to one slice (windowMs / buckets)
 * longer than they need be.
 */
export interface WindowBudgetPolicy {
  limit: number;
  windowMs: number;
  /** Slices of the window (default 60: ten seconds of a ten-minute window). */
  buckets?: number;
}

export interface WindowBudget {
  /** Spends `cost` (default 1) of the key's budget, all or nothing; refused, says when it will fit. */
  take(key: string, cost?: number): Promise<RateDecision>;
  readonly policy: Readonly<Required<WindowBudgetPolicy>>;
}

function withDefaults(policy: WindowBudgetPolicy): Required<WindowBudgetPolicy> {
  return { buckets: 60, ...policy };
}

// KEYS: the key's slices (hash slice number → units). ARGV: limit, windowMs, sliceMs, cost.
// Answers 0 (spent) or the milliseconds until `cost` fits.
const TAKE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local limit, window, width, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local span = math.ceil(window / width)
local current = math.floor(now / width)
local oldest = current - span
local fields = redis.call('HGETALL', KEYS[1])
local used = 0
local live = {}
for i = 1, #fields, 2 do
  local slice, units = tonumber(fields[i]), tonumber(fields[i + 1])
  if slice < oldest then
    redis.call('HDEL', KEYS[1], fields[i])
  else
    used = used + units
    live[#live + 1] = { slice, units }
  end
end
if used + cost > limit then
  table.sort(live, function(a, b) return a[1] < b[1] end)
  local over = used + cost - limit
  for _, entry in ipairs(live) do
    over = over - entry[2]
    if over <= 0 then
      return math.max(1, (entry[1] + span + 1) * width - now)
    end
  end
  return window + width
end
redis.call('HINCRBY', KEYS[1], tostring(current), cost)
redis.call('PEXPIRE', KEYS[1], window + 2 * width)
return 0`;

interface BudgetScript {
  calgateWindowTake(
    key: string,
    limit: number,
    windowMs: number,
    sliceMs: number,
    cost: number,
  ): Promise<number>;
}

/** A window budget kept in Redis, on Redis's clock, so every process agrees. */
export class RedisWindowBudget implements WindowBudget {
  readonly policy: Readonly<Required<WindowBudgetPolicy>>;
  readonly #redis: BudgetScript;
  readonly #prefix: string;
  readonly #sliceMs: number;

  constructor(redis: Redis, policy: WindowBudgetPolicy, prefix = 'calgate:budget:') {
    this.policy = withDefaults(policy);
    this.#sliceMs = Math.max(1, Math.ceil(this.policy.windowMs / this.policy.buckets));
    this.#prefix = prefix;
    if (typeof (redis as Partial<BudgetScript>).calgateWindowTake !== 'function') {
      redis.defineCommand('calgateWindowTake', { numberOfKeys: 1, lua: TAKE });
    }
    this.#redis = redis as unknown as BudgetScript;
  }

  async take(key: string, cost = 1): Promise<RateDecision> {
    const wait = await this.#redis.calgateWindowTake(
      `${this.#prefix}{${key}}`,
      this.policy.limit,
      this.policy.windowMs,
      this.#sliceMs,
      cost,
    );
    return wait > 0 ? { allowed: false, retryAfterMs: wait } : { allowed: true, retryAfterMs: 0 };
  }
}
