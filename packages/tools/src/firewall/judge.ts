/**
 * The firewall's verdict on one text (its invisible characters already handled): the classifier
 * (model/) is the main signal, the rules (detect.ts) a second one that only counts where the
 * classifier leans the same way. A text is a payload when its logit reaches the model's threshold,
 * or when the rules find a payload and its logit reaches the lower rule threshold: alone the rules
 * misfire on texts that quote payloads (a security training, a code review of a tool schema),
 * which the classifier scores low. A short text the rules find that is nothing but the payload (what
 * they matched is most of it, or it opens as a chat-template turn holding an instruction: bare.ts)
 * is one whatever the classifier says: a quote comes with context.
 * A flagged text is described by the rules' finding when they have one, else as the classifier's.
 * The thresholds were picked on cross-validation of the training corpora (bench/firewall/classifier),
 * never on the frozen test set.
 */
import { BARE_MAX, isBare } from './bare.ts';
import { type Finding, findInjection } from './detect.ts';
import { type Classifier, shippedClassifier } from './model/classifier.ts';

/** What the classifier's findings are called in messages. */
export const CLASSIFIED = 'text addressed to an AI reader';

// Loaded when the firewall is first imported (once per process, at startup).
const classifier: Classifier = shippedClassifier();

/** The payload in `text`, described, or undefined; `model` stands in for the shipped one in tests. */
export function judge(text: string, model: Classifier = classifier): Finding | undefined {
  const { logit, piece } = model.top(text);
  if (logit >= model.meta.threshold) {
    // The rules' finding, where they have one, says more (a payload hidden as base64, say).
    return findInjection(text) ?? { what: CLASSIFIED, match: piece };
  }
  if (logit >= model.meta.ruleThreshold) {
    return findInjection(text);
  }
  if (text.length <= BARE_MAX) {
    const found = findInjection(text);
    return found !== undefined && isBare(text, found) ? found : undefined;
  }
  return undefined;
}
