/**
 * The read-side seam: whether a field's text, read from a calendar, addresses an AI reader. Today
 * the write firewall's detector answers (invisible-text checks, then findInjection on the
 * normalised text); a classifier can take its place behind the same interface. Reasons are
 * generic, for people and for the placeholder an agent sees, never the text itself.
 */
import { findInjection } from './detect.ts';
import { cleanInvisible } from './invisible.ts';

export interface Screener {
  /** Why the text must not reach a model as it is ("addresses an AI assistant"), or undefined. */
  screen(text: string): string | undefined;
}

export const REASONS = {
  addresses: 'addresses an AI assistant',
  invisible: 'hides text in invisible characters',
  exfiltration: 'sends data to an outside address',
  encoded: 'hides instructions in encoded text',
} as const;

/** The detector's finding, in the generic words a reader is told. */
function reasonOf(what: string): string {
  if (/send (data|secrets) out|reveal secrets/.test(what)) {
    return REASONS.exfiltration;
  }
  if (what.includes(', hidden as ')) {
    return REASONS.encoded;
  }
  return REASONS.addresses;
}

/** The write firewall's detector as a Screener. */
export const detectorScreener: Screener = {
  screen(text) {
    const cleaned = cleanInvisible('text', text);
    if (!cleaned.ok) {
      return REASONS.invisible;
    }
    const found = findInjection(cleaned.value.value);
    return found === undefined ? undefined : reasonOf(found.what);
  },
};
