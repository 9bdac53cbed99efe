import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A fenced code block of docs/ or the README, with the check named in the comment above it. */
export interface DocBlock {
  /** Path from the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** What `<!-- docs-check: … -->` right above the fence says; undefined when there is none. */
  check: string | undefined;
  text: string;
}

/** The Markdown files the checks cover: README.md and every page of docs/. */
export function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        return entry.name.startsWith('_') ? [] : walk(path);
      }
      return entry.name.endsWith('.md') ? [relative(ROOT, path)] : [];
    });
  return ['README.md', ...walk(join(ROOT, 'docs')).sort()];
}

export function docBlocks(): DocBlock[] {
  const blocks: DocBlock[] = [];
  for (const file of docFiles()) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i += 1) {
      const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
      if (open === null) {
        continue;
      }
      const end = lines.indexOf('```', i + 1);
      if (end === -1) {
        throw new Error(`${file}:${i + 1}: a code block is never closed`);
      }
      const marker = /^<!-- docs-check: (.+?) -->$/.exec(lines[i - 1] ?? '');
      blocks.push({
        file,
        line: i + 1,
        lang: open[1] ?? '',
        check: marker?.[1],
        text: lines.slice(i + 1, end).join('\n'),
      });
      i = end;
    }
  }
  return blocks;
}

/**
 * The text of the block(s) marked `<!-- docs-check: <check> -->`; every copy (the README repeats a
 * few) must say the same. Throws when there is none.
 */
export function block(check: string): string {
  const found = docBlocks().filter((candidate) => candidate.check === check);
  const [first] = found;
  if (first === undefined) {
    throw new Error(`no block marked docs-check: ${check}`);
  }
  for (const other of found) {
    if (other.text !== first.text) {
      throw new Error(
        `${other.file}:${other.line} differs from ${first.file}:${first.line} (docs-check: ${check})`,
      );
    }
  }
  return first.text;
}
