import { describe, expect, it } from 'vitest';
import { forEachLimited } from '../src/merge.ts';

describe('forEachLimited', () => {
  it('keeps at most perGroup in flight per account and total overall, and runs everything', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ i, account: `a${i % 4}` }));
    const inFlight = new Map<string, number>();
    let total = 0;
    let maxTotal = 0;
    const maxPerGroup = new Map<string, number>();
    const done: number[] = [];
    await forEachLimited(
      items,
      (item) => item.account,
      { perGroup: 3, total: 8 },
      async (item) => {
        total += 1;
        inFlight.set(item.account, (inFlight.get(item.account) ?? 0) + 1);
        maxTotal = Math.max(maxTotal, total);
        maxPerGroup.set(
          item.account,
          Math.max(maxPerGroup.get(item.account) ?? 0, inFlight.get(item.account) ?? 0),
        );
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight.set(item.account, (inFlight.get(item.account) ?? 0) - 1);
        total -= 1;
        done.push(item.i);
      },
    );
    expect(done.sort((a, b) => a - b)).toEqual(items.map((item) => item.i));
    expect(maxTotal).toBe(8);
    expect([...maxPerGroup.values()].every((n) => n <= 3)).toBe(true);
  });
});
