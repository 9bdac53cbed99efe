// Time per field of two exported models side by side (interleaved, so both see the same machine
// load): the training fields and synthetic 2 KB and 4 KB descriptions made of them. Wall time per
// field (median of 3 runs) and process CPU time per field (median of 3 runs).
// Usage: node bench/firewall/classifier/speed.ts <model dir A> <model dir B>
import { pathToFileURL } from 'node:url';
import { loadClassifier } from '@calgate/tools/firewall-model';
import { loadAll, longDescriptions } from './data.ts';

const dirs = process.argv.slice(2, 4);
const models = dirs.map((d) => loadClassifier(pathToFileURL(d.endsWith('/') ? d : `${d}/`)));
const data = loadAll();
const longTexts = (size: number): string[] => longDescriptions(data, size);
const q = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))] ?? 0;
const med3 = (f: () => number): number => q([f(), f(), f()], 0.5);
for (const [group, texts] of [
  ['training fields (every 5th)', data.filter((_, i) => i % 5 === 0).map((e) => e.text)],
  ['synthetic 2 KB descriptions', longTexts(2048)],
  ['synthetic 4 KB descriptions', longTexts(4096)],
] as const) {
  const wall = models.map((): number[] => []);
  const cpu = models.map((): number[] => []);
  for (const m of models) {
    for (const t of texts.slice(0, 100)) {
      m.logit(t);
    }
  }
  for (const t of texts) {
    models.forEach((m, k) => {
      wall[k]?.push(
        med3(() => {
          const t0 = performance.now();
          m.logit(t);
          return performance.now() - t0;
        }),
      );
      cpu[k]?.push(
        med3(() => {
          const c0 = process.cpuUsage();
          m.logit(t);
          const c = process.cpuUsage(c0);
          return (c.user + c.system) / 1000;
        }),
      );
    });
  }
  models.forEach((_, k) => {
    const w = wall[k] ?? [];
    const c = cpu[k] ?? [];
    console.log(
      `| ${dirs[k]} | ${group} | ${texts.length} | ${q(w, 0.5).toFixed(2)} / ${q(w, 0.95).toFixed(2)} | ${q(c, 0.5).toFixed(2)} / ${q(c, 0.95).toFixed(2)} |`,
    );
  });
}
