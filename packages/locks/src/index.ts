/**
 * @calgate/locks — coordination that must hold across gateway processes: per-key rate limits,
 per-key concurrency and CPU pacing (key turns), budgets per time window, booking slot locks, what each principal was recently exposed to and one-use ids, each behind an interface
 with Redis and in-process versions.
 */
export {
  EXPOSURE_TTL_MS,
  type Exposure,
  type ExposureLog,
  MAX_KEPT,
  MemoryExposureLog,
  RedisExposureLog,
} from './exposure.ts';
export { type KeyTurns, type KeyTurnsPolicy, RedisKeyTurns } from './key-slots.ts';
export { MemoryOnceLedger, type OnceLedger, RedisOnceLedger } from './once.ts';
export {
  MemoryRateLimiter,
  type RateDecision,
  type RateLimiter,
  type RateLimitPolicy,
  RedisRateLimiter,
} from './rate-limit.ts';
export { connectRedis, redisReady } from './redis.ts';
export { type HeldRange, MemorySlotLock, RedisSlotLock, type SlotLease, type SlotLock } from './slot-lock.ts';
export { RedisWindowBudget, type WindowBudget, type WindowBudgetPolicy } from './window-budget.ts';
