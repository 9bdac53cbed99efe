// Trains the classifier on a labelled corpus and exports it in the calgate-clf-v1 format:
// clf.json (options, bias, int8 scale, logit thresholds (alone, and for texts the rules find), target FPR, SHA-256 of the lexicon and of
// the weights, training counts) and clf.weights.bin (one int8 weight per feature slot, TOTAL_DIM
// bytes, dense). Deterministic: the same corpus gives byte-identical files.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import {
  BITS,
  conceptsSha256,
  DEFAULT_MODEL,
  FORMAT,
  features,
  type HiddenMeta,
  type ModelMeta,
  type ModelOptions,
  maxOverPieces,
  type Sparse,
  TOTAL_DIM,
} from '@calgate/tools/firewall-model';
import type { Entry } from './data.ts';
import { type Method, pickThreshold } from './eval.ts';
import { DEFAULT_TRAIN, type LinearModel, score, type TrainOptions, train } from './logreg.ts';
import { type Mlp, type MlpOptions, mlpScore, trainMlp } from './mlp.ts';

export interface ExportedModel {
  meta: ModelMeta;
  weights: Int8Array;
  /** The hidden layer's embedding table (models with one). */
  hidden?: Int8Array;
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

/** The network with a hidden layer (mlp.ts) as a cross-validation method, features cached per piece. */
export function networkMethod(
  name: string,
  o: MlpOptions,
  featuresOf: (text: string) => Sparse,
  mo: ModelOptions = DEFAULT_MODEL,
  ruleBonus = 0,
  rule?: (e: Entry) => boolean,
): Method & { fitNetwork(train: Entry[]): Mlp } {
  const fitNetwork = (tr: Entry[]): Mlp =>
    trainMlp(
      tr.map((e) => featuresOf(e.text)),
      tr.map((e) => e.label),
      TOTAL_DIM,
      o,
    );
  return {
    name,
    fitNetwork,
    fit(tr) {
      const m = fitNetwork(tr);
      const h = new Float32Array(o.hidden);
      return (e) =>
        maxOverPieces(e.text, (piece) => mlpScore(m, featuresOf(piece), h), mo.window) +
        (ruleBonus > 0 && rule?.(e) === true ? ruleBonus : 0);
    },
  };
}

/** `values` as int8 steps of one scale (the largest magnitude is 127 steps). */
function quantise(values: Float32Array): { q: Int8Array; scale: number } {
  let maxAbs = 0;
  for (const v of values) {
    maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  const scale = maxAbs / 127 || 1;
  const q = new Int8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    q[i] = Math.round((values[i] ?? 0) / scale);
  }
  return { q, scale };
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
  /** With a hidden layer (mlp.ts) of these options; without, the linear model. */
  network?: MlpOptions,
): ExportedModel {
  const mo: ModelOptions = {
    ...DEFAULT_MODEL,
    quotes: process.env.FIREWALL_QUOTES !== '0',
    quotedNgrams: process.env.FIREWALL_QUOTED_NGRAMS === '1',
  };
  const method = classifierMethod('export', mo, opts, ruleBonus, rule);
  const net =
    network === undefined
      ? undefined
      : networkMethod('export', network, method.featuresOf, mo, ruleBonus, rule);
  const threshold = pickThreshold(net ?? method, corpus, targetFpr);
  let m: LinearModel;
  let hidden: { emb: Int8Array; meta: HiddenMeta } | undefined;
  if (net === undefined || network === undefined) {
    m = method.fitModel(corpus);
  } else {
    const n = net.fitNetwork(corpus);
    m = { w: n.w, b: n.b };
    const e = quantise(n.emb);
    hidden = {
      emb: e.q,
      meta: {
        units: n.hidden,
        hbits: n.hbits,
        scale: e.scale,
        bias: Array.from(n.b1),
        out: Array.from(n.v),
        sha256: createHash('sha256').update(e.q).digest('hex'),
      },
    };
  }
  const { q: weights, scale } = quantise(m.w);
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
    ...(hidden === undefined ? {} : { hidden: hidden.meta }),
    trainedOn: {
      entries: corpus.length,
      injections: corpus.filter((e) => e.label === 1).length,
      languages: new Set(corpus.map((e) => e.lang)).size,
      corpus: corpusName,
    },
  };
  return hidden === undefined ? { meta, weights } : { meta, weights, hidden: hidden.emb };
}

/** Writes clf.json and clf.weights.bin into `dir`. */
export function writeModel(dir: URL, model: ExportedModel): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL('clf.weights.bin', dir), model.weights);
  if (model.hidden !== undefined) {
    writeFileSync(new URL('clf.hidden.bin', dir), model.hidden);
  } else {
    rmSync(new URL('clf.hidden.bin', dir), { force: true });
  }
  writeFileSync(new URL('clf.json', dir), `${JSON.stringify(model.meta, null, 2)}\n`);
}
