import { redisUrl } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, MemorySlotLock, RedisSlotLock, redisReady, type SlotLock } from '../src/index.ts';

const H = 3_600_000;
const base = Date.parse('2026-12-01T09:00:00Z');
const range = (fromH: number, toH: number) => ({ start: base + fromH * H, end: base + toH * H });

function contract(name: string, make: () => SlotLock) {
  describe(`${name}: range leases`, () => {
    it('refuses any overlapping range, allows touching and distinct ones', async () => {
      const lock = make();
      const cal = `cal_${Math.random()}`;
      const first = await lock.acquire(cal, range(0, 1), 30_000);
      expect(first).not.toBeNull();
      expect(await lock.acquire(cal, range(0, 1), 30_000)).toBeNull();
      expect(await lock.acquire(cal, range(0.5, 2), 30_000)).toBeNull();
      expect(await lock.acquire(cal, range(-1, 0.25), 30_000)).toBeNull();
      expect(await lock.acquire(cal, range(1, 2), 30_000)).not.toBeNull();
      expect(await lock.acquire(cal, range(-1, 0), 30_000)).not.toBeNull();
      expect(await lock.acquire(`${cal}-other`, range(0, 1), 30_000)).not.toBeNull();
      expect((await lock.held(cal, range(-1, 3))).length).toBe(3);
      expect((await lock.held(cal, range(0, 3))).length).toBe(2);
    });

    it('release frees the range; a second release reports false', async () => {
      const lock = make();
      const cal = `cal_${Math.random()}`;
      const lease = await lock.acquire(cal, range(0, 1), 30_000);
      expect(lease).not.toBeNull();
      if (lease === null) {
        return;
      }
      expect(await lock.release(lease)).toBe(true);
      expect(await lock.release(lease)).toBe(false);
      expect(await lock.acquire(cal, range(0, 1), 30_000)).not.toBeNull();
    });

    it('a lapsed holder cannot release the lease of the next holder', async () => {
      const lock = make();
      const cal = `cal_${Math.random()}`;
      const late = await lock.acquire(cal, range(0, 1), 150);
      expect(late).not.toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 250));
      const next = await lock.acquire(cal, range(0, 1), 30_000);
      expect(next).not.toBeNull();
      if (late !== null) {
        expect(await lock.release(late)).toBe(false);
      }
      // The new holder's lease still stands.
      expect(await lock.acquire(cal, range(0, 1), 30_000)).toBeNull();
    });

    it('lets exactly one of many concurrent contenders in', async () => {
      const lock = make();
      const cal = `cal_${Math.random()}`;
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => lock.acquire(cal, range(i % 2 === 0 ? 0 : 0.5, 1.5), 30_000)),
      );
      expect(results.filter((r) => r !== null)).toHaveLength(1);
    });

    it('rejects an empty range', async () => {
      await expect(make().acquire('cal_x', range(1, 1), 1000)).rejects.toThrow(/end > start/);
    });
  });
}

contract('MemorySlotLock', () => new MemorySlotLock());

describe('RedisSlotLock', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = connectRedis(redisUrl());
    await redisReady(redis);
  });
  afterAll(() => {
    redis.disconnect();
  });
  contract('RedisSlotLock (real Redis)', () => new RedisSlotLock(redis));

  it('shares leases between clients (two gateway processes)', async () => {
    const other = connectRedis(redisUrl());
    await redisReady(other);
    try {
      const cal = `cal_${Math.random()}`;
      const a = new RedisSlotLock(redis);
      const b = new RedisSlotLock(other);
      expect(await a.acquire(cal, range(0, 1), 30_000)).not.toBeNull();
      expect(await b.acquire(cal, range(0.5, 1), 30_000)).toBeNull();
    } finally {
      other.disconnect();
    }
  });

  it('fails closed when Redis is unreachable', async () => {
    const dead = connectRedis('redis://127.0.0.1:1');
    try {
      await expect(new RedisSlotLock(dead).acquire('cal_x', range(0, 1), 1000)).rejects.toThrow(
        /lock service \(Redis\) cannot be reached/,
      );
    } finally {
      dead.disconnect();
    }
  });
});
