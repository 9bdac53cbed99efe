import { redisUrl } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectRedis, type KeyTurnsPolicy, RedisKeyTurns, redisReady } from '../src/index.ts';

const describeLimits = (running: number, waiting: number) => `${running} running, ${waiting} waiting`;

describe('RedisKeyTurns (real Redis; two clients stand for two gateway processes)', () => {
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

  const pair = (policy: Partial<KeyTurnsPolicy> & { limit: number; queued: number }) => {
    const full = { describe: describeLimits, ...policy };
    return [new RedisKeyTurns(first, full), new RedisKeyTurns(second, full)] as const;
  };
  const key = () => `key-${Math.random()}`;

  it('holds the limit across processes, queues first come first served, refuses past the queue', async () => {
    const [a, b] = pair({ limit: 2, queued: 2 });
    const k = key();
    const held = [await a.acquire(k), await a.acquire(k)];
    const order: string[] = [];
    const third = b.acquire(k).then((release) => {
      order.push('third');
      return release;
    });
    // Let the third call reach the queue before the fourth.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const fourth = b.acquire(k).then((release) => {
      order.push('fourth');
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await expect(b.acquire(k)).rejects.toThrow('2 running, 2 waiting');
    await expect(a.acquire(k)).rejects.toMatchObject({ code: 'rate_limited' });
    expect(order).toEqual([]);
    // A turn ending on the first process goes back to Redis: the second process's callers
    // take it in the order they came.
    held[0]?.();
    await third;
    expect(order).toEqual(['third']);
    held[1]?.();
    (await fourth)();
    (await third)();
    expect(order).toEqual(['third', 'fourth']);
    // Everything released: the key has its full limit again, on either process.
    const again = [await a.acquire(k), await b.acquire(k)];
    for (const release of again) {
      release();
    }
  });

  it("passes a turn straight to the same process's next caller, keeping the limit", async () => {
    const [a, b] = pair({ limit: 1, queued: 5 });
    const k = key();
    const first = await a.acquire(k);
    const second = a.acquire(k);
    await new Promise((resolve) => setTimeout(resolve, 30));
    first();
    const release = await second;
    // The turn passed on is still the key's one turn: the other process is refused.
    await expect(pair({ limit: 1, queued: 0 })[1].acquire(k)).rejects.toThrow('1 running, 0 waiting');
    // And the caller that took it left the queue in Redis: a caller on the other process is first.
    const third = b.acquire(k);
    await new Promise((resolve) => setTimeout(resolve, 30));
    release();
    (await third)();
  });

  it("callers behind the process's own waiters while it holds every turn wait for a turn it passes on, without asking Redis", async () => {
    const [a, b] = pair({ limit: 2, queued: 3 });
    const k = key();
    const held = [await a.acquire(k), await a.acquire(k)];
    const script = first as unknown as { calgateTurnAcquire: (...args: unknown[]) => Promise<number[]> };
    const asked = vi.spyOn(script, 'calgateTurnAcquire');
    const order: string[] = [];
    const waiting = (name: string) =>
      a.acquire(k).then((release) => {
        order.push(name);
        return release;
      });
    // The first waiter takes its place in Redis; the next ones wait behind it, here only.
    const third = waiting('third');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(asked).toHaveBeenCalled();
    const fourth = waiting('fourth');
    const fifth = waiting('fifth');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Every ask so far is the third's (its token: the scripts' sixth argument), polling.
    expect(new Set(asked.mock.calls.map((call) => call[5])).size).toBe(1);
    // Past the queue's length, a caller asks Redis (which counts the waiters it knows).
    const sixth = waiting('sixth');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(new Set(asked.mock.calls.map((call) => call[5])).size).toBe(2);
    // Turns pass on in the order the callers came; the limit holds throughout.
    held[0]?.();
    await third;
    held[1]?.();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    await expect(pair({ limit: 2, queued: 0 })[1].acquire(k)).rejects.toThrow('2 running');
    (await third)();
    (await fourth)();
    (await fifth)();
    (await sixth)();
    expect(order).toEqual(['third', 'fourth', 'fifth', 'sixth']);
    asked.mockRestore();
    // Everything released: the key has its full limit again.
    const again = [await b.acquire(k), await b.acquire(k)];
    for (const release of again) {
      release();
    }
  });

  it("keeps a turn nobody waits for a moment for the key's next call in the same process, then gives it back", async () => {
    const [a, b] = pair({ limit: 1, queued: 2 });
    const k = key();
    const script = first as unknown as {
      calgateTurnAcquire: (...args: unknown[]) => Promise<number[]>;
      calgateTurnRelease: (...args: unknown[]) => Promise<number>;
    };
    const asked = vi.spyOn(script, 'calgateTurnAcquire');
    const given = vi.spyOn(script, 'calgateTurnRelease');
    // Calls that follow each other: one turn asked for, none given back in between.
    for (let i = 0; i < 5; i++) {
      (await a.acquire(k))();
    }
    // (ioredis hands each script call on to its pipeline: calls are told apart by their token.)
    const tokensOf = (spy: typeof asked | typeof given, at: number) =>
      new Set(spy.mock.calls.map((call) => call[at]));
    expect(tokensOf(asked, 5).size).toBe(1);
    expect(given).not.toHaveBeenCalled();
    // Then it goes back to Redis, where the other process takes it.
    const other = await b.acquire(k);
    expect(tokensOf(given, 2)).toEqual(tokensOf(asked, 5));
    other();
    asked.mockRestore();
    given.mockRestore();
  });

  it('frees the turns of a process that died holding them once their lease lapses', async () => {
    const [a, b] = pair({ limit: 1, queued: 0, leaseMs: 300 });
    const k = key();
    const gone = connectRedis(redisUrl());
    await redisReady(gone);
    const dead = new RedisKeyTurns(gone, { limit: 1, queued: 0, describe: describeLimits, leaseMs: 300 });
    await dead.acquire(k); // never released
    gone.disconnect(); // and never renewed: its process is gone
    await expect(a.acquire(k)).rejects.toThrow('1 running, 0 waiting');
    const started = Date.now();
    let release: (() => void) | undefined;
    while (release === undefined) {
      release = await b.acquire(k).catch(() => undefined);
      if (release === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    release();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('renews the lease of a turn held longer than the lease', async () => {
    const [a, b] = pair({ limit: 1, queued: 0, leaseMs: 300 });
    const k = key();
    const release = await a.acquire(k);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await expect(b.acquire(k)).rejects.toThrow('1 running, 0 waiting');
    release();
  });

  it('paces: after a turn of d ms, the key’s next turn on another process waits about d ms', async () => {
    const [a, b] = pair({ limit: 1, queued: 10, pace: { maxPauseMs: 250 } });
    const k = key();
    const release = await a.acquire(k);
    const waiting = b.acquire(k).then((next) => {
      const at = performance.now();
      next();
      return at;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const releasedAt = performance.now();
    release();
    const grantedAt = await waiting;
    expect(grantedAt - releasedAt).toBeGreaterThanOrEqual(120);
    expect(grantedAt - releasedAt).toBeLessThan(1_000);
  });

  it('a waiter whose process stopped asking leaves the queue', async () => {
    const [a, b] = pair({ limit: 1, queued: 1, waiterTtlMs: 200 });
    const k = key();
    const release = await a.acquire(k);
    const gone = connectRedis(redisUrl());
    await redisReady(gone);
    const ghost = new RedisKeyTurns(gone, {
      limit: 1,
      queued: 1,
      describe: describeLimits,
      waiterTtlMs: 200,
    });
    const ghostWait = ghost.acquire(k).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(b.acquire(k)).rejects.toThrow('1 running, 1 waiting');
    gone.disconnect(); // its next poll fails: the process is as good as gone
    await ghostWait;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const queued = b.acquire(k);
    release();
    (await queued)();
  });

  it('a caller that gives up while waiting leaves the queue at once, in Redis and in its process', async () => {
    const [a, b] = pair({ limit: 1, queued: 1, waiterTtlMs: 60_000 });
    const k = key();
    const release = await a.acquire(k);
    // One waiting in Redis (another process), one behind it here.
    const controller = new AbortController();
    const waiting = b.acquire(k, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await expect(a.acquire(k)).rejects.toThrow('1 running, 1 waiting');
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    // Its place is free long before its waiter lease (a minute) would lapse.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const next = a.acquire(k);
    release();
    (await next)();
    // Given up before asking: refused without a turn taken.
    const aborted = AbortSignal.abort(new Error('already gone'));
    await expect(b.acquire(k, aborted)).rejects.toThrow('already gone');
    (await b.acquire(k))();
  });

  it("a caller waiting behind its own process's turns that gives up is never handed one", async () => {
    const [a] = pair({ limit: 1, queued: 3 });
    const k = key();
    const release = await a.acquire(k);
    const first = a.acquire(k);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const controller = new AbortController();
    const second = a.acquire(k, controller.signal);
    const third = a.acquire(k);
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort(new Error('gave up'));
    await expect(second).rejects.toThrow('gave up');
    release();
    (await first)();
    (await third)();
  });
});
