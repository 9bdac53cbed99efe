// Trains the classifier on a labelled corpus and exports it in the calgate-clf-v1 format:
// clf.json (options, bias, int8 scale, logit thresholds (alone, and for texts the rules find), target FPR, SHA-256 of the lexicon and of
// the weights, training counts) and clf.weights.bin (one int8 weight per feature slot, TOTAL_DIM
// bytes, dense). Deterministic: the same corpus gives byte-identical files.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import {
  BITS,
  conceptsSha256,
  DEFAULT_MODEL,
  FORMAT,
  features,
  type ModelMeta,
  type ModelOptions,
  maxOverPieces,
  type Sparse,
  TOTAL_DIM,
} from '@calgate/tools/firewall-model';
import type { Entry } from './data.ts';
import { type Method, pickThreshold } from './eval.ts';
import { DEFAULT_TRAIN, type LinearModel, score, type TrainOptions, train } from './logreg.ts';

export interface ExportedModel {
  meta: ModelMeta;
  weights: Int8Array;
}

/**
 * The classifier as a cross-validation method: features are cached per text piece, so folds
 * share the featurisation work.
 */
export function classifierMethod(
  name = 'classifier',
  mo: ModelOptions = DEFAULT_MODEL,
  opts: TrainOptions = DEFAULT_TRAIN,
  /** Added to the logit of a text the rules find (0: the rules are not used). */
  ruleBonus = 0,
  rule?: (e: Entry) => boolean,
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
      return (e) =>
        maxOverPieces(e.text, (piece) => score(m, featuresOf(piece)), mo.window) +
        (ruleBonus > 0 && rule?.(e) === true ? ruleBonus : 0);
    },
  };
}

/**
 * Trains on all of `corpus` (texts are trained whole; scoring takes the maximum over windows),
 * picks the threshold by inner 3-fold cross-validation at `targetFpr` on the logit plus
 * `ruleBonus` for texts the rules find, quantises to int8.
 */
export function trainClassifier(
  corpus: Entry[],
  corpusName: string,
  targetFpr = 0.005,
  ruleBonus = 0,
  rule?: (e: Entry) => boolean,
  opts: TrainOptions = DEFAULT_TRAIN,
): ExportedModel {
  const mo: ModelOptions = {
    ...DEFAULT_MODEL,
    quotes: process.env.FIREWALL_QUOTES !== '0',
    quotedNgrams: process.env.FIREWALL_QUOTED_NGRAMS === '1',
  };
  const method = classifierMethod('export', mo, opts, ruleBonus, rule);
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
    quotes: mo.quotes,
    quotedNgrams: mo.quotedNgrams,
    bias: m.b,
    scale,
    threshold,
    targetFpr,
    ruleThreshold: ruleBonus > 0 ? threshold - ruleBonus : threshold,
    conceptsSha256: conceptsSha256(),
    weightsSha256: createHash('sha256').update(weights).digest('hex'),
    trainedOn: {
      entries: corpus.length,
      injections: corpus.filter((e) => e.label === 1).length,
      languages: new Set(corpus.map((e) => e.lang)).size,
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
