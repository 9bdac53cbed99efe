/**
 * The forms calendar text is matched in. Each keeps, for every character, where it came from in
 * the text, so a finding quotes the text as written.
 *
 * - folded: NFKD without marks, lower case, look-alike characters as the ASCII letters they
 *   imitate (Unicode TR39 skeletons, see confusables.ts); punctuation and line breaks kept.
 *   Variants of it undo disguises when the text shows them: markup removed (`Ig<b></b>nore`,
 *   `**ignore**`), letters spaced out one by one joined (`i g n o r e`, `i.g.n.o.r.e`), and
 *   digits and symbols read as letters (`1gn0r3`, `@ll`).
 * - words: letters and digits as words between single spaces, with the look-alike pairs that
 *   survive folding merged: l and i, rn and m, vv and w.
 * - squashed: the words without spaces, for payloads split inside words (`ign ore`); a match
 *   must still start and end where words do.
 */
import { CONFUSABLES } from './confusables.ts';

export interface Form {
  text: string;
  /** For each UTF-16 unit of `text`, the index in the source of the character it came from. */
  origin: number[];
}

export interface SquashedForm extends Form {
  /** Indexes of `text` where a word starts, and where one ends (exclusive). */
  starts: Set<number>;
  ends: Set<number>;
}

const FALLBACK = new Map<number, string>();
const FALLBACK_LIMIT = 20_000;
const MARKS = /\p{M}/gu;

/** Characters outside the generated table: compatibility form without marks, lower case, then the table. */
function foldOther(cp: number): string {
  const known = FALLBACK.get(cp);
  if (known !== undefined) {
    return known;
  }
  const lower = String.fromCodePoint(cp).normalize('NFKD').replace(MARKS, '').toLowerCase();
  const folded = Array.from(lower, (c) => CONFUSABLES.get(c.codePointAt(0) ?? 0) ?? c).join('');
  if (FALLBACK.size < FALLBACK_LIMIT) {
    FALLBACK.set(cp, folded);
  }
  return folded;
}

/** One character folded (see the module comment). */
export function foldChar(cp: number): string {
  if (cp < 0x80) {
    return cp >= 0x41 && cp <= 0x5a ? String.fromCharCode(cp + 32) : String.fromCharCode(cp);
  }
  return CONFUSABLES.get(cp) ?? foldOther(cp);
}

export function fold(source: string): Form {
  let text = '';
  const origin: number[] = [];
  for (let i = 0; i < source.length; ) {
    const cp = source.codePointAt(i) ?? 0;
    const folded = foldChar(cp);
    for (let k = 0; k < folded.length; k++) {
      origin.push(i);
    }
    text += folded;
    i += cp > 0xffff ? 2 : 1;
  }
  return { text, origin };
}

/** The source text a span of a form came from. */
export function sourceSpan(source: string, form: Form, start: number, end: number): string {
  let from = start;
  let to = end - 1;
  while (from < to && /\s/.test(form.text[from] ?? '')) {
    from++;
  }
  while (to > from && /\s/.test(form.text[to] ?? '')) {
    to--;
  }
  const first = form.origin[from] ?? 0;
  const last = Math.max(first, form.origin[to] ?? first);
  const cp = source.codePointAt(last) ?? 0;
  return source.slice(first, last + (cp > 0xffff ? 2 : 1));
}

/**
 * Rewrites each match of `re` (global) in a form: `keep` says which of its characters stay
 * (with their origins); `insert` is put in their place, carrying the match's origin.
 */
function rewrite(form: Form, re: RegExp, keep: (char: string) => boolean, insert = ''): Form {
  let text = '';
  const origin: number[] = [];
  let at = 0;
  for (const match of form.text.matchAll(re)) {
    text += form.text.slice(at, match.index);
    origin.push(...form.origin.slice(at, match.index));
    for (let k = 0; k < insert.length; k++) {
      origin.push(form.origin[match.index] ?? 0);
    }
    text += insert;
    for (let k = 0; k < match[0].length; k++) {
      const char = match[0][k] as string;
      if (keep(char)) {
        text += char;
        origin.push(form.origin[match.index + k] ?? 0);
      }
    }
    at = match.index + match[0].length;
  }
  text += form.text.slice(at);
  origin.push(...form.origin.slice(at));
  return { text, origin };
}

const INLINE_TAG =
  /<\/?(?:b|i|u|s|em|strong|span|font|sub|sup|small|mark|a|code|del|ins|q)(?:\s[^<>]{0,200})?\/?>/g;
const BLOCK_TAG = /<\/?(?:p|div|br|li|ul|ol|h[1-6]|tr|td|th|table|blockquote|pre|hr)(?:\s[^<>]{0,200})?\/?>/g;
const EMPHASIS = /(?<![\p{L}\p{N}])[*_~`]+|[*_~`]+(?![\p{L}\p{N}])/gu;
const HAS_MARKUP = /<\/?[a-z]|[*_~`]/;
const SPACED_OUT = /(?<![\p{L}\p{N}])\p{L}([ .\-_*·•/|,'’])\p{L}(?:\1\p{L})+(?![\p{L}\p{N}])/gu;
const HAS_SPACED_OUT = new RegExp(SPACED_OUT.source, 'u');
const LEET: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '8': 'b',
  '9': 'g',
  '@': 'a',
  $: 's',
  '|': 'i',
  '!': 'i',
  '€': 'e',
};
const LEET_TOKEN = /[\p{L}\p{N}@$|!€]*[0134578@$|!9€][\p{L}\p{N}@$|!€]*/gu;
const HAS_LEET = /\p{L}[0134578@$|!9€]|[0134578@$|!9€]\p{L}/u;
const LETTER = /\p{L}/u;

function withoutMarkup(form: Form): Form {
  const untagged = rewrite(
    rewrite(form, BLOCK_TAG, () => false, ' '),
    INLINE_TAG,
    () => false,
  );
  return rewrite(untagged, EMPHASIS, () => false);
}

function joinedLetters(form: Form): Form {
  return rewrite(form, SPACED_OUT, (char) => LETTER.test(char));
}

function leetRead(form: Form): Form {
  const text = form.text.replace(LEET_TOKEN, (token) =>
    token.replace(/[0134578@$|!9€]/g, (c) => LEET[c] ?? c),
  );
  return { text, origin: form.origin };
}

/** The folded text and the variants of it that undo the disguises it shows. */
export function foldedVariants(source: string): Form[] {
  const base = fold(source);
  let plain = base;
  const variants = [base];
  if (HAS_MARKUP.test(base.text)) {
    plain = withoutMarkup(base);
    if (plain.text !== base.text) {
      variants.push(plain);
    }
  }
  if (HAS_SPACED_OUT.test(plain.text)) {
    variants.push(joinedLetters(plain));
  }
  if (HAS_LEET.test(plain.text)) {
    variants.push(leetRead(variants.at(-1) ?? plain));
  }
  return variants;
}

/** Appends one word's characters, merging the look-alike pairs. */
function appendWord(out: Form, folded: Form, start: number, end: number): void {
  const chars = folded.text;
  for (let k = start; k < end; k++) {
    const char = chars[k] as string;
    const next = k + 1 < end ? chars[k + 1] : undefined;
    const origin = folded.origin[k] ?? 0;
    if ((char === 'r' && next === 'n') || (char === 'v' && next === 'v')) {
      out.text += char === 'r' ? 'm' : 'w';
      out.origin.push(origin);
      k++;
      continue;
    }
    out.text += char === 'l' ? 'i' : char;
    out.origin.push(origin);
  }
}

const WORD = /[\p{L}\p{N}]+/gu;

/** ` word word ` (see the module comment). */
export function words(folded: Form): Form {
  const out: Form = { text: ' ', origin: [folded.origin[0] ?? 0] };
  const text = folded.text.replace(INLINE_TAG, (tag) => ' '.repeat(tag.length));
  for (const match of text.matchAll(WORD)) {
    appendWord(out, folded, match.index, match.index + match[0].length);
    out.text += ' ';
    out.origin.push(out.origin.at(-1) ?? 0);
  }
  if (out.text.length === 1) {
    out.text += ' ';
    out.origin.push(0);
  }
  return out;
}

/** The words without spaces, remembering where each word started and ended. */
export function squash(wordForm: Form): SquashedForm {
  let text = '';
  const origin: number[] = [];
  const starts = new Set<number>();
  const ends = new Set<number>();
  for (let i = 0; i < wordForm.text.length; i++) {
    const char = wordForm.text[i] as string;
    if (char === ' ') {
      if (text.length > 0) {
        ends.add(text.length);
      }
      continue;
    }
    if (wordForm.text[i - 1] === ' ') {
      starts.add(text.length);
    }
    text += char;
    origin.push(wordForm.origin[i] ?? 0);
  }
  ends.add(text.length);
  return { text, origin, starts, ends };
}

/**
 * A pattern written in plain lower-case text, folded the way `words` folds text: non-ASCII
 * letters folded and the look-alike pairs merged. Regex syntax is ASCII and passes through.
 */
export function foldPattern(source: string): string {
  let out = '';
  for (const char of source) {
    const cp = char.codePointAt(0) ?? 0;
    out += cp < 0x80 ? char : foldChar(cp);
  }
  return out.replace(/rn/g, 'm').replace(/vv/g, 'w').replace(/l/g, 'i');
}
