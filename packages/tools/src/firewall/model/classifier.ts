/**
 * The prompt-injection classifier as the firewall runs it: the exported model (clf.json and
 * clf.weights.bin beside this file, format calgate-clf-v1; with a hidden layer also clf.hidden.bin)
 * loaded once, and a text's logit, the maximum over its pieces (pieces.ts) of a linear score over
 * hashed n-grams and concept features, plus, when the model has one, a hidden layer of ReLU units
 * over embeddings of the same features (see hiddenScore).
 * The model is trained in this repository (bench/firewall/classifier) from the project's own
 * corpora; nothing is fetched at run time.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DIM, type FeatureOptions, type Sparse } from './features.ts';
import { CONCEPTS } from './lexicon.ts';
import { bestPiece, DEFAULT_MODEL, features, type ModelOptions, TOTAL_DIM } from './pieces.ts';

export const FORMAT = 'calgate-clf-v1';

export interface ModelMeta {
  format: string;
  bits: number;
  totalDim: number;
  features: FeatureOptions;
  window: number;
  views: boolean;
  quotes: boolean;
  quotedNgrams: boolean;
  bias: number;
  /** Weight of one int8 step. */
  scale: number;
  /** Logit at and above which a text is flagged. */
  threshold: number;
  /** False-positive rate the threshold was picked for, on cross-validation. */
  targetFpr: number;
  /** Logit at and above which a text the rules also find is flagged (below `threshold`). */
  ruleThreshold: number;
  conceptsSha256: string;
  weightsSha256: string;
  /** A hidden layer beside the linear score (absent: the model is linear). */
  hidden?: HiddenMeta;
  trainedOn: { entries: number; injections: number; languages: number; corpus: string };
}

/**
 * The hidden layer: `units` ReLU units over an embedding table with one int8 row of `units` per
 * n-gram bucket folded to 2^hbits rows, then one per concept slot (clf.hidden.bin, row-major).
 * The logit gains Σ_u out[u] · relu(bias[u] + scale · Σ_j row(j)[u] · x_j).
 */
export interface HiddenMeta {
  units: number;
  hbits: number;
  scale: number;
  bias: number[];
  out: number[];
  sha256: string;
}

/**
 * Embedding row of feature slot `j`: n-gram buckets folded to 2^hbits rows, then the concept
 * slots; with hbits 0 only the concept slots have rows (−1: the slot does not feed the layer).
 */
export function hiddenRow(j: number, hbits: number): number {
  if (j < DIM) {
    return hbits === 0 ? -1 : j & ((1 << hbits) - 1);
  }
  return (hbits === 0 ? 0 : 1 << hbits) + (j - DIM);
}

/** Rows of the embedding table of a hidden layer with `hbits`. */
export const hiddenRows = (hbits: number): number => (hbits === 0 ? 0 : 1 << hbits) + (TOTAL_DIM - DIM);

export interface Classifier {
  meta: ModelMeta;
  /** Flag when logit ≥ threshold. */
  threshold: number;
  logit(text: string): number;
  /** The logit and the piece of the text (a window of a long one) that gave it. */
  top(text: string): { logit: number; piece: string };
  isInjection(text: string): boolean;
}

export const MODEL_DIR = new URL('./', import.meta.url);

/** SHA-256 of the concept lexicon: a model only runs with the lexicon it was trained with. */
export function conceptsSha256(): string {
  return createHash('sha256').update(JSON.stringify(CONCEPTS)).digest('hex');
}

function parseMeta(text: string): ModelMeta {
  const meta = JSON.parse(text) as Partial<ModelMeta>;
  if (meta.format !== FORMAT) {
    throw new Error(`clf.json: unknown model format ${String(meta.format)}; expected ${FORMAT}`);
  }
  for (const key of ['bits', 'totalDim', 'window', 'bias', 'scale', 'threshold', 'ruleThreshold'] as const) {
    if (typeof meta[key] !== 'number' || !Number.isFinite(meta[key])) {
      throw new Error(`clf.json: ${key} must be a number`);
    }
  }
  return meta as ModelMeta;
}

/** The hidden layer's share of the logit of features `x`; `acc` is scratch of `units` floats. */
function hiddenScore(h: HiddenMeta, emb: Int8Array, x: Sparse, acc: Float64Array): number {
  const units = h.units;
  acc.fill(0);
  for (let k = 0; k < x.idx.length; k++) {
    const row = hiddenRow(x.idx[k] ?? 0, h.hbits);
    if (row < 0) {
      continue;
    }
    const v = x.val[k] ?? 0;
    const o = row * units;
    for (let u = 0; u < units; u++) {
      acc[u] = (acc[u] ?? 0) + (emb[o + u] ?? 0) * v;
    }
  }
  let z = 0;
  for (let u = 0; u < units; u++) {
    const a = (h.bias[u] ?? 0) + h.scale * (acc[u] ?? 0);
    if (a > 0) {
      z += a * (h.out[u] ?? 0);
    }
  }
  return z;
}

/**
 * A classifier over int8 `weights` (and, for a model with a hidden layer, its int8 embedding
 * table `emb`) described by `meta`, checked against each other and the lexicon.
 */
export function classifierOf(meta: ModelMeta, weights: Int8Array, emb?: Int8Array): Classifier {
  if (weights.length !== meta.totalDim || meta.totalDim !== TOTAL_DIM) {
    throw new Error(`clf.weights.bin has ${weights.length} weights; this code expects ${TOTAL_DIM}`);
  }
  if (createHash('sha256').update(weights).digest('hex') !== meta.weightsSha256) {
    throw new Error('clf.weights.bin does not match the SHA-256 in clf.json');
  }
  if (meta.conceptsSha256 !== conceptsSha256()) {
    throw new Error('the model was trained with another concept lexicon; retrain it');
  }
  const hidden = meta.hidden;
  if (hidden !== undefined) {
    if (emb === undefined || emb.length !== hiddenRows(hidden.hbits) * hidden.units) {
      throw new Error('clf.hidden.bin is missing or does not have the size clf.json gives');
    }
    if (createHash('sha256').update(emb).digest('hex') !== hidden.sha256) {
      throw new Error('clf.hidden.bin does not match the SHA-256 in clf.json');
    }
  }
  const acc = new Float64Array(hidden?.units ?? 0);
  const options: ModelOptions = {
    ...DEFAULT_MODEL,
    features: meta.features,
    window: meta.window,
    views: meta.views,
    quotes: meta.quotes === true,
    quotedNgrams: meta.quotedNgrams === true,
  };
  const piece = (text: string): number => {
    const x = features(text, options);
    let z = 0;
    for (let k = 0; k < x.idx.length; k++) {
      z += (weights[x.idx[k] ?? 0] ?? 0) * (x.val[k] ?? 0);
    }
    const linear = meta.bias + z * meta.scale;
    return hidden === undefined || emb === undefined ? linear : linear + hiddenScore(hidden, emb, x, acc);
  };
  const top = (text: string): { logit: number; piece: string } => {
    const best = bestPiece(text, piece, options.window);
    return { logit: best.score, piece: best.piece };
  };
  const logit = (text: string): number => top(text).logit;
  return {
    meta,
    threshold: meta.threshold,
    logit,
    top,
    isInjection: (text) => logit(text) >= meta.threshold,
  };
}

const int8 = (buf: Buffer): Int8Array => new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);

/** Loads the model in `dir` (clf.json, clf.weights.bin and, with a hidden layer, clf.hidden.bin). */
export function loadClassifier(dir: URL = MODEL_DIR): Classifier {
  const meta = parseMeta(readFileSync(new URL('clf.json', dir), 'utf8'));
  const weights = int8(readFileSync(new URL('clf.weights.bin', dir)));
  return meta.hidden === undefined
    ? classifierOf(meta, weights)
    : classifierOf(meta, weights, int8(readFileSync(new URL('clf.hidden.bin', dir))));
}

let loaded: Classifier | undefined;

/** The shipped model, loaded on first use and kept for the process. */
export function shippedClassifier(): Classifier {
  loaded ??= loadClassifier();
  return loaded;
}
