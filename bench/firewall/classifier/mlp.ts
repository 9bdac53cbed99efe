// A one-hidden-layer network over the classifier's sparse features, with the linear model kept as
// a skip connection: z = b + w·x + v·relu(b1 + E x). E is a table of H-dimensional embeddings, one
// per hashed n-gram bucket folded to 2^hbits rows plus one per concept slot, summed with the
// features' weights (a fastText-style bag of sub-word embeddings) and passed through a ReLU, so
// the score can weigh combinations the linear part cannot. Class-balanced logistic loss, Adagrad,
// L2; the shuffle and the initial weights are seeded, so the same data gives the same weights.
import { DIM, type Sparse } from '@calgate/tools/firewall-model';
import { classWeights, linearStep, rng, shuffledPasses, sigmoid } from './sgd.ts';

export interface MlpOptions {
  /** Hidden units. */
  hidden: number;
  /** n-gram buckets are folded to 2^hbits embedding rows. */
  hbits: number;
  epochs: number;
  /** Step of the hidden layer's weights and of the linear skip's. */
  lr: number;
  lrLinear: number;
  l2: number;
  seed: number;
  /** Initial embedding weights are uniform in ±init. */
  init: number;
  /** Benign texts weigh this much more than class balance alone gives them. */
  negWeight: number;
}
export const DEFAULT_MLP: MlpOptions = {
  hidden: 16,
  hbits: 0,
  epochs: 20,
  lr: 0.05,
  lrLinear: 0.5,
  l2: 1e-5,
  seed: 1,
  init: 0.05,
  negWeight: 8,
};

export interface Mlp {
  hidden: number;
  hbits: number;
  /** Embedding rows × hidden, row-major. */
  emb: Float32Array;
  b1: Float32Array;
  v: Float32Array;
  /** Linear skip over every feature slot. */
  w: Float32Array;
  b: number;
}

/**
 * Embedding row of feature slot `j`: n-gram buckets folded to 2^hbits rows, concept slots each
 * their own row after them; with hbits 0 only the concept slots feed the hidden layer (−1: none).
 */
export function embRow(j: number, hbits: number): number {
  if (j < DIM) {
    return hbits === 0 ? -1 : j & ((1 << hbits) - 1);
  }
  return (hbits === 0 ? 0 : 1 << hbits) + (j - DIM);
}

/** Score of `x`; `h` receives the hidden activations (after the ReLU). */
export function mlpScore(m: Mlp, x: Sparse, h: Float32Array = new Float32Array(m.hidden)): number {
  const H = m.hidden;
  h.set(m.b1);
  let z = m.b;
  for (let k = 0; k < x.idx.length; k++) {
    const j = x.idx[k] ?? 0;
    const val = x.val[k] ?? 0;
    z += (m.w[j] ?? 0) * val;
    const row = embRow(j, m.hbits);
    if (row < 0) {
      continue;
    }
    const o = row * H;
    for (let u = 0; u < H; u++) {
      h[u] = (h[u] ?? 0) + (m.emb[o + u] ?? 0) * val;
    }
  }
  for (let u = 0; u < H; u++) {
    const a = h[u] ?? 0;
    if (a > 0) {
      z += a * (m.v[u] ?? 0);
    } else {
      h[u] = 0;
    }
  }
  return z;
}

export function trainMlp(xs: Sparse[], ys: (0 | 1)[], dim: number, o: MlpOptions = DEFAULT_MLP): Mlp {
  const H = o.hidden;
  const random = rng(o.seed);
  const rows = (o.hbits === 0 ? 0 : 1 << o.hbits) + (dim - DIM);
  const emb = new Float32Array(rows * H);
  for (let i = 0; i < emb.length; i++) {
    emb[i] = (random() - 0.5) * 2 * o.init;
  }
  const gEmb = new Float32Array(rows * H).fill(1e-8);
  const b1 = new Float32Array(H).fill(0.01);
  const gB1 = new Float32Array(H).fill(1e-8);
  const v = new Float32Array(H);
  for (let u = 0; u < H; u++) {
    v[u] = (random() - 0.5) * 0.2;
  }
  const gV = new Float32Array(H).fill(1e-8);
  const w = new Float32Array(dim);
  const gW = new Float32Array(dim).fill(1e-8);
  let gB = 1e-8;
  const m: Mlp = { hidden: H, hbits: o.hbits, emb, b1, v, w, b: 0 };
  const classWeight = classWeights(ys, o.negWeight);
  const h = new Float32Array(H);
  const dh = new Float32Array(H);
  shuffledPasses(ys.length, o.epochs, random, (i) => {
    const x = xs[i];
    if (x === undefined) {
      return;
    }
    const y = ys[i] ?? 0;
    const g = (sigmoid(mlpScore(m, x, h)) - y) * classWeight[y];
    for (let u = 0; u < H; u++) {
      const a = h[u] ?? 0;
      const vu = v[u] ?? 0;
      dh[u] = a > 0 ? g * vu : 0;
      const gv = g * a + o.l2 * vu;
      gV[u] = (gV[u] ?? 0) + gv * gv;
      v[u] = vu - (o.lr * gv) / Math.sqrt(gV[u] ?? 1);
      const gb1 = dh[u] ?? 0;
      gB1[u] = (gB1[u] ?? 0) + gb1 * gb1;
      b1[u] = (b1[u] ?? 0) - (o.lr * gb1) / Math.sqrt(gB1[u] ?? 1);
    }
    gB += g * g;
    m.b -= (o.lr * g) / Math.sqrt(gB);
    // The skip's weights and the embeddings are apart: each step reads only its own.
    linearStep(w, gW, x, g, o.lrLinear, o.l2);
    for (let k = 0; k < x.idx.length; k++) {
      const row = embRow(x.idx[k] ?? 0, o.hbits);
      if (row < 0) {
        continue;
      }
      const val = x.val[k] ?? 0;
      const off = row * H;
      for (let u = 0; u < H; u++) {
        const d = dh[u] ?? 0;
        if (d === 0) {
          continue;
        }
        const e = emb[off + u] ?? 0;
        const ge = d * val + o.l2 * e;
        const a2 = Math.fround((gEmb[off + u] ?? 0) + ge * ge);
        gEmb[off + u] = a2;
        emb[off + u] = e - (o.lr * ge) / Math.sqrt(a2);
      }
    }
  });
  return m;
}
