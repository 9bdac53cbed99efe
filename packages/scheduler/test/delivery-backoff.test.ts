import { describe, expect, it } from 'vitest';
import { backoff, DEFAULT_BACKOFF_BASE_MS, parseRetryAfter } from '../src/index.ts';

describe('backoff', () => {
  it('doubles per attempt, between half and all of the step', () => {
    const low = (attempt: number) => backoff(attempt, { baseMs: 1000, random: () => 0 });
    const high = (attempt: number) => backoff(attempt, { baseMs: 1000, random: () => 0.999999 });
    expect([1, 2, 3, 4, 5].map(low)).toEqual([500, 1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4, 5].map(high)).toEqual([1000, 2000, 4000, 8000, 16000]);
  });

  it('stays under the ceiling and treats odd attempt numbers as the first or the largest', () => {
    expect(backoff(30, { baseMs: 1000, maxMs: 60_000, random: () => 0.5 })).toBe(45_000);
    expect(backoff(10_000, { maxMs: 60_000, random: () => 0.999999 })).toBe(60_000);
    expect(backoff(0, { random: () => 0 })).toBe(DEFAULT_BACKOFF_BASE_MS / 2);
    expect(backoff(-3, { random: () => 0 })).toBe(DEFAULT_BACKOFF_BASE_MS / 2);
  });

  it('spreads retries with the default random source', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoff(6)));
    expect(delays.size).toBeGreaterThan(10);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(32_000);
      expect(delay).toBeLessThanOrEqual(64_000);
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T09:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date, and a past one as no wait', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 09:01:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 08:00:00 GMT', now)).toBe(0);
  });

  it('ignores what is neither', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
