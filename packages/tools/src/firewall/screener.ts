/**
 * The read-side seam: whether a field's text, read from a calendar, addresses an AI reader. The
 * firewall's verdict answers (invisible-text checks, then judge.ts: the classifier, with the rules
 * where it agrees), the same as for writes; the rules alone remain as `detectorScreener`. Reasons
 * are generic, for people and for the placeholder an agent sees, never the text itself.
 */
import { findInjection } from './detect.ts';
import { cleanInvisible } from './invisible.ts';
import { judge } from './judge.ts';

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

/** The firewall's verdict (classifier and rules, as writes are screened) as a Screener. */
export const firewallScreener: Screener = {
  screen(text) {
    const cleaned = cleanInvisible('text', text);
    if (!cleaned.ok) {
      return REASONS.invisible;
    }
    const found = judge(cleaned.value.value);
    return found === undefined ? undefined : reasonOf(found.what);
  },
};

/** The rules alone (detect.ts) as a Screener. */
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
