/**
 * The split: o200k's pre-tokenizer pattern (as tiktoken and gpt-tokenizer define it), and for ASCII
 * a hand-written scanner that makes the same pieces without a regular expression or a string per
 * piece (the pattern runs only where a piece meets a non-ASCII character).
 */
import { pieceCount } from './merge.ts';
import type { Table } from './table.ts';

const O200K_PATTERN =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** The pattern, matching at one place (for pieces that touch non-ASCII text). */
const PIECE = new RegExp(O200K_PATTERN, 'uy');
/** The pattern over a whole text, as tokenizers apply it (tests compare the scanner with it). */
export const O200K_PIECES = new RegExp(O200K_PATTERN, 'gu');

// ASCII classes.
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const NEWLINE = 4;
const SPACE = 5;
const OTHER = 6;
const CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 65; c <= 90; c += 1) {
  CLASS[c] = UPPER;
  CLASS[c + 32] = LOWER;
}
for (let c = 48; c <= 57; c += 1) {
  CLASS[c] = DIGIT;
}
CLASS[10] = NEWLINE;
CLASS[13] = NEWLINE;
for (const c of [9, 11, 12, 32]) {
  CLASS[c] = SPACE;
}
const APOSTROPHE = 39;
const SLASH = 47;
// Copies for segments.ts. The scanner reads its own bindings, which are not exported: V8 reads an
// exported binding through its module cell at every use, not as a constant.
export const ASCII_CLASS = CLASS;
export const SPACE_CLASS = SPACE;
export const SLASH_CODE = SLASH;

/** After letters ending at `at`: where an English contraction ('s, 'll, …) ends, else `at`. */
function contraction(text: string, at: number): number {
  if (text.charCodeAt(at) !== APOSTROPHE) {
    return at;
  }
  const a = text.charCodeAt(at + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) {
    return at + 2;
  }
  const b = text.charCodeAt(at + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) {
    return at + 3;
  }
  return at;
}

/** Class of the character at `at`: 0 past the end, -1 when not ASCII. */
function classAt(text: string, at: number): number {
  if (at >= text.length) {
    return 0;
  }
  const c = text.charCodeAt(at);
  return c < 128 ? (CLASS[c] as number) : -1;
}

/**
 * Where the o200k piece starting at `from` ends, when it and the character deciding its end are
 * ASCII; else -1 (the pattern decides).
 */
function asciiPiece(text: string, from: number): number {
  const first = classAt(text, from);
  if (first < 0) {
    return -1;
  }
  // Letters, after at most one character that is not a letter, digit or line break.
  if (first !== DIGIT && first !== NEWLINE) {
    const start = first === UPPER || first === LOWER ? from : from + 1;
    let kind = classAt(text, start);
    if (kind < 0) {
      return -1;
    }
    if (kind === UPPER || kind === LOWER) {
      let at = start;
      while (kind === UPPER) {
        at += 1;
        kind = classAt(text, at);
      }
      while (kind === LOWER) {
        at += 1;
        kind = classAt(text, at);
      }
      // Any other letter (or mark) would have continued the piece.
      return kind < 0 ? -1 : contraction(text, at);
    }
  }
  if (first === DIGIT) {
    let at = from + 1;
    while (at < from + 3) {
      const kind = classAt(text, at);
      if (kind < 0) {
        return -1;
      }
      if (kind !== DIGIT) {
        break;
      }
      at += 1;
    }
    return at;
  }
  // Punctuation, after at most one space, then line breaks and slashes.
  const start = text.charCodeAt(from) === 32 ? from + 1 : from;
  let kind = classAt(text, start);
  if (kind < 0) {
    return -1;
  }
  if (kind === OTHER) {
    let at = start;
    while (kind === OTHER) {
      at += 1;
      kind = classAt(text, at);
    }
    if (kind < 0) {
      return -1;
    }
    while (kind === NEWLINE || text.charCodeAt(at) === SLASH) {
      at += 1;
      kind = classAt(text, at);
    }
    return at;
  }
  // Whitespace: up to its last line break; else all of it at the end of the text, or all but its
  // last character before something else.
  let end = from;
  let lastBreak = -1;
  for (;;) {
    const kind = classAt(text, end);
    if (kind < 0) {
      return -1;
    }
    if (kind === NEWLINE) {
      lastBreak = end;
    } else if (kind !== SPACE) {
      break;
    }
    end += 1;
  }
  if (lastBreak >= 0) {
    return lastBreak + 1;
  }
  if (end >= text.length || end - from === 1) {
    return end;
  }
  return end - 1;
}

/** Tokens of `text`, piece by piece. */
export function scanCount(t: Table, text: string, stopAbove: number): number {
  let total = 0;
  let from = 0;
  while (from < text.length) {
    let to = asciiPiece(text, from);
    let ascii = true;
    if (to < 0) {
      PIECE.lastIndex = from;
      const match = PIECE.exec(text);
      to = from + (match?.[0].length ?? 1);
      ascii = false;
    }
    total += pieceCount(t, text, from, to, ascii);
    if (total > stopAbove) {
      return total;
    }
    from = to;
  }
  return total;
}
