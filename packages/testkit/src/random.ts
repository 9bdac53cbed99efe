/** A small deterministic generator (mulberry32) for randomised tests: the same seed, the same run. */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    /** In [0, 1). */
    next,
    /** An integer from `from` to `to`, both included. */
    int: (from: number, to: number) => from + Math.floor(next() * (to - from + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p: number) => next() < p,
  };
}

export type SeededRandom = ReturnType<typeof seededRandom>;
