// Sparse binary logistic regression, class-balanced, trained with Adagrad + L2. The shuffle is
// seeded, so the same data and options always give the same weights.
import type { Sparse } from '@calgate/tools/firewall-model';
import { classWeights, linearStep, rng, shuffledPasses, sigmoid } from './sgd.ts';

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

export function score(m: LinearModel, x: Sparse): number {
  let z = m.b;
  for (let k = 0; k < x.idx.length; k++) {
    z += (m.w[x.idx[k] ?? 0] ?? 0) * (x.val[k] ?? 0);
  }
  return z;
}

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
  const classWeight = classWeights(ys, o.negWeight);
  shuffledPasses(ys.length, o.epochs, rng(o.seed), (i) => {
    const x = xs[i];
    const y = ys[i] ?? 0;
    if (x === undefined) {
      return;
    }
    const g = (sigmoid(score({ w, b }, x)) - y) * classWeight[y];
    linearStep(w, g2, x, g, o.lr, o.l2);
    gb2 += g * g;
    b -= (o.lr * g) / Math.sqrt(gb2);
  });
  return { w, b };
}
