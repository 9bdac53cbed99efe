// Trains the firewall's prompt-injection classifier on the DEV corpus (bench/firewall/frozen/dev),
// the training corpus (bench/firewall/train) and the spent frozen rounds (data.ts SPENT_ROUNDS), prints its cross-validation figures beside the
// rules', picks the operating point (threshold at a target false-positive rate, and the bonus a
// text gets when the rules also find it) on cross-validation, times it per field, and writes the
// model the firewall ships (packages/tools/src/firewall/model/). The fresh frozen test set is never
// read. Appends the report to bench/results/firewall-classifier.md (BENCH_RECORD=0 to skip).
// Usage: npm run bench:firewall-classifier   (FIREWALL_CV=0: train and export only)
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { classifierOf, DEFAULT_MODEL, loadClassifier, MODEL_DIR } from '@calgate/tools/firewall-model';
import { machineSummary, today } from '../../lib/machine.ts';
import { loadAll, longDescriptions, SPENT_ROUNDS } from './data.ts';
import {
  decide,
  protocolSplits,
  type Result,
  type Scored,
  scoreSplits,
  type Tally,
  TRAIN_ONLY,
  tallyDecisions,
} from './eval.ts';
import { DEFAULT_TRAIN } from './logreg.ts';
import { DEFAULT_MLP, type MlpOptions } from './mlp.ts';
import { ruleSignals } from './rules.ts';
import { classifierMethod, networkMethod, trainClassifier, writeModel } from './train.ts';
import { UNSEEN_LANGUAGE_CASES } from './unseen.ts';

const TARGET_FPR = Number(process.env.FIREWALL_TARGET_FPR ?? 0.005);
const BONUSES = [0, 1, 2, 3, 4, 6];
const RUNS = 3;
const root = fileURLToPath(new URL('../../../', import.meta.url));
const started = performance.now();
const log = (s: string): void =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${s}`);

const data = loadAll();
const langs = [...new Set(data.map((e) => e.lang))].sort();
log(
  `${data.length} texts (${data.filter((e) => e.label === 1).length} injections), ${langs.length} languages`,
);

// The rules and the invisible-text check, as the firewall applies them (rules.ts).
const { rule, always } = ruleSignals(data);
const rules = tallyDecisions(
  data.filter((e) => e.kind !== TRAIN_ONLY).map((e) => ({ e, hit: rule(e) || always(e) })),
);

const trainOptions = {
  ...DEFAULT_TRAIN,
  ...(process.env.FIREWALL_EPOCHS ? { epochs: Number(process.env.FIREWALL_EPOCHS) } : {}),
  ...(process.env.FIREWALL_L2 ? { l2: Number(process.env.FIREWALL_L2) } : {}),
  ...(process.env.FIREWALL_NEG_WEIGHT ? { negWeight: Number(process.env.FIREWALL_NEG_WEIGHT) } : {}),
};
const modelOptions = {
  ...DEFAULT_MODEL,
  quotes: process.env.FIREWALL_QUOTES !== '0',
  quotedNgrams: process.env.FIREWALL_QUOTED_NGRAMS === '1',
};
const linear = classifierMethod('classifier', modelOptions, trainOptions);
// FIREWALL_HIDDEN=16: a hidden layer of that many units beside the linear score (mlp.ts; the
// candidate of 2026-11-28 with FIREWALL_NEG_WEIGHT=8 FIREWALL_BONUS=2); unset, the linear model.
const num = (name: string, fallback: number): number =>
  process.env[name] === undefined ? fallback : Number(process.env[name]);
const network: MlpOptions | undefined =
  num('FIREWALL_HIDDEN', 0) <= 0
    ? undefined
    : {
        ...DEFAULT_MLP,
        hidden: num('FIREWALL_HIDDEN', DEFAULT_MLP.hidden),
        hbits: num('FIREWALL_HBITS', DEFAULT_MLP.hbits),
        epochs: trainOptions.epochs,
        lrLinear: trainOptions.lr,
        l2: trainOptions.l2,
        negWeight: trainOptions.negWeight,
      };
const method =
  network === undefined ? linear : networkMethod('classifier', network, linear.featuresOf, modelOptions);
const cvOn = process.env.FIREWALL_CV !== '0';
const protocols = Object.fromEntries(cvOn ? protocolSplits(data) : []);
const heldOut = data.filter((e) => e.kind !== TRAIN_ONLY);
const scored: Record<string, Scored[]> = {};
for (const [name, splits] of Object.entries(protocols)) {
  scored[name] = scoreSplits(method, splits);
  log(`classifier ${name}: ${splits.length} folds`);
}

// The rule bonus: the one that detects most on leave-one-language-out at the target FPR (ties: the smaller).
// The rule bonus: the largest whose leave-one-language-out detection is within one point of the
// best, with cv5 false positives about the target. Differences under a point are noise here, and
// then the rules (which encode known payloads) are given the larger say.
let bonus = 0;
const bonusRows: string[] = [];
if (cvOn) {
  const tried = BONUSES.map((b) => {
    const rs = ['cv5', 'lolo', 'loko'].map((n) =>
      decide(scored[n] ?? [], TARGET_FPR, { bonus: b, rule, always }),
    );
    const [c, l] = rs;
    bonusRows.push(`| ${b} | ${rs.map((r) => `${pct(r.tp, r.p)} / ${pct(r.fp, r.n)}`).join(' | ')} |`);
    return {
      b,
      detected: (l?.tp ?? 0) / Math.max(l?.p ?? 1, 1),
      withinFpr: (c?.fp ?? 0) / Math.max(c?.n ?? 1, 1) <= TARGET_FPR * 1.5,
    };
  }).filter((t) => t.withinFpr);
  const best = Math.max(...tried.map((t) => t.detected));
  bonus = Math.max(0, ...tried.filter((t) => t.detected >= best - 0.01).map((t) => t.b));
}
if (process.env.FIREWALL_BONUS !== undefined) {
  bonus = Number(process.env.FIREWALL_BONUS);
}
log(`rule bonus ${bonus}`);

const model = trainClassifier(
  data,
  `bench/firewall/frozen/dev + bench/firewall/train + spent rounds ${SPENT_ROUNDS.join(', ')}`,
  TARGET_FPR,
  bonus,
  rule,
  trainOptions,
  network,
);
// FIREWALL_EXPORT=0: an experiment, the shipped model stays as it is.
const exported = process.env.FIREWALL_EXPORT !== '0';
if (exported) {
  writeModel(MODEL_DIR, model);
}
const clf = exported ? loadClassifier(MODEL_DIR) : classifierOf(model.meta, model.weights, model.hidden);
log(exported ? 'exported' : 'trained (not exported)');

function pct(a: number, b: number): string {
  return `${((100 * a) / Math.max(b, 1)).toFixed(1)} %`;
}
const frac = (a: number, b: number): string => `${a}/${b} (${pct(a, b)})`;
function p(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}
function timeOne(f: () => unknown): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    f();
    samples.push(performance.now() - t0);
  }
  return p(samples, 0.5);
}

const final: Record<string, Result> = {};
const alone: Record<string, Result> = {};
for (const name of Object.keys(scored)) {
  alone[name] = decide(scored[name] ?? [], TARGET_FPR);
  final[name] = decide(scored[name] ?? [], TARGET_FPR, { bonus, rule, always });
}
const summaryRow = (label: string, protocol: string, r: Result): string =>
  `| ${label} | ${protocol} | ${frac(r.tp, r.p)} | ${frac(r.fp, r.n)} | ${Number.isNaN(r.auc) ? '–' : r.auc.toFixed(3)} | ${
    r.roc.length === 0 ? '–' : r.roc.map(([, t]) => (100 * t).toFixed(0)).join(' / ')
  } |`;
const summary = [
  '| model | protocol | injections detected | benign flagged | AUC | detected at pooled FPR 0.5 / 1 / 2 / 5 % |',
  '|---|---|---|---|---|---|',
  summaryRow('rules alone (detect.ts), no training', 'all', rules),
  ...Object.keys(alone).map((n) => summaryRow('classifier alone', n, alone[n] as Result)),
  ...Object.keys(final).map((n) =>
    summaryRow(`**firewall** (classifier, rules +${bonus})`, n, final[n] as Result),
  ),
].join('\n');

const cell = (t: Tally | undefined, label: 0 | 1): string =>
  t === undefined ? '–' : label === 1 ? `${t.tp}/${t.p}` : `${t.fp}/${t.n}`;
const cols = (): Result[] => [
  rules,
  ...['cv5', 'lolo', 'loko'].map((n) => final[n]).filter((r) => r !== undefined),
];
const byLang = [
  '| language | rules: detected | cv5 | lolo | rules: false pos. | cv5 | lolo |',
  '|---|---|---|---|---|---|---|',
  ...langs.map((l) => {
    const cs = cols()
      .slice(0, 3)
      .map((r) => r.byLang.get(l));
    return `| ${l} | ${cs.map((t) => cell(t, 1)).join(' | ')} | ${cs.map((t) => cell(t, 0)).join(' | ')} |`;
  }),
].join('\n');
const kindRows = (label: 0 | 1): string[] =>
  [...new Set(heldOut.filter((e) => e.label === label).map((e) => e.kind))].sort().map((k) => {
    return `| ${k} | ${cols()
      .map((r) => cell(r.byKind.get(k), label))
      .join(' | ')} |`;
  });
const byKind = [
  '| injection kind (detected) | rules | cv5 | lolo | loko |',
  '|---|---|---|---|---|',
  ...kindRows(1),
  '',
  '| benign kind (flagged) | rules | cv5 | lolo | loko |',
  '|---|---|---|---|---|',
  ...kindRows(0),
].join('\n');

// Latency of the classifier per field text (the rules run only on texts it leans towards).
for (const e of data.slice(0, 300)) {
  clf.logit(e.text);
}
const longTexts = (size: number): string[] => longDescriptions(data, size);
const latencyRows: { group: string; texts: string[] }[] = [
  { group: 'all training fields', texts: data.map((e) => e.text) },
  { group: 'synthetic 2 KB descriptions', texts: longTexts(2048) },
  { group: 'synthetic 4 KB descriptions', texts: longTexts(4096) },
];
const latency = latencyRows.map(({ group, texts }) => {
  const c = texts.map((t) => timeOne(() => clf.logit(t)));
  return `| ${group} | ${texts.length} | ${p(c, 0.5).toFixed(2)} / ${p(c, 0.95).toFixed(2)} |`;
});

const unseenRight = UNSEEN_LANGUAGE_CASES.filter((c) => clf.isInjection(c.text) === (c.label === 1)).length;
const m = model.meta;
const report = `Cross-validation on the training data only (bench/firewall/frozen/dev, bench/firewall/train and the spent frozen rounds ${SPENT_ROUNDS.join(', ')}: ${
  m.trainedOn.injections
} injections, ${m.trainedOn.entries - m.trainedOn.injections} benign texts, ${
  langs.length
} languages); the fresh frozen test set was not read. Each fold's threshold is picked on its training part (inner 3-fold) at a target false-positive rate of ${(
  100 * TARGET_FPR
).toFixed(
  1,
)} %. cv5 = 5 stratified folds; lolo = leave one language out; loko = leave one injection kind out (a fifth of the benign texts held out each time); loro = leave one of the last two spent rounds out (trained on everything else). "firewall" is the shipped decision: flagged when the logit, plus ${bonus} when the rules find a payload, reaches the threshold (hidden text is always refused).

${summary}

Rule bonus tried (detected / benign flagged; cv5 | lolo | loko): the largest within one point of the most detected on lolo, at about the target FPR on cv5, is kept.

| bonus | cv5 | lolo | loko |
|---|---|---|---|
${bonusRows.join('\n')}

${byLang}

${byKind}

Classifier time per field text, median of ${RUNS} runs each (ms, p50 / p95):

| texts | count | classifier |
|---|---|---|
${latency.join('\n')}

Hand-written texts in six languages (unseen.ts; blatant, anecdotal): ${unseenRight}/${UNSEEN_LANGUAGE_CASES.length} decided as labelled by the classifier alone.

Exported model (trained on all of it): threshold ${m.threshold.toFixed(3)}, with the rules ${m.ruleThreshold.toFixed(
  3,
)} (logit), weights SHA-256 ${m.weightsSha256.slice(0, 16)}…, ${m.totalDim} int8 weights. Run time ${(
  (performance.now() - started) / 1000
).toFixed(0)} s.
`;
console.log(`firewall classifier, ${machineSummary()}\n\n${report}`);
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/firewall-classifier.md`,
    `\n## ${today()} — ${machineSummary()}\n\n${report}`,
  );
}
