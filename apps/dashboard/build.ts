/** Builds the dashboard into dist/: one hashed script, one hashed stylesheet, index.html. */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = fileURLToPath(new URL('.', import.meta.url));
const dist = `${root}dist`;

await rm(dist, { recursive: true, force: true });
const result = await build({
  input: `${root}src/main.ts`,
  platform: 'browser',
  logLevel: 'warn',
  output: { dir: `${dist}/assets`, format: 'esm', entryFileNames: 'app-[hash].js', minify: true },
});
const entry = result.output.find((chunk) => chunk.type === 'chunk' && chunk.isEntry);
if (entry === undefined) {
  throw new Error('rolldown produced no entry chunk');
}
const css = await readFile(`${root}src/styles.css`);
const cssName = `styles-${createHash('sha256').update(css).digest('hex').slice(0, 10)}.css`;
await mkdir(`${dist}/assets`, { recursive: true });
await writeFile(`${dist}/assets/${cssName}`, css);
const html = (await readFile(`${root}index.html`, 'utf8'))
  .replace('%CSS%', `/assets/${cssName}`)
  .replace('%JS%', `/assets/${entry.fileName}`);
await writeFile(`${dist}/index.html`, html);
console.log(`dashboard built: dist/index.html, dist/assets/${entry.fileName}, dist/assets/${cssName}`);
