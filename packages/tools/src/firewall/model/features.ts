// Hashed character n-gram features (pure TypeScript, no dependency).
// Text → normalised (NFKC, lower case, invisible format characters removed, whitespace collapsed)
// → character n-grams n = nMin…nMax over " " + text + " " (code points), plus word unigrams and
// bigrams → FNV-1a-style rolling hash into 2^BITS buckets → sublinear tf (1 + log c) → L2-normalised
// sparse vector.
export const BITS = 18;
export const DIM = 1 << BITS;
const MASK = DIM - 1;

const INVISIBLE = /\p{Cf}|\u034f|[\u00ad\u115f\u1160\u3164\uffa0]/gu;
const SPACE = /[\s\u00a0\u2000-\u200a\u2028\u2029\u3000]+/gu;

export function normalise(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().replace(SPACE, ' ').trim();
}

export interface Sparse {
  idx: Int32Array;
  val: Float32Array;
}

export interface FeatureOptions {
  nMin: number;
  nMax: number;
  words: boolean;
}
export const DEFAULT_FEATURES: FeatureOptions = { nMin: 1, nMax: 5, words: true };

const PRIME = 0x01000193;
const SEEDS = [
  0x811c9dc5, 0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f, 0x165667b1, 0xd3a2646c, 0xfd7046c5,
];
const seed = (n: number): number => SEEDS[n] ?? 0;

// One reusable accumulator: features are built one text at a time.
const counts = new Float32Array(DIM);
const touched: number[] = [];
function bump(h: number): void {
  const j = h & MASK;
  const c = counts[j] ?? 0;
  if (c === 0) {
    touched.push(j);
  }
  counts[j] = c + 1;
}

const WORDCHAR = /[\p{L}\p{N}\p{M}]/u;
// Cache for the BMP: 0 = not yet known, 1 = word character, 2 = not.
const WORDTABLE = new Uint8Array(0x10000);
function isWordCp(cp: number): boolean {
  if (cp < 128) {
    return (cp >= 48 && cp <= 57) || (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || cp === 95;
  }
  if (cp < 0x10000) {
    let v = WORDTABLE[cp] ?? 0;
    if (v === 0) {
      v = WORDCHAR.test(String.fromCharCode(cp)) ? 1 : 2;
      WORDTABLE[cp] = v;
    }
    return v === 1;
  }
  return WORDCHAR.test(String.fromCodePoint(cp));
}

// Code points of the text being hashed, reused (grown as needed).
let cps = new Int32Array(4096);

function addText(t: string, o: FeatureOptions, salt = 0): void {
  if (cps.length < t.length + 2) {
    cps = new Int32Array(2 * t.length + 2);
  }
  let len = 0;
  cps[len++] = 32;
  for (let i = 0; i < t.length; i++) {
    const cp = t.codePointAt(i) ?? 0;
    cps[len++] = cp;
    if (cp > 0xffff) {
      i++;
    }
  }
  cps[len++] = 32;
  for (let i = 0; i < len; i++) {
    let h = 0;
    for (let n = 1; n <= o.nMax && i + n <= len; n++) {
      h = Math.imul(h ^ (cps[i + n - 1] ?? 0), PRIME) ^ (h >>> 15);
      if (n >= o.nMin) {
        bump(Math.imul(h ^ seed(n), PRIME) ^ salt);
      }
    }
  }
  if (o.words) {
    let prev = 0;
    let have = false;
    let h = 0;
    let inWord = false;
    for (let i = 0; i < len; i++) {
      const cp = cps[i] ?? 0;
      if (isWordCp(cp)) {
        h = inWord ? Math.imul(h ^ cp, PRIME) : Math.imul(seed(6) ^ cp, PRIME);
        inWord = true;
      } else if (inWord) {
        bump(Math.imul(h ^ seed(6), PRIME) ^ salt);
        if (have) {
          bump(Math.imul((prev * 31) ^ h ^ seed(7), PRIME) ^ salt);
        }
        prev = h;
        have = true;
        inWord = false;
      }
    }
  }
}

/** Hashes of n-grams seen inside quotation marks are moved by this, apart from the same n-grams outside. */
const QUOTED_SALT = 0x5bd1e995;

/**
 * Sparse n-gram vector of `text` plus the n-grams of `extra` texts (its decodings) and, hashed
 * apart, those of `quoted` (the text between its quotation marks), L2-normalised.
 */
export function featurise(
  text: string,
  o: FeatureOptions = DEFAULT_FEATURES,
  extra: string[] = [],
  quoted = '',
): Sparse {
  return featuriseNormalised(
    normalise(text),
    o,
    extra.map(normalise),
    quoted === '' ? '' : normalise(quoted),
  );
}

/** 1 + ln c for the small counts (the same doubles Math.log gives). */
const SUBLINEAR = Float64Array.from({ length: 256 }, (_, c) => 1 + Math.log(c));

/** `featurise` of texts already normalised. */
export function featuriseNormalised(
  text: string,
  o: FeatureOptions = DEFAULT_FEATURES,
  extra: string[] = [],
  quoted = '',
): Sparse {
  addText(text, o);
  for (const x of extra) {
    addText(x, o);
  }
  if (quoted !== '') {
    addText(quoted, o, QUOTED_SALT);
  }
  const idx = new Int32Array(touched.length);
  const val = new Float32Array(touched.length);
  let norm = 0;
  for (let i = 0; i < touched.length; i++) {
    const j = touched[i] ?? 0;
    const c = counts[j] ?? 1;
    const v = c < 256 ? (SUBLINEAR[c] ?? 0) : 1 + Math.log(c);
    counts[j] = 0;
    idx[i] = j;
    val[i] = v;
    norm += v * v;
  }
  touched.length = 0;
  norm = Math.sqrt(norm) || 1;
  for (let k = 0; k < val.length; k++) {
    val[k] = (val[k] ?? 0) / norm;
  }
  return { idx, val };
}
