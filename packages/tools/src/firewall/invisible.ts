/**
 * Invisible characters: format characters with no business in calendar text are removed and
 * reported; invisible characters that encode hidden text (tag-character strings, long zero-width
 * runs, stacked variation selectors) are refused. Emoji sequences and joiners that shape
 * Arabic, Persian and Indic words are kept.
 */
import { type CalgateError, ok, type Result } from '@calgate/core';
import { excerpt, refuse, type ScreenedText } from './refusal.ts';

/** Consecutive invisible characters from this many on are treated as an encoded payload. */
const HIDDEN_RUN = 4;

const ZWNJ = 0x200c;
const ZWJ = 0x200d;
const BLACK_FLAG = 0x1f3f4;
const CANCEL_TAG = 0xe007f;

const PICTOGRAPHIC = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}]$/u;
const JOINING_LETTER = /^[\p{L}\p{M}]$/u;
const LATIN_OR_COMMON = /^[\p{Script=Latin}\p{Script=Common}]$/u;

function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

function isTag(cp: number): boolean {
  return cp >= 0xe0000 && cp <= 0xe007f;
}

/** Invisible characters with no business in calendar text outside the contexts handled below. */
function isStrippable(cp: number): boolean {
  return (
    (cp >= 0x200b && cp <= 0x200d) ||
    cp === 0x2060 ||
    cp === 0xfeff ||
    cp === 0x180e ||
    (cp >= 0x2061 && cp <= 0x2064) ||
    (cp >= 0x206a && cp <= 0x206f) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    (cp >= 0xfff9 && cp <= 0xfffb) ||
    // C0 and C1 controls other than tab, line feed and carriage return.
    (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) ||
    (cp >= 0x7f && cp <= 0x9f)
  );
}

function hex(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function isEmojiSide(char: string | undefined): boolean {
  return char !== undefined && (PICTOGRAPHIC.test(char) || char === '\uFE0F');
}

/** ZWJ and ZWNJ shape Arabic, Persian and Indic words: kept between letters of such scripts. */
function joinsLetters(before: string | undefined, after: string | undefined): boolean {
  return (
    before !== undefined &&
    after !== undefined &&
    JOINING_LETTER.test(before) &&
    JOINING_LETTER.test(after) &&
    !(LATIN_OR_COMMON.test(before) && LATIN_OR_COMMON.test(after))
  );
}

/** Removes invisible characters, or refuses text in which they hide content. */
export function cleanInvisible(field: string, value: string): Result<ScreenedText, CalgateError> {
  const chars = Array.from(value);
  const kept: string[] = [];
  const removed = new Map<number, number>();
  let run = 0;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string;
    const cp = char.codePointAt(0) ?? 0;
    if (isTag(cp)) {
      // Tag characters are only legitimate in emoji tag sequences (🏴 + tags + cancel tag).
      let end = i;
      while (end < chars.length && isTag(chars[end]?.codePointAt(0) ?? 0)) {
        end++;
      }
      const tags = chars.slice(i, end).map((c) => c.codePointAt(0) ?? 0);
      const flag = chars[i - 1]?.codePointAt(0) === BLACK_FLAG && tags.at(-1) === CANCEL_TAG;
      if (flag && tags.length <= 8) {
        kept.push(...chars.slice(i, end));
        i = end - 1;
        run = 0;
        continue;
      }
      const hidden = tags
        .filter((t) => t >= 0xe0020 && t <= 0xe007e)
        .map((t) => String.fromCodePoint(t - 0xe0000))
        .join('');
      return refuse(
        field,
        `contains invisible Unicode tag characters that hide text${hidden.trim() === '' ? '' : ` ("${excerpt(hidden)}")`}. Remove them.`,
      );
    }
    if (isVariationSelector(cp)) {
      const previous = chars[i - 1]?.codePointAt(0);
      if (previous !== undefined && isVariationSelector(previous)) {
        return refuse(
          field,
          'contains a run of invisible variation selectors, which can encode hidden data. Remove them.',
        );
      }
      kept.push(char);
      run = 0;
      continue;
    }
    const before = kept.at(-1);
    const after = chars[i + 1];
    const legitimateJoiner =
      (cp === ZWJ && isEmojiSide(before) && isEmojiSide(after)) ||
      ((cp === ZWJ || cp === ZWNJ) && joinsLetters(before, after));
    if (legitimateJoiner || !isStrippable(cp)) {
      kept.push(char);
      run = 0;
      continue;
    }
    run++;
    if (run >= HIDDEN_RUN) {
      return refuse(
        field,
        `contains a run of ${run} or more invisible characters, which can encode hidden text. Remove them.`,
      );
    }
    removed.set(cp, (removed.get(cp) ?? 0) + 1);
  }
  if (removed.size === 0) {
    return ok({ value });
  }
  return ok({
    value: kept.join(''),
    sanitized: {
      field,
      removed: [...removed].map(([cp, count]) => (count === 1 ? hex(cp) : `${hex(cp)}×${count}`)),
    },
  });
}
