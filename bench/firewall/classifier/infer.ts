// Loads an exported classifier (clf.json + clf.weights.bin) and scores field texts with it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEFAULT_MODEL, features, type ModelOptions, maxOverPieces, TOTAL_DIM } from './model.ts';
import { conceptsSha256, FORMAT, type ModelMeta } from './train.ts';

export const MODEL_DIR = new URL('./model/', import.meta.url);

export interface Classifier {
  meta: ModelMeta;
  /** Logit threshold chosen at training time (flag when logit ≥ threshold). */
  threshold: number;
  logit(text: string): number;
  isInjection(text: string): boolean;
}

function parseMeta(text: string): ModelMeta {
  const meta = JSON.parse(text) as Partial<ModelMeta>;
  if (meta.format !== FORMAT) {
    throw new Error(`unknown model format ${String(meta.format)}; expected ${FORMAT}`);
  }
  for (const key of ['bits', 'totalDim', 'window', 'bias', 'scale', 'threshold'] as const) {
    if (typeof meta[key] !== 'number') {
      throw new Error(`clf.json: ${key} must be a number`);
    }
  }
  return meta as ModelMeta;
}

/** Loads the model in `dir` and checks it against the weights file and the current lexicon. */
export function loadClassifier(dir: URL = MODEL_DIR): Classifier {
  const meta = parseMeta(readFileSync(new URL('clf.json', dir), 'utf8'));
  const buf = readFileSync(new URL('clf.weights.bin', dir));
  const w = new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  if (w.length !== meta.totalDim || meta.totalDim !== TOTAL_DIM) {
    throw new Error(`clf.weights.bin has ${w.length} weights; this code expects ${TOTAL_DIM}`);
  }
  if (createHash('sha256').update(w).digest('hex') !== meta.weightsSha256) {
    throw new Error('clf.weights.bin does not match the SHA-256 in clf.json');
  }
  if (meta.conceptsSha256 !== conceptsSha256()) {
    throw new Error('the model was trained with another concept lexicon; retrain it');
  }
  const mo: ModelOptions = {
    ...DEFAULT_MODEL,
    features: meta.features,
    window: meta.window,
    views: meta.views,
  };
  const piece = (t: string): number => {
    const x = features(t, mo);
    let z = 0;
    for (let k = 0; k < x.idx.length; k++) {
      z += (w[x.idx[k] ?? 0] ?? 0) * (x.val[k] ?? 0);
    }
    return meta.bias + z * meta.scale;
  };
  const logit = (text: string): number => maxOverPieces(text, piece, mo.window);
  return { meta, threshold: meta.threshold, logit, isInjection: (t) => logit(t) >= meta.threshold };
}
