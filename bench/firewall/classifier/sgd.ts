// What the trainers share: a seeded random stream, class weights, shuffled passes over the
// examples, and the Adagrad + L2 step of the linear weights over a sparse example. Seeded, so the
// same data and options always give the same weights.
import type { Sparse } from '@calgate/tools/firewall-model';

/** xorshift32 in [0, 1). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** Weights of benign (0) and injection (1) examples: class-balanced, benign `negWeight` times more. */
export function classWeights(ys: readonly (0 | 1)[], negWeight: number): readonly [number, number] {
  const pos = ys.filter((y) => y === 1).length;
  return [(negWeight * ys.length) / (2 * Math.max(ys.length - pos, 1)), ys.length / (2 * Math.max(pos, 1))];
}

/** `epochs` passes over examples 0…n−1, each in a new order drawn from `random`. */
export function shuffledPasses(
  n: number,
  epochs: number,
  random: () => number,
  visit: (i: number) => void,
): void {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let epoch = 0; epoch < epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const t = order[i] ?? 0;
      order[i] = order[j] ?? 0;
      order[j] = t;
    }
    for (const i of order) {
      visit(i);
    }
  }
}

/** One Adagrad + L2 step of the linear weights `w` (squared gradients in `g2`) for example `x`, loss gradient `g`. */
export function linearStep(
  w: Float32Array,
  g2: Float32Array,
  x: Sparse,
  g: number,
  lr: number,
  l2: number,
): void {
  for (let k = 0; k < x.idx.length; k++) {
    const j = x.idx[k] ?? 0;
    const wj = w[j] ?? 0;
    const gj = g * (x.val[k] ?? 0) + l2 * wj;
    const acc = Math.fround((g2[j] ?? 0) + gj * gj);
    g2[j] = acc;
    w[j] = wj - (lr * gj) / Math.sqrt(acc);
  }
}
