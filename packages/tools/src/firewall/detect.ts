/**
 * Finds the first prompt-injection payload in a text: the rules of rules.ts, exfiltration.ts and
 * languages.ts on every form of normalize.ts, then the hints of signals.ts together, then the
 * same on whatever the text decodes to (decode.ts), two layers deep.
 */
import { decodings } from './decode.ts';
import { CASED_RULES, EXFILTRATION_RULES } from './exfiltration.ts';
import { LANGUAGE_RULES } from './languages.ts';
import { type Form, foldedVariants, type SquashedForm, sourceSpan, squash, words } from './normalize.ts';
import { AI_NOUN, type Pattern } from './patterns.ts';
import { RULES, type Rule } from './rules.ts';
import { conclusive, type Family, SIGNALS } from './signals.ts';

export interface Finding {
  /** What the payload is, for the message. */
  what: string;
  /** The text that shows it, as written (or as decoded). */
  match: string;
}

/** Encodings screened inside encodings, at most. */
const MAX_DEPTH = 2;
const ALL_RULES: Rule[] = [...RULES, ...EXFILTRATION_RULES, ...LANGUAGE_RULES];
const IS_AI_NOUN = new RegExp(`^${AI_NOUN}s?$`);

interface Views {
  source: string;
  folded: Form[];
  words: Form[];
  squashed: SquashedForm[];
}

function viewsOf(source: string): Views {
  const folded = foldedVariants(source);
  const wordForms = folded.map(words);
  return { source, folded, words: wordForms, squashed: wordForms.map(squash) };
}

interface Hit {
  match: string;
  /** Where the match starts in the source. */
  at: number;
  /** The first capture, when the pattern has one. */
  captured?: string;
}

function hit(views: Views, form: Form, m: RegExpExecArray): Hit {
  let start = m.index;
  while (start < m.index + m[0].length - 1 && /\s/.test(form.text[start] ?? '')) {
    start++;
  }
  return {
    match: sourceSpan(views.source, form, m.index, m.index + m[0].length),
    at: form.origin[start] ?? 0,
    captured: m[1],
  };
}

/** Scripts written without spaces, where any character can start or end a word. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;

function edge(form: SquashedForm, at: number, edges: Set<number>): boolean {
  return edges.has(at) || UNSPACED.test(form.text[at] ?? '') || UNSPACED.test(form.text[at - 1] ?? '');
}

/** The first match of a squashed pattern that starts and ends where words do. */
function squashedMatch(form: SquashedForm, re: RegExp): RegExpExecArray | undefined {
  re.lastIndex = 0;
  for (let m = re.exec(form.text); m !== null; m = re.exec(form.text)) {
    if (edge(form, m.index, form.starts) && edge(form, m.index + m[0].length, form.ends)) {
      return m;
    }
    re.lastIndex = m.index + 1;
  }
  return undefined;
}

function search(views: Views, pattern: Pattern): Hit | undefined {
  if (pattern.form === 'squashed') {
    for (const form of views.squashed) {
      const m = squashedMatch(form, pattern.re);
      if (m) {
        return hit(views, form, m);
      }
    }
    return undefined;
  }
  for (const form of views[pattern.form]) {
    const m = pattern.re.exec(form.text);
    if (m) {
      return hit(views, form, m);
    }
  }
  return undefined;
}

function byRules(views: Views): Finding | undefined {
  for (const rule of ALL_RULES) {
    for (const pattern of rule.patterns) {
      const hit = search(views, pattern);
      if (hit) {
        return { what: rule.what, match: hit.match };
      }
    }
  }
  const nfkc = views.source.normalize('NFKC');
  for (const rule of CASED_RULES) {
    for (const pattern of rule.patterns) {
      const m = pattern.re.exec(nfkc);
      if (m) {
        return { what: rule.what, match: m[0] };
      }
    }
  }
  return undefined;
}

/** Whether an address names an AI: "AI" does, the given name "Ai" does not. */
function isAiNoun(found: Hit): boolean {
  const noun = found.captured?.trim() ?? '';
  return IS_AI_NOUN.test(noun) && !(noun === 'ai' && /\bAi\b/.test(found.match));
}

/** Hints count together when they are this close (characters of the source apart). */
const NEAR = 240;

function bySignals(views: Views): Finding | undefined {
  const hits: { family: Family; hit: Hit }[] = [];
  for (const signal of SIGNALS) {
    for (const pattern of signal.patterns) {
      const found = search(views, pattern);
      if (found) {
        const family: Family = signal.family === 'address' && isAiNoun(found) ? 'address-ai' : signal.family;
        hits.push({ family, hit: found });
        break;
      }
    }
  }
  for (const anchor of hits) {
    const near = hits.filter((other) => Math.abs(other.hit.at - anchor.hit.at) <= NEAR);
    const families = new Set(near.map((h) => h.family));
    if (conclusive(families)) {
      const addressed = families.has('address') || families.has('address-ai') || families.has('trigger');
      const shown = [...new Set(near.sort((a, b) => a.hit.at - b.hit.at).map((h) => h.hit.match.trim()))];
      return {
        what: addressed ? 'instructions addressed to AI agents' : 'instructions for AI agents',
        match: shown.slice(0, 3).join(' … '),
      };
    }
  }
  return undefined;
}

/** The first injection payload in `text`, described, or undefined. */
export function findInjection(text: string, depth = 0): Finding | undefined {
  const views = viewsOf(text);
  const found = byRules(views) ?? bySignals(views);
  if (found !== undefined || depth >= MAX_DEPTH) {
    return found;
  }
  for (const decoded of decodings(text, views.folded[0]?.text ?? '')) {
    const inner = findInjection(decoded.text, depth + 1);
    if (inner !== undefined) {
      return { what: `${inner.what}, hidden as ${decoded.how}`, match: inner.match };
    }
  }
  return undefined;
}
