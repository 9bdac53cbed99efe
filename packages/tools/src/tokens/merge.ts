/**
 * The tokens of one pre-tokenizer piece: one look-up in the table when the piece is a token of its
 * own, else its bytes merged byte pair by byte pair as tiktoken does (lowest rank first, leftmost of
 * equals), and the counts of such pieces kept.
 */
import { isAsciiToken, NONE as NO_TOKEN, rankOf, type Table } from './table.ts';

// The merge loops read a copy: V8 reads an imported binding through its module cell at every use,
// not as a constant.
const NONE = NO_TOKEN;

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

const PIECES_KEPT = 100_000;
/** Counts of pieces that are more than one token. */
const counted = new Map<string, number>();
const encoder = new TextEncoder();

/** Tokens of text[from, to), a piece, `ascii` when every character of it is. */
export function pieceCount(t: Table, text: string, from: number, to: number, ascii: boolean): number {
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
