/**
 * A text that is nothing but a payload: what the rules matched covers most of it. Such a text is
 * refused whatever the classifier says (judge.ts); a text that quotes a payload comes with context.
 */
import type { Finding } from './detect.ts';

/** Texts up to this long are checked for being a bare payload. */
export const BARE_MAX = 400;
/** Share of a text the rules' match must cover for the text to be a bare payload. */
export const BARE_SHARE = 0.7;

const flat = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Whether what the rules matched is most of the text: the text is the payload, not a quote of it. */
export function isBare(text: string, found: Finding): boolean {
  return flat(found.match).length >= BARE_SHARE * flat(text).length;
}
