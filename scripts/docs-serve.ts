// `npm run docs`: the documentation in docs/ as a site, rendered by Eleventy (pinned in
// package.json, configured in scripts/docs-site.config.ts) and served with live reload on
// DOCS_PORT (default 8790). Nothing is fetched from the network.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Eleventy } from '@11ty/eleventy';

const root = fileURLToPath(new URL('..', import.meta.url));
const port = Number(process.env.DOCS_PORT ?? '8790');
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`DOCS_PORT must be a TCP port number, not '${process.env.DOCS_PORT}'.\n`);
  process.exit(2);
}
process.chdir(root);
const output = await mkdtemp(join(tmpdir(), 'calgate-docs-'));
const site = new Eleventy('docs', output, {
  configPath: 'scripts/docs-site.config.ts',
  quietMode: true,
  runMode: 'serve',
});
await site.init();
await site.watch();
await site.serve(port);
process.stdout.write(`Calgate documentation on http://127.0.0.1:${port}/ (Ctrl-C stops it)\n`);
