import { describe, expect, it } from 'vitest';
import { hasPrefix, newEventId, newId } from '../src/ids.ts';

describe('ids', () => {
  it('writes prefixed base58 ids and Google-valid event ids', () => {
    const id = newId('req');
    expect(id).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]{16}$/);
    expect(hasPrefix(id, 'req')).toBe(true);
    expect(newEventId()).toMatch(/^[a-v0-9]{26}$/);
  });

  it('never repeats across many blocks of pooled random bytes, mixed sizes included', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      seen.add(newId('req'));
      seen.add(newEventId());
    }
    expect(seen.size).toBe(40_000);
  });

  it('spreads characters over the whole alphabet', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 5_000; i++) {
      for (const char of newEventId()) {
        counts.set(char, (counts.get(char) ?? 0) + 1);
      }
    }
    // 130,000 characters over 32: ~4,062 each; a byte handed out twice or a stuck pool shows here.
    expect(counts.size).toBe(32);
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(3_500);
      expect(count).toBeLessThan(4_650);
    }
  });
});
