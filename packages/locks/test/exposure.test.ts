import { redisUrl } from '@calgate/testkit';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectRedis,
  type Exposure,
  type ExposureLog,
  MAX_KEPT,
  MemoryExposureLog,
  RedisExposureLog,
  redisReady,
} from '../src/index.ts';

function exposure(at: number, eventId: string): Exposure {
  return {
    at,
    kind: 'flagged',
    tool: 'list_events',
    calendarId: 'cal_1',
    eventId,
    detail: 'description addresses an AI assistant',
  };
}

/** The same behaviour from both logs, on a clock the test moves. */
function behavesAsALog(make: (now: () => number) => ExposureLog): void {
  let now = 1_000_000;
  let log: ExposureLog;
  let principal: string;
  beforeAll(() => {
    log = make(() => now);
  });

  it('keeps a principal’s exposures newest first, apart from other principals', async () => {
    principal = `tnt_a:key_${Math.random()}`;
    await log.record(principal, [exposure(now, 'e1'), exposure(now, 'e2')]);
    now += 1000;
    await log.record(principal, [exposure(now, 'e3')]);
    await log.record(principal, []);
    expect((await log.recent(principal)).map((e) => e.eventId)).toEqual(['e3', 'e2', 'e1']);
    expect(await log.recent(`${principal}-other`)).toEqual([]);
  });

  it(`keeps at most ${MAX_KEPT}, and forgets them after an hour or when cleared`, async () => {
    await log.record(
      principal,
      Array.from({ length: MAX_KEPT + 5 }, (_, i) => exposure(now, `many${i}`)),
    );
    const kept = await log.recent(principal);
    expect(kept).toHaveLength(MAX_KEPT);
    expect(kept[0]?.eventId).toBe(`many${MAX_KEPT + 4}`);
    now += 60 * 60_000;
    expect(await log.recent(principal)).toEqual([]);
    await log.record(principal, [exposure(now, 'again')]);
    await log.clear(principal);
    expect(await log.recent(principal)).toEqual([]);
  });
}

describe('MemoryExposureLog', () => {
  behavesAsALog((now) => new MemoryExposureLog(undefined, now));
});

describe('RedisExposureLog (real Redis)', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = connectRedis(redisUrl());
    await redisReady(redis);
  });
  afterAll(() => {
    redis.disconnect();
  });
  behavesAsALog((now) => new RedisExposureLog(redis, 'calgate:test-exposure:', undefined, now));

  it('is shared by every gateway process and expires in Redis too', async () => {
    const a = new RedisExposureLog(redis, 'calgate:test-exposure:');
    const b = new RedisExposureLog(redis, 'calgate:test-exposure:');
    const principal = `tnt_b:key_${Math.random()}`;
    await a.record(principal, [exposure(Date.now(), 'shared')]);
    expect((await b.recent(principal)).map((e) => e.eventId)).toEqual(['shared']);
    const ttl = await redis.pttl(`calgate:test-exposure:${principal}`);
    expect(ttl).toBeGreaterThan(59 * 60_000);
    expect(ttl).toBeLessThanOrEqual(60 * 60_000);
  });
});
