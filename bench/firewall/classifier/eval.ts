// Cross-validation over the DEV corpus. Protocols:
// - cv5: 5 folds stratified by label × language × kind;
// - lolo: leave one language out (one fold per language, pooled): a language never seen labelled;
// - loko: leave one injection kind out, with a stratified 20 % of the benign texts held out each
//   time: an attack style never seen labelled.
// The decision threshold of every fold is chosen on that fold's training part only: the
// (1 − target FPR) quantile of benign out-of-fold scores from an inner 3-fold split.
import type { Entry } from './data.ts';

/** Texts of this kind (the corpus written with the rules) are trained on but never scored in a fold. */
export const TRAIN_ONLY = 'rules-corpus';

/** `splits` with the train-only texts taken out of every test part. */
export function scoredOnlyOnHeldOut(splits: Split[]): Split[] {
  return splits.map((sp) => ({ train: sp.train, test: sp.test.filter((e) => e.kind !== TRAIN_ONLY) }));
}

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

/** One split scored: out-of-fold logits of its training part (inner 3 folds) and its test logits. */
export interface Scored {
  inner: { e: Entry; v: number }[];
  test: { e: Entry; v: number }[];
}

/**
 * FIREWALL_INNER=0: no inner folds (4 times faster); every split is then decided at the threshold
 * giving the target FPR on the pooled held-out benign scores, for comparing models at an equal
 * benign rate.
 */
export const INNER = process.env.FIREWALL_INNER !== '0';

/** Scores every split once; thresholds and rule bonuses are then tried on the cached logits. */
export function scoreSplits(m: Method, splits: Split[], innerFolds = INNER): Scored[] {
  return splits.map((sp) => {
    const folds = stratifiedFolds(sp.train, 3, 7);
    const inner: { e: Entry; v: number }[] = [];
    for (let f = 0; f < (innerFolds ? 3 : 0); f++) {
      const score = m.fit(sp.train.filter((_, i) => folds[i] !== f));
      sp.train.forEach((e, i) => {
        if (folds[i] === f && e.label === 0) {
          inner.push({ e, v: score(e) });
        }
      });
    }
    const score = m.fit(sp.train);
    return { inner, test: sp.test.map((e) => ({ e, v: score(e) })) };
  });
}

export interface Decision {
  /** Added to the logit of a text the rules find. */
  bonus: number;
  rule?: (e: Entry) => boolean;
  /** Flags regardless of the score (hidden text, refused before any scoring). */
  always?: (e: Entry) => boolean;
}

/**
 * Decisions on scored splits: each split's threshold is the (1 − targetFpr) quantile of its inner
 * benign scores (logit + bonus where the rules find something); a test text is flagged at or above it.
 */
export function decide(scored: Scored[], targetFpr: number, d: Decision = { bonus: 0 }): Result {
  const s = (e: Entry, v: number): number => v + (d.bonus > 0 && d.rule?.(e) === true ? d.bonus : 0);
  const out: { e: Entry; v: number; hit: boolean }[] = [];
  const pooled =
    quantile(
      scored.flatMap((sp) => sp.test.filter(({ e }) => e.label === 0).map(({ e, v }) => s(e, v))),
      1 - targetFpr,
    ) + 1e-9;
  for (const sp of scored) {
    const thr =
      sp.inner.length === 0
        ? pooled
        : quantile(
            sp.inner.map(({ e, v }) => s(e, v)),
            1 - targetFpr,
          ) + 1e-9;
    for (const { e, v } of sp.test) {
      out.push({ e, v: s(e, v), hit: s(e, v) >= thr || d.always?.(e) === true });
    }
  }
  const r = tallyDecisions(out);
  const pos = out.filter((x) => x.e.label === 1).map((x) => x.v);
  const neg = out.filter((x) => x.e.label === 0).map((x) => x.v);
  r.auc = auc(pos, neg);
  for (const f of [0.005, 0.01, 0.02, 0.05]) {
    const t = quantile(neg, 1 - f) + 1e-9;
    r.roc.push([f, pos.filter((v) => v >= t).length / Math.max(pos.length, 1)]);
  }
  return r;
}

/** Runs `m` over `splits` at `targetFpr` (the classifier alone). */
export function crossValidate(m: Method, splits: Split[], targetFpr: number): Result {
  return decide(scoreSplits(m, splits), targetFpr);
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
  const kinds = [...new Set(dev.filter((e) => e.label === 1 && e.kind !== TRAIN_ONLY).map((e) => e.kind))];
  return kinds.map((k, i) => {
    const held = new Set(benign.filter((_, j) => f[j] === i % 5));
    return {
      train: dev.filter((e) => (e.label === 1 ? e.kind !== k : !held.has(e))),
      test: dev.filter((e) => (e.label === 1 ? e.kind === k : held.has(e))),
    };
  });
}

/**
 * Leave one spent round out: each of the last two spent frozen rounds (ids `testN:…`, see
 * SPENT_ROUNDS) is scored by a model trained on everything else, with the threshold from the
 * training part — the closest stand-in for a fresh round written by people who saw no corpus.
 */
export function loro(dev: Entry[]): Split[] {
  const roundOf = (e: Entry): string | undefined => /^(test\d*):/.exec(e.id)?.[1];
  const rounds = [...new Set(dev.map(roundOf).filter((r) => r !== undefined))].sort().slice(-2);
  return rounds.map((r) => ({
    train: dev.filter((e) => roundOf(e) !== r),
    test: dev.filter((e) => roundOf(e) === r),
  }));
}

/**
 * The protocols' folds, scored only on held-out texts: those FIREWALL_PROTOCOLS names (default
 * cv5,lolo,loko; loro also when spent rounds are trained on), and of lolo and loko only the folds of FIREWALL_LOLO_LANGS=ar,ja and
 * FIREWALL_LOKO_KINDS=obfuscated when set (a quicker look).
 */
export function protocolSplits(data: Entry[]): [string, Split[]][] {
  const list = (name: string): string[] | undefined => process.env[name]?.split(',');
  const langs = list('FIREWALL_LOLO_LANGS');
  const kinds = list('FIREWALL_LOKO_KINDS');
  const kept = (protocol: string) => (sp: Split) =>
    protocol === 'lolo' && langs !== undefined
      ? langs.includes(sp.test[0]?.lang ?? '')
      : protocol === 'loko' && kinds !== undefined
        ? sp.test.some((e) => e.label === 1 && kinds.includes(e.kind))
        : true;
  const spent = data.some((e) => /^test\d*:/.test(e.id));
  const wanted = list('FIREWALL_PROTOCOLS') ?? ['cv5', 'lolo', 'loko', ...(spent ? ['loro'] : [])];
  return Object.entries({ cv5, lolo, loko, loro })
    .filter(([name]) => wanted.includes(name))
    .map(([name, split]) => [name, scoredOnlyOnHeldOut(split(data)).filter(kept(name))]);
}
