import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../../../scripts/docs-generate.ts';
import { ROOT } from './docs-blocks.ts';

describe('generated documentation', () => {
  it.each(Object.entries(generatedFiles()))('%s is what npm run docs:generate writes', async (path, text) => {
    expect(await readFile(join(ROOT, path), 'utf8'), `run npm run docs:generate (${path})`).toBe(text);
  });

  it('the tool reference holds every tool of the catalogue, with its example', () => {
    const reference = generatedFiles()['docs/tool-reference.md'] ?? '';
    const tools = [...reference.matchAll(/^### `(\w+)`$/gm)].map((match) => match[1]);
    const examples = [
      ...reference.matchAll(/<!-- docs-check: tool example (\w+) -->\n```json\n\{\n {2}"tool"/g),
    ].map((match) => match[1]);
    expect(tools.length).toBeGreaterThan(40);
    expect(examples).toEqual(tools);
  });
});
