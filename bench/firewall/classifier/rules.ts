// The rules and the invisible-text check as the firewall applies them beside the classifier
// (judge.ts): hidden text and a short text that is nothing but a payload the rules find are refused
// whatever the score; elsewhere the rules add a bonus to the logit.
import { BARE_MAX, cleanInvisible, findInjection, isBare } from '@calgate/tools/firewall-model';
import type { Entry } from './data.ts';

export interface RuleSignals {
  /** The rules find a payload. */
  rule(e: Entry): boolean;
  /** Refused whatever the score: hidden text, or a short text that is only a payload. */
  always(e: Entry): boolean;
}

export function ruleSignals(data: Entry[]): RuleSignals {
  const hidden = new Map<Entry, boolean>();
  const ruled = new Map<Entry, boolean>();
  for (const e of data) {
    const cleaned = cleanInvisible('text', e.text);
    const found = cleaned.ok ? findInjection(cleaned.value.value) : undefined;
    const bare =
      cleaned.ok &&
      found !== undefined &&
      cleaned.value.value.length <= BARE_MAX &&
      isBare(cleaned.value.value, found);
    hidden.set(e, !cleaned.ok || bare);
    ruled.set(e, found !== undefined);
  }
  return { rule: (e) => ruled.get(e) ?? false, always: (e) => hidden.get(e) ?? false };
}
