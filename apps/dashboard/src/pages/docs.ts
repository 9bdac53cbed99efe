import { api } from '../api.ts';
import { h } from '../dom.ts';

interface Docs {
  endpoint: string;
  tools: {
    name: string;
    title: string;
    description: string;
    notes?: string;
    requires: string;
    inputSchema: {
      properties?: Record<string, { description?: string; type?: unknown }>;
      required?: string[];
    };
    example: unknown;
  }[];
}

/** Where `npm run docs` serves docs/ (scripts/docs-serve.ts, DOCS_PORT's default). */
const DOCS_SITE = 'http://127.0.0.1:8790/';

/** The tool reference, rendered from GET /api/docs. */
export async function renderDocs(root: HTMLElement): Promise<void> {
  const docs = await api<Docs>('GET', '/api/docs');
  root.append(
    h(
      'p',
      { class: 'muted' },
      "Getting started, connecting accounts and agents, security and operations: the repository's ",
      h('code', {}, 'docs/'),
      '. On the machine with the checkout, ',
      h('code', {}, 'npm run docs'),
      ' serves them as a site at ',
      h('a', { href: DOCS_SITE, target: '_blank', rel: 'noopener' }, DOCS_SITE),
      '.',
    ),
    h('p', {}, 'Endpoint: ', h('code', {}, docs.endpoint), ` · ${docs.tools.length} tools`),
    h(
      'nav',
      { 'aria-label': 'Tools' },
      h(
        'ul',
        { class: 'toc' },
        docs.tools.map((tool) => h('li', {}, h('a', { href: `#tool-${tool.name}` }, tool.name))),
      ),
    ),
    ...docs.tools.map((tool) => {
      const required = new Set(tool.inputSchema.required ?? []);
      const params = Object.entries(tool.inputSchema.properties ?? {});
      return h(
        'section',
        { class: 'card', id: `tool-${tool.name}` },
        h('h2', {}, h('code', {}, tool.name), ` — ${tool.title}`),
        h('p', { class: 'muted' }, `Requires: ${tool.requires}`),
        h('p', { class: 'pre' }, tool.description),
        tool.notes === undefined ? null : h('p', { class: 'pre muted' }, tool.notes),
        params.length === 0
          ? null
          : h(
              'dl',
              {},
              params.flatMap(([name, schema]) => [
                h('dt', {}, h('code', {}, name), required.has(name) ? ' (required)' : ''),
                h('dd', {}, schema.description ?? ''),
              ]),
            ),
        h(
          'details',
          {},
          h('summary', {}, 'Example call'),
          h('pre', {}, JSON.stringify(tool.example, null, 2)),
        ),
      );
    }),
  );
}
