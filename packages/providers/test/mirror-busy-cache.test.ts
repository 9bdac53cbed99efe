import { describe, expect, it } from 'vitest';
import { BusyCache, type CachedBusy } from '../src/mirror/busy-cache.ts';

const answer = (events: number): CachedBusy => ({
  busy: [],
  intervals: [],
  events: Array.from({ length: events }, (_, i) => ({ eventId: `e${i}`, start: i, end: i + 1 })),
});

describe('free/busy answers kept per calendar version', () => {
  it('finds an answer only under the version, zone and window it was made for', () => {
    const cache = new BusyCache();
    const made = answer(2);
    cache.set(BusyCache.key('cal_a', '7', 'UTC', 0, 10), made);
    expect(cache.get(BusyCache.key('cal_a', '7', 'UTC', 0, 10))).toBe(made);
    expect(cache.get(BusyCache.key('cal_a', '8', 'UTC', 0, 10))).toBeUndefined();
    expect(cache.get(BusyCache.key('cal_a', '7', 'Europe/Berlin', 0, 10))).toBeUndefined();
    expect(cache.get(BusyCache.key('cal_a', '7', 'UTC', 0, 11))).toBeUndefined();
    expect(cache.get(BusyCache.key('cal_b', '7', 'UTC', 0, 10))).toBeUndefined();
  });

  it('lets the least recently used answers go past its bounds on entries and on events', () => {
    const cache = new BusyCache(3, 25);
    for (const id of ['a', 'b', 'c']) {
      cache.set(BusyCache.key(id, '1', 'UTC', 0, 1), answer(1));
    }
    cache.get(BusyCache.key('a', '1', 'UTC', 0, 1));
    cache.set(BusyCache.key('d', '1', 'UTC', 0, 1), answer(1));
    expect(cache.get(BusyCache.key('b', '1', 'UTC', 0, 1))).toBeUndefined();
    expect(cache.get(BusyCache.key('a', '1', 'UTC', 0, 1))).toBeDefined();
    expect(cache.size).toBe(3);
    // 20 events (weight 21) leave room for two small answers (weight 2 each) beside them.
    cache.set(BusyCache.key('big', '1', 'UTC', 0, 1), answer(20));
    expect(cache.get(BusyCache.key('c', '1', 'UTC', 0, 1))).toBeUndefined();
    expect(cache.size).toBe(3);
    expect(cache.get(BusyCache.key('big', '1', 'UTC', 0, 1))).toBeDefined();
  });
});
