// Ensembles of the held-out scores families.ts saved: each text's score is the weighted mean of the
// models' logits, decided as families.ts decides (exactly FIREWALL_TARGET_FPR benign flagged on the
// pooled held-out scores, alone and with the rule bonus). Nothing is refitted.
// Usage: node bench/firewall/classifier/ensemble.ts linear mlp [weight of the second …]
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Entry, loadAll } from './data.ts';
import { decide, type Scored } from './eval.ts';
import { ruleSignals } from './rules.ts';

const TARGET_FPR = Number(process.env.FIREWALL_TARGET_FPR ?? 0.005);
const BONUSES = (process.env.FIREWALL_BONUS ?? '3').split(',').map(Number);
const data = loadAll();
const byId = new Map<string, Entry>(data.map((e) => [e.id, e]));
const { rule, always } = ruleSignals(data);

const names = process.argv.slice(2).filter((a) => Number.isNaN(Number(a)));
const weights = process.argv
  .slice(2)
  .filter((a) => !Number.isNaN(Number(a)))
  .map(Number);
type Saved = Record<string, { id: string; fold: number; v: number }[]>;
const models = names.map(
  (n) =>
    (
      JSON.parse(
        readFileSync(join(process.env.FAMILY_DIR ?? join(tmpdir(), 'calgate-families'), `${n}.json`), 'utf8'),
      ) as {
        saved: Saved;
      }
    ).saved,
);
const w = names.map((_, i) => (i === 0 ? 1 : (weights[i - 1] ?? 1)));
const pct = (a: number, b: number): string => `${((100 * a) / Math.max(b, 1)).toFixed(1)} %`;
for (const protocol of Object.keys(models[0] ?? {})) {
  const rows = models.map((m) => m[protocol] ?? []);
  const first = rows[0] ?? [];
  if (rows.some((r) => r.length !== first.length)) {
    console.log(`${protocol}: models scored different folds; skipped`);
    continue;
  }
  const folds: Scored[] = [];
  first.forEach((row, i) => {
    const e = byId.get(row.id);
    if (e === undefined) {
      throw new Error(`unknown text ${row.id}`);
    }
    let v = 0;
    rows.forEach((r, k) => {
      v += (w[k] ?? 1) * (r[i]?.v ?? 0);
    });
    v /= w.reduce((a, b) => a + b, 0);
    const f = folds[row.fold] ?? { inner: [], test: [] };
    folds[row.fold] = f;
    f.test.push({ e, v });
  });
  const alone = decide(folds, TARGET_FPR);
  for (const bonus of BONUSES) {
    const fw = decide(folds, TARGET_FPR, { bonus, rule, always });
    const kinds = [...fw.byKind].filter(([, t]) => t.p > 0).map(([k, t]) => `${k} ${t.tp}/${t.p}`);
    const langs = [...fw.byLang].filter(([, t]) => t.p > 0).map(([k, t]) => `${k} ${t.tp}/${t.p}`);
    console.log(
      `${names.map((n, i) => `${n}×${w[i]}`).join(' + ')} ${protocol}: alone ${pct(alone.tp, alone.p)} / ${pct(alone.fp, alone.n)}, firewall(+${bonus}) ${pct(fw.tp, fw.p)} / ${pct(fw.fp, fw.n)}, AUC ${alone.auc.toFixed(4)}, pooled@0.5/1/2% ${alone.roc
        .slice(0, 3)
        .map(([, t]) => (100 * t).toFixed(1))
        .join(
          '/',
        )}\n  kinds: ${kinds.join(', ')}${process.env.BY_LANG === '1' ? `\n  languages: ${langs.join(', ')}` : ''}`,
    );
  }
}
