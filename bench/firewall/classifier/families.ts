// Compares model families on cross-validation of the training data only (the frozen test sets are
// never read): every protocol (cv5, lolo, loko) is decided at exactly FIREWALL_TARGET_FPR (0.5 %)
// benign flagged on its pooled held-out scores, so models are compared at an equal benign rate.
// Held-out scores are written to $FAMILY_DIR/<model>.json (default: calgate-families in the temporary folder), so ensembles can be compared
// without refitting (ensemble.ts).
// Usage: node bench/firewall/classifier/families.ts linear mlp   (FIREWALL_LOLO_LANGS / FIREWALL_LOKO_KINDS: fewer folds)
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_MODEL, type Sparse } from '@calgate/tools/firewall-model';
import { loadAll } from './data.ts';
import { decide, type Method, protocolSplits, type Result, type Scored, scoreSplits } from './eval.ts';
import { DEFAULT_TRAIN } from './logreg.ts';
import { DEFAULT_MLP, type MlpOptions } from './mlp.ts';
import { ruleSignals } from './rules.ts';
import { classifierMethod, networkMethod } from './train.ts';

const TARGET_FPR = Number(process.env.FIREWALL_TARGET_FPR ?? 0.005);
const BONUS = Number(process.env.FIREWALL_BONUS ?? 3);
const started = performance.now();
const log = (s: string): void =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${s}`);

const data = loadAll();
const { rule, always } = ruleSignals(data);
const linear = classifierMethod('linear', DEFAULT_MODEL);
const featuresOf = (t: string): Sparse => linear.featuresOf(t);

const num = (name: string, fallback: number): number =>
  process.env[name] === undefined ? fallback : Number(process.env[name]);
const mlpOptions: MlpOptions = {
  hidden: num('MLP_H', DEFAULT_MLP.hidden),
  hbits: num('MLP_HBITS', DEFAULT_MLP.hbits),
  epochs: num('MLP_EPOCHS', DEFAULT_MLP.epochs),
  lr: num('MLP_LR', DEFAULT_MLP.lr),
  lrLinear: num('MLP_LRLIN', DEFAULT_MLP.lrLinear),
  l2: num('MLP_L2', DEFAULT_MLP.l2),
  seed: num('MLP_SEED', DEFAULT_MLP.seed),
  init: num('MLP_INIT', DEFAULT_MLP.init),
  negWeight: num('MLP_NEG_WEIGHT', DEFAULT_MLP.negWeight),
};
const METHODS: Record<string, () => Method> = {
  linear: () => linear,
  mlp: () => networkMethod('mlp', mlpOptions, featuresOf),
  // The linear model with benign texts weighted more (FIREWALL_NEG_WEIGHT) or other epochs / L2.
  linearw: () =>
    classifierMethod('linearw', DEFAULT_MODEL, {
      ...DEFAULT_TRAIN,
      negWeight: num('FIREWALL_NEG_WEIGHT', DEFAULT_TRAIN.negWeight),
      epochs: num('FIREWALL_EPOCHS', DEFAULT_TRAIN.epochs),
      l2: num('FIREWALL_L2', DEFAULT_TRAIN.l2),
    }),
};

const protocols = protocolSplits(data);

const pct = (a: number, b: number): string => `${((100 * a) / Math.max(b, 1)).toFixed(1)} %`;
const tag = process.env.FAMILY_TAG ?? '';
const out = pathToFileURL(`${process.env.FAMILY_DIR ?? join(tmpdir(), 'calgate-families')}/`);
mkdirSync(out, { recursive: true });
for (const name of process.argv.slice(2)) {
  const make = METHODS[name];
  if (make === undefined) {
    throw new Error(`unknown model ${name}; known: ${Object.keys(METHODS).join(', ')}`);
  }
  const method = make();
  const saved: Record<string, { id: string; fold: number; v: number }[]> = {};
  const lines: string[] = [];
  for (const [pname, splits] of protocols) {
    const t0 = performance.now();
    const scored: Scored[] = scoreSplits(method, splits, false);
    saved[pname] = scored.flatMap((sp, fold) => sp.test.map(({ e, v }) => ({ id: e.id, fold, v })));
    const alone: Result = decide(scored, TARGET_FPR);
    const fw: Result = decide(scored, TARGET_FPR, { bonus: BONUS, rule, always });
    const kinds = [...fw.byKind].filter(([, t]) => t.p > 0).map(([k, t]) => `${k} ${t.tp}/${t.p}`);
    const line = `${name}${tag} ${pname}: alone ${pct(alone.tp, alone.p)} / ${pct(alone.fp, alone.n)}, firewall(+${BONUS}) ${pct(fw.tp, fw.p)} / ${pct(fw.fp, fw.n)}, AUC ${alone.auc.toFixed(4)}, pooled@0.5/1/2% ${alone.roc
      .slice(0, 3)
      .map(([, t]) => (100 * t).toFixed(1))
      .join('/')} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n  kinds: ${kinds.join(', ')}`;
    lines.push(line);
    log(line);
  }
  writeFileSync(
    new URL(`${name}${tag}.json`, out),
    JSON.stringify({ options: name === 'mlp' ? mlpOptions : {}, saved }),
  );
  console.log(lines.join('\n'));
}
