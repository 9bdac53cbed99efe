/**
 * The write firewall: text an agent writes into a calendar is read later by other agents, so it
 * must not carry instructions for them or text hidden from the people who read it.
 *
 * Invisible format characters are removed and reported; invisible characters that encode hidden
 * text (tag-character strings, long zero-width runs, stacked variation selectors) are refused
 * (firewall/invisible.ts). Prompt-injection payloads (instruction overrides, fake role markers
 * and data boundaries, text addressed to AI agents, tool calls, links that send data out) are
 * refused with the field named, in the major languages and through look-alike letters, split
 * words, leetspeak and obvious encodings: the classifier (firewall/model/) decides, with the rules
 * (firewall/detect.ts) where it agrees (firewall/judge.ts). Emoji, including ZWJ sequences,
 * flags and keycaps, and text in any script pass unchanged.
 */
import type { CalgateError, Result } from '@calgate/core';
import { cleanInvisible } from './firewall/invisible.ts';
import { judge } from './firewall/judge.ts';
import { excerpt, refuse, type SanitizedField, type ScreenedText } from './firewall/refusal.ts';

export { type Finding, findInjection } from './firewall/detect.ts';
export type { SanitizedField, ScreenedText } from './firewall/refusal.ts';

/**
 * Screens one text field: invisible characters removed (reported in `sanitized`) or refused when
 * they hide text; prompt-injection payloads refused. The message names the field.
 */
export function screenText(field: string, value: string): Result<ScreenedText, CalgateError> {
  const cleaned = cleanInvisible(field, value);
  if (!cleaned.ok) {
    return cleaned;
  }
  const found = judge(cleaned.value.value);
  if (found !== undefined) {
    return refuse(
      field,
      `looks like a prompt-injection payload (${found.what}: "${excerpt(found.match)}"). Calendar text is read by AI agents, so it must not carry instructions for them. Nothing was written.`,
    );
  }
  return cleaned;
}

/** Screens several fields at once, collecting what was removed; throws on the first refusal. */
export class TextScreen {
  readonly sanitized: SanitizedField[] = [];

  text(field: string, value: string): string;
  text(field: string, value: string | undefined): string | undefined;
  text(field: string, value: string | undefined): string | undefined {
    if (value === undefined) {
      return undefined;
    }
    const result = screenText(field, value);
    if (!result.ok) {
      throw result.error;
    }
    if (result.value.sanitized) {
      this.sanitized.push(result.value.sanitized);
    }
    return result.value.value;
  }
}
