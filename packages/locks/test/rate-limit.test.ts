import { redisUrl } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, MemoryRateLimiter, RedisRateLimiter, redisReady } from '../src/index.ts';

describe('MemoryRateLimiter', () => {
  it('allows a burst, then refuses with the time until the next token', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter({ perMinute: 60, burst: 3 }, () => now);
    const results = [];
    for (let i = 0; i < 4; i++) {
      results.push(await limiter.take('k'));
    }
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results[3]?.retryAfterMs).toBe(1000);
    now += 1000;
    expect((await limiter.take('k')).allowed).toBe(true);
    expect((await limiter.take('other')).allowed).toBe(true);
  });
});

describe('RedisRateLimiter (real Redis)', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = connectRedis(redisUrl());
    await redisReady(redis);
  });
  afterAll(async () => {
    redis.disconnect();
  });

  it('shares one budget between limiter instances (several gateway processes)', async () => {
    const policy = { perMinute: 60, burst: 5 };
    const key = `test-${Math.random()}`;
    const a = new RedisRateLimiter(redis, policy);
    const b = new RedisRateLimiter(redis, policy);
    const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).take(key)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
    const refused = decisions.filter((d) => !d.allowed);
    expect(refused.every((d) => d.retryAfterMs > 0 && d.retryAfterMs <= 60_000)).toBe(true);
  });

  it('refills over time', async () => {
    const limiter = new RedisRateLimiter(redis, { perMinute: 600, burst: 1 });
    const key = `refill-${Math.random()}`;
    expect((await limiter.take(key)).allowed).toBe(true);
    const refused = await limiter.take(key);
    expect(refused.allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, refused.retryAfterMs + 20));
    expect((await limiter.take(key)).allowed).toBe(true);
  });

  it('fails fast when Redis is unreachable', async () => {
    const dead = connectRedis('redis://127.0.0.1:1');
    const limiter = new RedisRateLimiter(dead, { perMinute: 60, burst: 5 });
    const started = Date.now();
    await expect(limiter.take('x')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
    dead.disconnect();
  });
});
