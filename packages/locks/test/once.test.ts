import { randomBytes } from 'node:crypto';
import { redisUrl } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, MemoryOnceLedger, RedisOnceLedger, redisReady } from '../src/index.ts';

describe('one-use ids', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = connectRedis(redisUrl(), { name: 'once-test' });
    await redisReady(redis, 5_000);
  });
  afterAll(() => redis.disconnect());

  it('Redis: the first claim wins, every later one is used, until the id expires', async () => {
    const ledger = new RedisOnceLedger(redis, `once-test:${randomBytes(4).toString('hex')}:`);
    expect(await ledger.claim('n1', 200)).toBe('first');
    expect(await ledger.claim('n1', 200)).toBe('used');
    expect(await ledger.claim('n2', 200)).toBe('first');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await ledger.claim('n1', 200)).toBe('first');
  });

  it('Redis: of many claims at once (as from several gateways), exactly one wins', async () => {
    const ledgers = [0, 1, 2, 3].map(() => new RedisOnceLedger(redis, 'once-race:'));
    const id = randomBytes(8).toString('hex');
    const claims = await Promise.all(
      ledgers.flatMap((ledger) => [ledger.claim(id, 5_000), ledger.claim(id, 5_000)]),
    );
    expect(claims.filter((claim) => claim === 'first')).toHaveLength(1);
  });

  it('Redis that does not answer: the claim throws, it is never "first"', async () => {
    const down = connectRedis('redis://127.0.0.1:1', { name: 'once-down' });
    down.on('error', () => {});
    try {
      await expect(new RedisOnceLedger(down).claim('n1', 1_000)).rejects.toThrow();
    } finally {
      down.disconnect();
    }
  });

  it('memory: the same rules on a clock', async () => {
    let now = 1_000;
    const ledger = new MemoryOnceLedger(() => now);
    expect(await ledger.claim('n1', 100)).toBe('first');
    expect(await ledger.claim('n1', 100)).toBe('used');
    now += 100;
    expect(await ledger.claim('n1', 100)).toBe('first');
  });
});
