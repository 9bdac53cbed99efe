/**
 * o200k_base token counts, exactly as gpt-tokenizer gives them (and tiktoken: see the byte order
 * mark below), from a compact table: `o200k.bin.br` beside this file (written by
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
 */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';

interface Table {
  /** The unpacked file: each rank's length in bytes, then its bytes. */
  bytes: Uint8Array;
  /** Where rank r's bytes start in `bytes` (its length is the byte before). */
  starts: Uint32Array;
  /** Open addressing on hashOf(bytes): rank + 1, 0 where empty. */
  slots: Int32Array;
  mask: number;
}

let table: Table | undefined;

function load(): Table {
  const bytes: Uint8Array = brotliDecompressSync(readFileSync(new URL('./o200k.bin.br', import.meta.url)));
  let count = 0;
  for (let at = 0; at < bytes.length; at += (bytes[at] as number) + 1) {
    count += 1;
  }
  const starts = new Uint32Array(count);
  let size = 1;
  while (size < count * 2.5) {
    size <<= 1;
  }
  const slots = new Int32Array(size);
  const mask = size - 1;
  let rank = 0;
  for (let at = 0; at < bytes.length; rank += 1) {
    const length = bytes[at] as number;
    starts[rank] = at + 1;
    let slot = hashOf(bytes, at + 1, at + 1 + length) & mask;
    while (slots[slot] !== 0) {
      slot = (slot + 1) & mask;
    }
    slots[slot] = rank + 1;
    at += length + 1;
  }
  return { bytes, starts, slots, mask };
}

/** FNV-1a over bytes[from, to). */
function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i += 1) {
    hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  }
  return hash >>> 0;
}

const NONE = 0x7fffffff;

/** The rank of bytes[from, to) as one token, or NONE. */
function rankOf(t: Table, bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  let slot = hashOf(bytes, from, to) & t.mask;
  for (;;) {
    const entry = t.slots[slot] as number;
    if (entry === 0) {
      return NONE;
    }
    const rank = entry - 1;
    const start = t.starts[rank] as number;
    if (t.bytes[start - 1] === length) {
      let same = true;
      for (let i = 0; i < length; i += 1) {
        if (t.bytes[start + i] !== bytes[from + i]) {
          same = false;
          break;
        }
      }
      if (same) {
        return rank;
      }
    }
    slot = (slot + 1) & t.mask;
  }
}

/** Whether text[from, to), all ASCII (its characters are its bytes), is one token: rankOf without a copy. */
function isAsciiToken(t: Table, text: string, from: number, to: number): boolean {
  const length = to - from;
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  let slot = (hash >>> 0) & t.mask;
  for (;;) {
    const entry = t.slots[slot] as number;
    if (entry === 0) {
      return false;
    }
    const start = t.starts[entry - 1] as number;
    if (t.bytes[start - 1] === length) {
      let same = true;
      for (let i = 0; i < length; i += 1) {
        if (t.bytes[start + i] !== text.charCodeAt(from + i)) {
          same = false;
          break;
        }
      }
      if (same) {
        return true;
      }
    }
    slot = (slot + 1) & t.mask;
  }
}

// Scratch space for merging, grown as pieces need.
let scratch = new Uint8Array(1024);
let partStart = new Int32Array(1025);
let partRank = new Int32Array(1025);

/** Pieces up to this many bytes are merged by scanning for the lowest rank, longer ones with a heap. */
const SCAN_MERGE = 128;

/** Tokens of the piece in scratch[0, n), n ≥ 2 and not a token itself: tiktoken's byte_pair_merge. */
function mergeCount(t: Table, n: number): number {
  if (n > SCAN_MERGE) {
    return heapMergeCount(t, n);
  }
  const bytes = scratch;
  // Part i covers [partStart[i], partStart[i + 1]); partRank[i] is the rank of parts i and i + 1 joined.
  let parts = n + 1;
  for (let i = 0; i < n; i += 1) {
    partStart[i] = i;
    partRank[i] = i + 2 <= n ? lookUp(t, bytes, i, i + 2) : NONE;
  }
  partStart[n] = n;
  partRank[n] = NONE;
  const rankAt = (i: number) =>
    i + 3 < parts ? lookUp(t, bytes, partStart[i] as number, partStart[i + 3] as number) : NONE;
  for (;;) {
    let min = NONE;
    let at = -1;
    for (let i = 0; i < parts - 1; i += 1) {
      if ((partRank[i] as number) < min) {
        min = partRank[i] as number;
        at = i;
      }
    }
    if (at < 0) {
      return parts - 1;
    }
    if (at > 0) {
      partRank[at - 1] = rankAt(at - 1);
    }
    partRank[at] = rankAt(at);
    partStart.copyWithin(at + 1, at + 2, parts);
    partRank.copyWithin(at + 1, at + 2, parts);
    parts -= 1;
  }
}

/**
 * The same merge for long pieces (a description of one unbroken word): parts in a linked list,
 * candidate pairs in a heap ordered by rank, then position, so the order is tiktoken's.
 */
function heapMergeCount(t: Table, n: number): number {
  const bytes = scratch;
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  /** Version of each part's pair: a heap entry with an older one is stale. */
  const version = new Int32Array(n + 1);
  for (let i = 0; i <= n; i += 1) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  // Heap of [rank, start, version] triples, flattened.
  let heap = new Float64Array(3 * n);
  let size = 0;
  const less = (a: number, b: number) =>
    (heap[3 * a] as number) < (heap[3 * b] as number) ||
    (heap[3 * a] === heap[3 * b] && (heap[3 * a + 1] as number) < (heap[3 * b + 1] as number));
  const swap = (a: number, b: number) => {
    for (let k = 0; k < 3; k += 1) {
      const keep = heap[3 * a + k] as number;
      heap[3 * a + k] = heap[3 * b + k] as number;
      heap[3 * b + k] = keep;
    }
  };
  const push = (rank: number, start: number) => {
    if (3 * (size + 1) > heap.length) {
      const grown = new Float64Array(heap.length * 2);
      grown.set(heap);
      heap = grown;
    }
    heap[3 * size] = rank;
    heap[3 * size + 1] = start;
    heap[3 * size + 2] = version[start] as number;
    let at = size;
    size += 1;
    while (at > 0) {
      const up = (at - 1) >> 1;
      if (!less(at, up)) {
        break;
      }
      swap(at, up);
      at = up;
    }
  };
  const pop = () => {
    size -= 1;
    swap(0, size);
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let least = at;
      if (left < size && less(left, least)) {
        least = left;
      }
      if (right < size && less(right, least)) {
        least = right;
      }
      if (least === at) {
        return;
      }
      swap(at, least);
      at = least;
    }
  };
  /** Rank of part `start` joined with the part after it. */
  const pairRank = (start: number) => {
    const middle = next[start] as number;
    if (middle >= n) {
      return NONE;
    }
    return lookUp(t, bytes, start, next[middle] as number);
  };
  for (let i = 0; i + 1 < n; i += 1) {
    const rank = pairRank(i);
    if (rank !== NONE) {
      push(rank, i);
    }
  }
  let parts = n;
  while (size > 0) {
    const start = heap[1] as number;
    const seen = heap[2] as number;
    pop();
    if (seen !== version[start]) {
      continue;
    }
    // Join part `start` with the part after it.
    const gone = next[start] as number;
    const after = next[gone] as number;
    next[start] = after;
    if (after <= n) {
      prev[after] = start;
    }
    version[gone] = -1;
    parts -= 1;
    version[start] = (version[start] as number) + 1;
    const own = pairRank(start);
    if (own !== NONE) {
      push(own, start);
    }
    const before = prev[start] as number;
    if (before >= 0) {
      version[before] = (version[before] as number) + 1;
      const joined = pairRank(before);
      if (joined !== NONE) {
        push(joined, before);
      }
    }
  }
  return parts;
}

// gpt-tokenizer, which the project's tests compare with, looks a byte sequence that is valid UTF-8
// up as the string it decodes to, and its decoder drops a leading byte order mark (U+FEFF): it
// never finds tiktoken's tokens that start with one and takes `BOM + x` for the token `x`. Where a
// piece holds a byte order mark, it is counted both ways and the larger count kept, so the figure
// is never below either tokenizer's.
let asGptTokenizer = false;
let pieceEnd = 0;

function lookUp(t: Table, bytes: Uint8Array, from: number, to: number): number {
  if (
    asGptTokenizer &&
    to - from >= 3 &&
    bytes[from] === 0xef &&
    bytes[from + 1] === 0xbb &&
    bytes[from + 2] === 0xbf &&
    (to === pieceEnd || ((bytes[to] as number) & 0xc0) !== 0x80)
  ) {
    const rest = from + 3;
    const bom =
      to - rest >= 3 && bytes[rest] === 0xef && bytes[rest + 1] === 0xbb && bytes[rest + 2] === 0xbf;
    return rest === to || bom ? NONE : rankOf(t, bytes, rest, to);
  }
  return rankOf(t, bytes, from, to);
}

/** Tokens of the piece now in scratch[0, n). */
function bytesCount(t: Table, n: number): number {
  if (n <= 1 || rankOf(t, scratch, 0, n) !== NONE) {
    return 1;
  }
  return mergeCount(t, n);
}

/** Tokens of the piece in scratch[0, n) that holds a byte order mark: the larger of both counts. */
function markedCount(t: Table, n: number): number {
  const tiktoken = bytesCount(t, n);
  asGptTokenizer = true;
  pieceEnd = n;
  try {
    // A piece that starts with the mark is never one token to gpt-tokenizer (it looks strings up whole).
    const whole = scratch[0] !== 0xef || scratch[1] !== 0xbb || scratch[2] !== 0xbf;
    const gpt = n <= 1 || (whole && rankOf(t, scratch, 0, n) !== NONE) ? 1 : mergeCount(t, n);
    return Math.max(tiktoken, gpt);
  } finally {
    asGptTokenizer = false;
  }
}

function ensureScratch(n: number): void {
  if (scratch.length < n) {
    let size = scratch.length;
    while (size < n) {
      size *= 2;
    }
    scratch = new Uint8Array(size);
    partStart = new Int32Array(size + 1);
    partRank = new Int32Array(size + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// The split: o200k's pre-tokenizer pattern (as tiktoken and gpt-tokenizer define it).

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

const PIECES_KEPT = 100_000;
/** Counts of pieces that are more than one token. */
const counted = new Map<string, number>();
const encoder = new TextEncoder();

/** Tokens of text[from, to), a piece, `ascii` when every character of it is. */
function pieceCount(t: Table, text: string, from: number, to: number, ascii: boolean): number {
  const length = to - from;
  if (length === 1 && ascii) {
    return 1;
  }
  if (ascii && isAsciiToken(t, text, from, to)) {
    return 1;
  }
  const piece = text.slice(from, to);
  const known = counted.get(piece);
  if (known !== undefined) {
    return known;
  }
  let n = length;
  if (ascii) {
    ensureScratch(length);
    for (let i = 0; i < length; i += 1) {
      scratch[i] = text.charCodeAt(from + i);
    }
  } else {
    ensureScratch(3 * length);
    n = encoder.encodeInto(piece, scratch).written;
  }
  const tokens = !ascii && piece.includes('\ufeff') ? markedCount(t, n) : bytesCount(t, n);
  if (counted.size >= PIECES_KEPT) {
    counted.clear();
  }
  counted.set(piece, tokens);
  return tokens;
}

/** Tokens of `text`, piece by piece. */
function scanCount(t: Table, text: string, stopAbove: number): number {
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

// ---------------------------------------------------------------------------------------------
// Segments. A text is cut where a piece always ends, whatever comes before, and where the piece
// ending there is the same whether the text goes on or stops: then its tokens are the sum of its
// segments' tokens, and a segment seen before (an event listed again: the same JSON, the same
// table row) is counted by one look-up. Two such places, found with indexOf:
//
// - after `{"` followed by an ASCII letter or digit (taken where a JSON list holds objects, after
//   `,` or `[`: one segment an event, one an attendee, `,{"id"…`): `{` and
//   `"` are both punctuation, so they are inside one run of punctuation (no piece ends between
//   two punctuation characters: runs are greedy, letter pieces end in letters, a prefix before
//   letters is a single character), and that run ends before the letter or digit;
// - after a line break followed by spaces or tabs and then an ASCII character that is neither
//   whitespace nor (right after the break) `/`, or the end: the whitespace piece ends at its last
//   line break, a run of punctuation takes line breaks and `/` after it and nothing else, and no
//   piece starts with a line break before letters.
//
// Pieces start where the one before ended and the pattern looks behind nothing, so the text
// after a cut splits as it would alone.

/** Segments shorter than this are counted, not looked up. */
const KEEP_FROM = 24;
/** Characters of kept segments, at most (about 8 MB); then the store starts again. */
const KEPT_CHARACTERS = 4_000_000;
const segments = new Map<number, Kept[]>();
let keptCharacters = 0;

const COMMA = 44;
const BRACKET = 91;
const isAsciiWordStart = (c: number) => (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122);

/** The next cut of `text` after `from` (see above), or text.length. */
function nextCut(text: string, from: number, cursor: { brace: number; line: number }): number {
  for (;;) {
    if (cursor.brace !== -1 && cursor.brace < from) {
      cursor.brace = text.indexOf('{"', from);
    }
    if (cursor.line !== -1 && cursor.line < from) {
      cursor.line = text.indexOf('\n', from);
    }
    const { brace, line } = cursor;
    if (brace === -1 && line === -1) {
      return text.length;
    }
    if (brace !== -1 && (line === -1 || brace < line)) {
      cursor.brace = -2;
      const before = text.charCodeAt(brace - 1);
      if ((before === COMMA || before === BRACKET) && isAsciiWordStart(text.charCodeAt(brace + 2))) {
        return brace + 2;
      }
      from = brace + 1;
      cursor.brace = text.indexOf('{"', from);
      continue;
    }
    const cut = line + 1;
    let at = cut;
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c !== 32 && c !== 9) {
        break;
      }
      at += 1;
    }
    const c = text.charCodeAt(at);
    const ends =
      at >= text.length ||
      (c < 128 && c > 32 && c !== 127 && (CLASS[c] as number) !== SPACE && (at > cut || c !== SLASH));
    cursor.line = text.indexOf('\n', cut);
    if (ends && cut < text.length) {
      return cut;
    }
    from = cut;
  }
}

/**
 * Where a segment is looked up: its length, its first and last 24 characters (where an event's
 * id and update time are) and 32 more, evenly spaced. A look-up then costs that sample and one
 * comparison of the whole segment with each kept one of that key (native, a memory compare), not
 * a hash of every character.
 */
function keyOf(segment: string): number {
  const length = segment.length;
  let key = length;
  for (let i = 0; i < 24; i += 1) {
    key = (Math.imul(key, 31) + segment.charCodeAt(i)) | 0;
    key = (Math.imul(key, 31) + segment.charCodeAt(length - 1 - i)) | 0;
  }
  const step = length / 32;
  for (let i = 0; i < 32; i += 1) {
    key = (Math.imul(key, 31) + segment.charCodeAt(Math.floor(i * step))) | 0;
  }
  return key;
}

/** Segments kept under one key, at most: the oldest gives way. */
const BUCKET = 4;

interface Kept {
  text: string;
  tokens: number;
}

/**
 * Tokens of a segment: looked up when seen before, else counted (and kept); once past
 * `stopAbove`, a figure above it (not kept).
 */
function segmentCount(t: Table, segment: string, stopAbove: number): number {
  if (segment.length < KEEP_FROM) {
    return scanCount(t, segment, stopAbove);
  }
  const key = keyOf(segment);
  const bucket = segments.get(key);
  if (bucket !== undefined) {
    for (const kept of bucket) {
      if (kept.text === segment) {
        return kept.tokens;
      }
    }
  }
  const tokens = scanCount(t, segment, stopAbove);
  if (tokens > stopAbove) {
    return tokens;
  }
  if (keptCharacters + segment.length > KEPT_CHARACTERS) {
    segments.clear();
    keptCharacters = 0;
  }
  // A copy: the segment is a slice that would keep the whole answer's text alive.
  const kept = { text: Buffer.from(segment, 'utf16le').toString('utf16le'), tokens };
  const now = segments.get(key);
  if (now === undefined) {
    segments.set(key, [kept]);
  } else {
    if (now.length >= BUCKET) {
      keptCharacters -= (now.shift() as Kept).text.length;
    }
    now.push(kept);
  }
  keptCharacters += segment.length;
  return tokens;
}

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
