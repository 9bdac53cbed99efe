import { ASCII_CLASS, SLASH_CODE, SPACE_CLASS, scanCount } from './split.ts';
import type { Table } from './table.ts';

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
export function nextCut(text: string, from: number, cursor: { brace: number; line: number }): number {
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
      (c < 128 &&
        c > 32 &&
        c !== 127 &&
        (ASCII_CLASS[c] as number) !== SPACE_CLASS &&
        (at > cut || c !== SLASH_CODE));
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
export function segmentCount(t: Table, segment: string, stopAbove: number): number {
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
