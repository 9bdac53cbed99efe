/**
 * @calgate/locks — coordination that must hold across gateway processes: per-key rate limits
 and booking slot locks, each behind an interface with Redis and in-process versions.
 */
export {
  MemoryRateLimiter,
  type RateDecision,
  type RateLimiter,
  type RateLimitPolicy,
  RedisRateLimiter,
} from './rate-limit.ts';
export { connectRedis, redisReady } from './redis.ts';
export { type HeldRange, MemorySlotLock, RedisSlotLock, type SlotLease, type SlotLock } from './slot-lock.ts';
