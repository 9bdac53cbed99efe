import { redisUrl } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RedisWindowBudget, redisReady } from '../src/index.ts';

describe('RedisWindowBudget (real Redis; two clients stand for two processes)', () => {
  let first: Redis;
  let second: Redis;
  beforeAll(async () => {
    first = connectRedis(redisUrl());
    second = connectRedis(redisUrl());
    await Promise.all([redisReady(first), redisReady(second)]);
  });
  afterAll(() => {
    first.disconnect();
    second.disconnect();
  });
  const key = () => `mailbox-${Math.random()}`;

  it('shares one budget across processes, refuses past it with when it fits again, and frees it as the window passes', async () => {
    const policy = { limit: 5, windowMs: 600, buckets: 6 };
    const a = new RedisWindowBudget(first, policy);
    const b = new RedisWindowBudget(second, policy);
    const k = key();
    const decisions = [];
    for (let i = 0; i < 5; i++) {
      decisions.push(await (i % 2 === 0 ? a : b).take(k));
    }
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    const refused = await b.take(k);
    expect(refused.allowed).toBe(false);
    // The oldest slice leaves the count one slice past the window: within 600 + 100 ms.
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(700);
    expect((await a.take(key())).allowed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, refused.retryAfterMs + 20));
    expect((await a.take(k)).allowed).toBe(true);
  });

  it('spends all or nothing, and never more than the limit in any window', async () => {
    const policy = { limit: 10, windowMs: 400, buckets: 4 };
    const a = new RedisWindowBudget(first, policy);
    const k = key();
    expect((await a.take(k, 8)).allowed).toBe(true);
    expect((await a.take(k, 3)).allowed).toBe(false);
    expect((await a.take(k, 2)).allowed).toBe(true);
    // Requests granted over 1.5 s, each with its time as seen here (a few ms after Redis's, and
    // not always the same few): no 400 ms, less that leeway, holds more than 10.
    const granted: number[] = [];
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      if ((await a.take(k)).allowed) {
        granted.push(Date.now());
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(granted.length).toBeGreaterThan(10);
    for (const start of granted) {
      expect(granted.filter((t) => t >= start && t < start + 390).length).toBeLessThanOrEqual(10);
    }
  });
});
