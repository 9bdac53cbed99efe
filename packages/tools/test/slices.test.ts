import { describe, expect, it } from 'vitest';
import { mapInSlices } from '../src/cpu-turns.ts';

describe('mapInSlices', () => {
  it('maps in order and lets other work run while a long map is under way', async () => {
    const items = Array.from({ length: 20 }, (_, i) => i);
    let interleaved = false;
    let done = false;
    setImmediate(() => {
      interleaved = !done;
    });
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // Pure CPU work, as rule evaluation is.
      }
    };
    const out = await mapInSlices(items, (i) => {
      busy(2);
      return i * 2;
    });
    done = true;
    expect(out).toEqual(items.map((i) => i * 2));
    expect(interleaved).toBe(true);
  });

  it('maps an empty list to an empty list', async () => {
    expect(await mapInSlices([], (x) => x)).toEqual([]);
  });
});
