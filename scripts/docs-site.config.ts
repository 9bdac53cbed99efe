// Eleventy's configuration for the documentation site (`npm run docs`, scripts/docs-serve.ts):
// docs/*.md rendered as they are on GitHub. Links between pages are written as file paths
// (`tools.md#toolsets`), which InputPathToUrl turns into the site's URLs; headings get the ids
// GitHub gives them, so the same anchors work in both places.
import { IdAttributePlugin, InputPathToUrlTransformPlugin } from '@11ty/eleventy';

interface EleventyConfig {
  addPlugin(plugin: unknown, options?: Record<string, unknown>): void;
  addGlobalData(name: string, value: unknown): void;
  ignores: { add(pattern: string): void };
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
  return {
    dir: { input: 'docs', includes: '_includes' },
    templateFormats: ['md'],
    // Pages are Markdown only: `{{` in an example is text, never a template.
    markdownTemplateEngine: false,
    htmlTemplateEngine: 'njk',
  };
}
