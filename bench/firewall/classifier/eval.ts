// Cross-validation over the DEV corpus. Protocols:
// - cv5: 5 folds stratified by label × language × kind;
// - lolo: leave one language out (one fold per language, pooled): a language never seen labelled;
// - loko: leave one injection kind out, with a stratified 20 % of the benign texts held out each
//   time: an attack style never seen labelled.
// The decision threshold of every fold is chosen on that fold's training part only: the
// (1 − target FPR) quantile of benign out-of-fold scores from an inner 3-fold split.
import type { Entry } from './data.ts';

export interface Method {
  name: string;
  /** Trains on `train` and returns a scorer (higher = more likely an injection). */
  fit(train: Entry[]): (e: Entry) => number;
}

export interface Split {
  train: Entry[];
  test: Entry[];
}

export interface Tally {
  /** Injections flagged / injections, benign texts flagged / benign texts. */
  tp: number;
  p: number;
  fp: number;
  n: number;
}

export interface Result extends Tally {
  auc: number;
  /** [FPR, detected share] at thresholds giving exactly that FPR on the pooled held-out scores. */
  roc: [number, number][];
  byLang: Map<string, Tally>;
  byKind: Map<string, Tally>;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** Fold number (0…k−1) of each entry, stratified by label × language × kind; deterministic. */
export function stratifiedFolds(es: Entry[], k: number, salt = 0): number[] {
  const groups = new Map<string, Entry[]>();
  for (const e of es) {
    const g = `${e.label}|${e.lang}|${e.kind}`;
    const list = groups.get(g) ?? [];
    list.push(e);
    groups.set(g, list);
  }
  const fold = new Map<Entry, number>();
  for (const [g, list] of groups) {
    list.sort((a, b) => hash(`${a.id}${salt}`) - hash(`${b.id}${salt}`));
    const off = hash(`${g}${salt}`) % k;
    list.forEach((e, i) => {
      fold.set(e, (i + off) % k);
    });
  }
  return es.map((e) => fold.get(e) ?? 0);
}

/** Area under the ROC curve (ties count half). */
export function auc(pos: number[], neg: number[]): number {
  const all = [...pos.map((s) => ({ s, y: 1 })), ...neg.map((s) => ({ s, y: 0 }))].sort((a, b) => a.s - b.s);
  let sumPos = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j < all.length && all[j]?.s === all[i]?.s) {
      j++;
    }
    const avgRank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) {
      sumPos += all[k]?.y === 1 ? avgRank : 0;
    }
    i = j;
  }
  return (sumPos - (pos.length * (pos.length + 1)) / 2) / Math.max(pos.length * neg.length, 1);
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

/** Threshold from inner 3-fold out-of-fold scores on `train`: the benign (1 − targetFpr) quantile. */
export function pickThreshold(m: Method, train: Entry[], targetFpr: number): number {
  const folds = stratifiedFolds(train, 3, 7);
  const neg: number[] = [];
  for (let f = 0; f < 3; f++) {
    const score = m.fit(train.filter((_, i) => folds[i] !== f));
    train.forEach((e, i) => {
      if (folds[i] === f && e.label === 0) {
        neg.push(score(e));
      }
    });
  }
  return quantile(neg, 1 - targetFpr) + 1e-9;
}

function tally(map: Map<string, Tally>, key: string): Tally {
  const t = map.get(key) ?? { tp: 0, p: 0, fp: 0, n: 0 };
  map.set(key, t);
  return t;
}

function count(r: Tally, label: 0 | 1, hit: boolean): void {
  if (label === 1) {
    r.p++;
    r.tp += hit ? 1 : 0;
  } else {
    r.n++;
    r.fp += hit ? 1 : 0;
  }
}

/** Decisions of an already-decided list (entry, flagged) as a Result without scores. */
export function tallyDecisions(decisions: { e: Entry; hit: boolean }[]): Result {
  const r: Result = {
    tp: 0,
    p: 0,
    fp: 0,
    n: 0,
    auc: Number.NaN,
    roc: [],
    byLang: new Map(),
    byKind: new Map(),
  };
  for (const { e, hit } of decisions) {
    count(r, e.label, hit);
    count(tally(r.byLang, e.lang), e.label, hit);
    count(tally(r.byKind, e.kind), e.label, hit);
  }
  return r;
}

/**
 * Runs `m` over `splits`: each split's threshold is picked on its training part, its test part is
 * scored. `orRule` (when given) flags an entry in addition to the classifier.
 */
export function crossValidate(
  m: Method,
  splits: Split[],
  targetFpr: number,
  orRule?: (e: Entry) => boolean,
): { alone: Result; withRule?: Result } {
  const scored: { e: Entry; v: number; thr: number }[] = [];
  for (const sp of splits) {
    const thr = pickThreshold(m, sp.train, targetFpr);
    const score = m.fit(sp.train);
    for (const e of sp.test) {
      scored.push({ e, v: score(e), thr });
    }
  }
  const alone = tallyDecisions(scored.map(({ e, v, thr }) => ({ e, hit: v >= thr })));
  const pos = scored.filter((s) => s.e.label === 1).map((s) => s.v);
  const neg = scored.filter((s) => s.e.label === 0).map((s) => s.v);
  alone.auc = auc(pos, neg);
  for (const f of [0.005, 0.01, 0.02, 0.05]) {
    const t = quantile(neg, 1 - f) + 1e-9;
    alone.roc.push([f, pos.filter((v) => v >= t).length / Math.max(pos.length, 1)]);
  }
  if (orRule === undefined) {
    return { alone };
  }
  const withRule = tallyDecisions(scored.map(({ e, v, thr }) => ({ e, hit: v >= thr || orRule(e) })));
  return { alone, withRule };
}

export function cv5(dev: Entry[]): Split[] {
  const f = stratifiedFolds(dev, 5);
  return [0, 1, 2, 3, 4].map((k) => ({
    train: dev.filter((_, i) => f[i] !== k),
    test: dev.filter((_, i) => f[i] === k),
  }));
}

export function lolo(dev: Entry[]): Split[] {
  return [...new Set(dev.map((e) => e.lang))].map((l) => ({
    train: dev.filter((e) => e.lang !== l),
    test: dev.filter((e) => e.lang === l),
  }));
}

export function loko(dev: Entry[]): Split[] {
  const benign = dev.filter((e) => e.label === 0);
  const f = stratifiedFolds(benign, 5, 3);
  const kinds = [...new Set(dev.filter((e) => e.label === 1).map((e) => e.kind))];
  return kinds.map((k, i) => {
    const held = new Set(benign.filter((_, j) => f[j] === i % 5));
    return {
      train: dev.filter((e) => (e.label === 1 ? e.kind !== k : !held.has(e))),
      test: dev.filter((e) => (e.label === 1 ? e.kind === k : held.has(e))),
    };
  });
}
