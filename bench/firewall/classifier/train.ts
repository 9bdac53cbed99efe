// Trains the classifier on a labelled corpus and exports it in the calgate-clf-v1 format:
// clf.json (options, bias, int8 scale, logit threshold, target FPR, SHA-256 of the lexicon and of
// the weights, training counts) and clf.weights.bin (one int8 weight per feature slot, TOTAL_DIM
// bytes, dense). Deterministic: the same corpus gives byte-identical files.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Entry } from './data.ts';
import { type Method, pickThreshold } from './eval.ts';
import { BITS, type Sparse } from './features.ts';
import { CONCEPTS } from './lexicon.ts';
import { DEFAULT_TRAIN, type LinearModel, score, type TrainOptions, train } from './logreg.ts';
import { DEFAULT_MODEL, features, type ModelOptions, maxOverPieces, TOTAL_DIM } from './model.ts';

export const FORMAT = 'calgate-clf-v1';

export interface ModelMeta {
  format: string;
  bits: number;
  totalDim: number;
  features: ModelOptions['features'];
  window: number;
  views: boolean;
  bias: number;
  scale: number;
  threshold: number;
  targetFpr: number;
  conceptsSha256: string;
  weightsSha256: string;
  trainedOn: { entries: number; injections: number; corpus: string };
}

export interface ExportedModel {
  meta: ModelMeta;
  weights: Int8Array;
}

export function conceptsSha256(): string {
  return createHash('sha256').update(JSON.stringify(CONCEPTS)).digest('hex');
}

/**
 * The classifier as a cross-validation method: features are cached per text piece, so folds
 * share the featurisation work.
 */
export function classifierMethod(
  name = 'classifier',
  mo: ModelOptions = DEFAULT_MODEL,
  opts: TrainOptions = DEFAULT_TRAIN,
): Method & { fitModel(train: Entry[]): LinearModel; featuresOf(text: string): Sparse } {
  const cache = new Map<string, Sparse>();
  const featuresOf = (t: string): Sparse => {
    let x = cache.get(t);
    if (x === undefined) {
      x = features(t, mo);
      cache.set(t, x);
    }
    return x;
  };
  const fitModel = (tr: Entry[]): LinearModel =>
    train(
      tr.map((e) => featuresOf(e.text)),
      tr.map((e) => e.label),
      TOTAL_DIM,
      opts,
    );
  return {
    name,
    featuresOf,
    fitModel,
    fit(tr) {
      const m = fitModel(tr);
      return (e) => maxOverPieces(e.text, (piece) => score(m, featuresOf(piece)), mo.window);
    },
  };
}

/**
 * Trains on all of `corpus` (texts are trained whole; scoring takes the maximum over windows),
 * picks the threshold by inner 3-fold cross-validation at `targetFpr`, quantises to int8.
 */
export function trainClassifier(corpus: Entry[], corpusName: string, targetFpr = 0.01): ExportedModel {
  const mo = DEFAULT_MODEL;
  const method = classifierMethod('export', mo);
  const threshold = pickThreshold(method, corpus, targetFpr);
  const m = method.fitModel(corpus);
  let maxAbs = 0;
  for (const v of m.w) {
    maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  const scale = maxAbs / 127 || 1;
  const weights = new Int8Array(TOTAL_DIM);
  for (let i = 0; i < TOTAL_DIM; i++) {
    weights[i] = Math.round((m.w[i] ?? 0) / scale);
  }
  const meta: ModelMeta = {
    format: FORMAT,
    bits: BITS,
    totalDim: TOTAL_DIM,
    features: mo.features,
    window: mo.window,
    views: mo.views,
    bias: m.b,
    scale,
    threshold,
    targetFpr,
    conceptsSha256: conceptsSha256(),
    weightsSha256: createHash('sha256').update(weights).digest('hex'),
    trainedOn: {
      entries: corpus.length,
      injections: corpus.filter((e) => e.label === 1).length,
      corpus: corpusName,
    },
  };
  return { meta, weights };
}

/** Writes clf.json and clf.weights.bin into `dir`. */
export function writeModel(dir: URL, model: ExportedModel): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL('clf.weights.bin', dir), model.weights);
  writeFileSync(new URL('clf.json', dir), `${JSON.stringify(model.meta, null, 2)}\n`);
}
