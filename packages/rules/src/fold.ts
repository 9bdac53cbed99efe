/**
 * Text folding shared by queries and events, so both sides compare alike: Unicode NFKD, combining
 * marks dropped, case-folded. "Words" are maximal runs of Unicode letters and digits.
 */

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const MARKS = /\p{M}+/gu;
const ASCII_WORDS = /[a-z0-9]+/g;
const UNICODE_WORDS = /[\p{L}\p{N}]+/gu;

function foldUnicode(text: string): string {
  // Upper- then lower-casing applies the full case folds toLowerCase alone misses (ß → ss, ς → σ);
  // the second NFKD pass removes marks that case mapping can introduce (ǰ → J̌).
  const cased = text.normalize('NFKD').replace(MARKS, '').toUpperCase().toLowerCase();
  return cased.normalize('NFKD').replace(MARKS, '');
}

/**
 * Names, addresses and titles repeat across thousands of occurrences, and NFKD costs far more
 * than a map lookup, so short non-ASCII texts are folded once. The cache is cleared when full.
 */
const CACHE_LIMIT = 20_000;
const CACHEABLE_LENGTH = 256;
const folded = new Map<string, string>();
const fieldWords = new Map<string, readonly string[]>();

/** `text` case-folded, compatibility-decomposed and without combining marks ("Crème" → "creme"). */
export function fold(text: string): string {
  if (PRINTABLE_ASCII.test(text)) {
    return text.toLowerCase();
  }
  if (text.length > CACHEABLE_LENGTH) {
    return foldUnicode(text);
  }
  let result = folded.get(text);
  if (result === undefined) {
    result = foldUnicode(text);
    if (folded.size >= CACHE_LIMIT) {
      folded.clear();
    }
    folded.set(text, result);
  }
  return result;
}

/** The words of already folded text. */
export function wordsOfFolded(folded: string): string[] {
  const pattern = PRINTABLE_ASCII.test(folded) ? ASCII_WORDS : UNICODE_WORDS;
  return folded.match(pattern) ?? [];
}

/** The folded words of `text` ("Team-Meeting (Q3)" → ["team", "meeting", "q3"]); shared, so never mutate it. */
export function wordsOf(text: string): readonly string[] {
  if (text.length > CACHEABLE_LENGTH) {
    return wordsOfFolded(fold(text));
  }
  let words = fieldWords.get(text);
  if (words === undefined) {
    words = wordsOfFolded(fold(text));
    if (fieldWords.size >= CACHE_LIMIT) {
      fieldWords.clear();
    }
    fieldWords.set(text, words);
  }
  return words;
}

/**
 * Whether `needle` occurs as consecutive words of `hay`; with `prefix`, its last word need only
 * begin a word of `hay`.
 */
export function containsWordSequence(
  hay: readonly string[],
  needle: readonly string[],
  prefix: boolean,
): boolean {
  const k = needle.length;
  const last = k - 1;
  const end = hay.length - k;
  for (let i = 0; i <= end; i++) {
    let j = 0;
    while (j < last && hay[i + j] === needle[j]) {
      j += 1;
    }
    if (j === last) {
      const word = hay[i + j] as string;
      const target = needle[j] as string;
      if (prefix ? word.startsWith(target) : word === target) {
        return true;
      }
    }
  }
  return false;
}
