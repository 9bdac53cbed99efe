// Eleventy's configuration for the documentation site (`npm run docs`, scripts/docs-serve.ts):
// docs/*.md rendered as they are on GitHub. Links between pages are written as file paths
// (`tools.md#toolsets`), which InputPathToUrl turns into the site's URLs; headings get the ids
// GitHub gives them, so the same anchors work in both places.
import { readFileSync } from 'node:fs';
import { IdAttributePlugin, InputPathToUrlTransformPlugin } from '@11ty/eleventy';

interface EleventyConfig {
  addPlugin(plugin: unknown, options?: Record<string, unknown>): void;
  addGlobalData(name: string, value: unknown): void;
  addTemplate(path: string, content: string): void;
  addTransform(name: string, transform: (content: string) => string): void;
}

/** A page's title: its first heading (the generated pages start with a comment). */
function titleOf(inputPath: string): string {
  const heading = /^# (.+)$/m.exec(readFileSync(inputPath, 'utf8'))?.[1];
  return heading === undefined ? 'Calgate documentation' : `${heading.replace(/`/g, '')} · Calgate`;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

// biome-ignore lint/style/noDefaultExport: Eleventy reads its configuration from the default export.
export default function docsSite(config: EleventyConfig) {
  config.addPlugin(InputPathToUrlTransformPlugin);
  config.addPlugin(IdAttributePlugin, { slugify: githubSlug });
  config.addGlobalData('layout', 'page.njk');
  config.addGlobalData('eleventyComputed', {
    title: (data: { page: { inputPath: string } }) =>
      data.page.inputPath.endsWith('developers.md')
        ? 'Developing Calgate · Calgate'
        : titleOf(data.page.inputPath),
  });
  // DEVELOPERS.md stays at the repository's root (GitHub shows it there); the site has it as /developers/.
  config.addTemplate('developers.md', readFileSync('DEVELOPERS.md', 'utf8'));
  config.addTransform('developers-links', (content) =>
    content.replaceAll('href="../DEVELOPERS.md', 'href="/developers/'),
  );
  return {
    dir: { input: 'docs', includes: '_includes' },
    templateFormats: ['md'],
    // Pages are Markdown only: `{{` in an example is text, never a template.
    markdownTemplateEngine: false,
    htmlTemplateEngine: 'njk',
  };
}
