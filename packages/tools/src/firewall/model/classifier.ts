/**
 * The prompt-injection classifier as the firewall runs it: the exported model (clf.json and
 * clf.weights.bin beside this file, format calgate-clf-v1) loaded once, and a text's logit, the
 * maximum over its pieces (pieces.ts) of a linear score over hashed n-grams and concept features.
 * The model is trained in this repository (bench/firewall/classifier) from the project's own
 * corpora; nothing is fetched at run time.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FeatureOptions } from './features.ts';
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
  trainedOn: { entries: number; injections: number; languages: number; corpus: string };
}

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

/** A classifier over int8 `weights` described by `meta` (checked against each other and the lexicon). */
export function classifierOf(meta: ModelMeta, weights: Int8Array): Classifier {
  if (weights.length !== meta.totalDim || meta.totalDim !== TOTAL_DIM) {
    throw new Error(`clf.weights.bin has ${weights.length} weights; this code expects ${TOTAL_DIM}`);
  }
  if (createHash('sha256').update(weights).digest('hex') !== meta.weightsSha256) {
    throw new Error('clf.weights.bin does not match the SHA-256 in clf.json');
  }
  if (meta.conceptsSha256 !== conceptsSha256()) {
    throw new Error('the model was trained with another concept lexicon; retrain it');
  }
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
    return meta.bias + z * meta.scale;
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

/** Loads the model in `dir` (clf.json and clf.weights.bin). */
export function loadClassifier(dir: URL = MODEL_DIR): Classifier {
  const meta = parseMeta(readFileSync(new URL('clf.json', dir), 'utf8'));
  const buf = readFileSync(new URL('clf.weights.bin', dir));
  return classifierOf(meta, new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength));
}

let loaded: Classifier | undefined;

/** The shipped model, loaded on first use and kept for the process. */
export function shippedClassifier(): Classifier {
  loaded ??= loadClassifier();
  return loaded;
}
