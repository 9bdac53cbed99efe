/**
 * o200k_base token counts, exactly as gpt-tokenizer gives them (and tiktoken: see the byte order
 * mark in merge.ts), from a compact table: `o200k.bin.br` beside this file (written by
 * scripts/o200k-table.ts from gpt-tokenizer's ranks) holds each rank's bytes, 1.6 MB unpacked,
 * indexed by an open-addressing hash (2 MB) and the ranks' offsets (0.8 MB): about 6 MB of RSS
 * where gpt-tokenizer's table of JavaScript strings and maps takes about 63 MB.
 *
 * A text's tokens are the sum of its pre-tokenizer pieces' tokens. The split is the o200k
 * pattern; for ASCII a hand-written scanner makes the same pieces without a regular expression
 * or a string per piece (the pattern runs only where a piece meets a non-ASCII character), and a
 * piece that is a token of its own (most of an answer's: keys, words, punctuation, 1–3 digits)
 * is counted by one look-up in the table. Other pieces are merged byte pair by byte pair as
 * tiktoken does (lowest rank first, leftmost of equals) and their counts kept. Texts are cut
 * into segments whose counts add up (see `nextCut`), and a segment seen before is looked up.
 *
 * table.ts loads the table and looks byte sequences up in it; split.ts makes the pieces; merge.ts
 * counts a piece's tokens; segments.ts cuts texts and keeps the segments' counts.
 */
import { nextCut, segmentCount } from './segments.ts';
import { scanCount } from './split.ts';
import { load, type Table } from './table.ts';

export { O200K_PIECES } from './split.ts';

let table: Table | undefined;

/**
 * The o200k tokens of `text`, exactly (text that looks like a special token counts as the text it
 * is); once past `stopAbove`, a figure above it.
 */
export function o200kCount(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  table ??= load();
  const t = table;
  const cursor = { brace: -2, line: -2 };
  let total = 0;
  let from = 0;
  while (from < text.length) {
    const to = nextCut(text, from + 1, cursor);
    total += segmentCount(
      t,
      from === 0 && to === text.length ? text : text.slice(from, to),
      stopAbove - total,
    );
    if (total > stopAbove) {
      return total;
    }
    from = to;
  }
  return total;
}

/** Tokens of `text` counted piece by piece, without segments (for tests). */
export function o200kCountByPieces(text: string): number {
  table ??= load();
  return scanCount(table, text, Number.POSITIVE_INFINITY);
}
