import { describe, expect, it } from 'vitest';
import { LOG_LEVEL_TTL_MS, MemoryLogLevelStore } from '../src/log-levels.ts';

describe('MemoryLogLevelStore', () => {
  it('keeps a level per key for a day after it was last set', async () => {
    let now = 0;
    const store = new MemoryLogLevelStore(() => now);
    await store.set('key_a', 'warning');
    expect(await store.get('key_a')).toBe('warning');
    expect(await store.get('key_b')).toBeUndefined();
    now = LOG_LEVEL_TTL_MS - 1;
    await store.set('key_a', 'error');
    now = LOG_LEVEL_TTL_MS + 1;
    expect(await store.get('key_a')).toBe('error');
    now = 2 * LOG_LEVEL_TTL_MS;
    expect(await store.get('key_a')).toBeUndefined();
  });
});
