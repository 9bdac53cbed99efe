// Sparse binary logistic regression, class-balanced, trained with Adagrad + L2. The shuffle is
// seeded, so the same data and options always give the same weights.
import type { Sparse } from '@calgate/tools/firewall-model';

export interface LinearModel {
  w: Float32Array;
  b: number;
}

export interface TrainOptions {
  epochs: number;
  lr: number;
  l2: number;
  seed: number;
  /** Benign texts weigh this much more than class balance alone gives them. */
  negWeight: number;
}
export const DEFAULT_TRAIN: TrainOptions = { epochs: 20, lr: 0.5, l2: 1e-5, seed: 1, negWeight: 1 };

/** xorshift32 in [0, 1). */
function rng(seed: number): () => number {
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

export function score(m: LinearModel, x: Sparse): number {
  let z = m.b;
  for (let k = 0; k < x.idx.length; k++) {
    z += (m.w[x.idx[k] ?? 0] ?? 0) * (x.val[k] ?? 0);
  }
  return z;
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

export function train(
  xs: Sparse[],
  ys: (0 | 1)[],
  dim: number,
  o: TrainOptions = DEFAULT_TRAIN,
): LinearModel {
  const w = new Float32Array(dim);
  const g2 = new Float32Array(dim).fill(1e-8);
  let b = 0;
  let gb2 = 1e-8;
  const pos = ys.filter((y) => y === 1).length;
  const neg = ys.length - pos;
  const classWeight = [
    (o.negWeight * ys.length) / (2 * Math.max(neg, 1)),
    ys.length / (2 * Math.max(pos, 1)),
  ];
  const order = ys.map((_, i) => i);
  const random = rng(o.seed);
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const t = order[i] ?? 0;
      order[i] = order[j] ?? 0;
      order[j] = t;
    }
    for (const i of order) {
      const x = xs[i];
      const y = ys[i] ?? 0;
      if (x === undefined) {
        continue;
      }
      const p = sigmoid(score({ w, b }, x));
      const g = (p - y) * (classWeight[y] ?? 1);
      for (let k = 0; k < x.idx.length; k++) {
        const j = x.idx[k] ?? 0;
        const wj = w[j] ?? 0;
        const gj = g * (x.val[k] ?? 0) + o.l2 * wj;
        const acc = Math.fround((g2[j] ?? 0) + gj * gj);
        g2[j] = acc;
        w[j] = wj - (o.lr * gj) / Math.sqrt(acc);
      }
      gb2 += g * g;
      b -= (o.lr * g) / Math.sqrt(gb2);
    }
  }
  return { w, b };
}
