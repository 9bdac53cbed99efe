/**
 * The write firewall: text an agent writes into a calendar is read later by other agents, so it
 * must not carry instructions for them or text hidden from the people who read it.
 *
 * Invisible format characters are removed and reported; invisible characters that encode hidden
 * text (tag-character strings, long zero-width runs, stacked variation selectors) are refused.
 * Prompt-injection payloads (instruction overrides, fake role markers, tool-call JSON, links
 * that template secrets) are refused with the field named. Emoji, including ZWJ sequences,
 * flags and keycaps, and text in any script pass unchanged.
 */
import { CalgateError, err, ok, type Result } from '@calgate/core';

/** Characters removed from one field, as `U+200B×2` entries. */
export interface SanitizedField {
  field: string;
  removed: string[];
}

export interface ScreenedText {
  value: string;
  /** Present when invisible characters were removed. */
  sanitized?: SanitizedField;
}

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

function refuse(field: string, reason: string): Result<never, CalgateError> {
  return err(
    new CalgateError('invalid_argument', `Refused: '${field}' ${reason}`, {
      context: { field, firewall: true },
    }),
  );
}

/** Removes invisible characters, or refuses text in which they hide content. */
function cleanInvisible(field: string, value: string): Result<ScreenedText, CalgateError> {
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

/** Cyrillic and Greek letters that look like Latin ones, folded only for matching. */
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

/** Lowercase words between single spaces, with NFKC and Latin look-alikes folded: for matching only. */
function wordsOf(text: string): string {
  const folded = Array.from(text.normalize('NFKC').toLowerCase(), (c) => CONFUSABLES[c] ?? c).join('');
  return ` ${folded.replace(/[^\p{L}\p{N}]+/gu, ' ').trim()} `;
}

interface Rule {
  /** What the payload is, for the message. */
  what: string;
  /** Matched against the word form (see wordsOf). */
  words?: RegExp;
  /** Matched against the NFKC text. */
  raw?: RegExp;
  /** All must match the NFKC text. */
  rawAll?: RegExp[];
}

const OVERRIDE_VERB = '(?:ignore|disregard|forget|override|bypass|skip|drop|abandon)';
const PRIOR =
  '(?:previous|prior|above|earlier|preceding|foregoing|original|initial|old|existing|system|developer)';
const DIRECTIVES =
  '(?:instructions?|prompts?|directives?|guidelines?|guardrails?|rules|commands?|system messages?|context)';

const ORDERS = '(?:instructions?|prompts?|directives?|guidelines?|guardrails?|system messages?)';

const RULES: Rule[] = [
  {
    what: 'an instruction to ignore previous instructions',
    words: new RegExp(
      ` ${OVERRIDE_VERB} (?:all |any |every )?(?:of )?(?:the |your |my |these |those )?(?:${PRIOR} )+(?:and \\w+ )?${DIRECTIVES} `,
    ),
  },
  {
    what: 'an instruction to ignore previous instructions',
    words: new RegExp(
      ` ${OVERRIDE_VERB} (?:all|any|every|your) (?:of )?(?:the |your )?(?:safety )?${ORDERS} `,
    ),
  },
  {
    what: 'an instruction to ignore previous instructions',
    words:
      / (?:ignore|disregard|forget) (?:everything|anything|all) (?:above|before|you were told|you have been told) /,
  },
  {
    what: 'an attempt to give the agent a new role',
    words:
      / (?:you are now|from now on you are|from now on you will be|you will now act as|you must now act as|act as if you are|pretend (?:that )?you are) (?:an? |the |in )?(?:\w+ )?(?:ai|assistant|model|agent|bot|chatbot|llm|dan|jailbroken|unrestricted|unfiltered|developer mode|god mode|admin mode|system) /,
  },
  {
    what: 'an attempt to replace the agent’s instructions',
    words:
      / (?:new|updated|revised|real|actual|hidden|secret) (?:system instructions?|instructions? for (?:the |all |any )?(?:ai|assistant|agent|model|llm)s?) /,
  },
  {
    what: 'text addressed to AI agents',
    words:
      / (?:ai|llm|assistant|agent|model)s? (?:reading|processing|summari[sz]ing|seeing) this (?:must|should|shall|will|are instructed|is instructed) /,
  },
  {
    what: 'an instruction to hide actions from the user',
    words:
      / (?:do not|don t|dont|never) (?:tell|inform|notify|alert|mention (?:this |it |anything )?to) the user /,
  },
  {
    what: 'a fake system prompt',
    raw: /(?:^|\n)\s*(?:system|developer)\s*(?:prompt|message|instructions?)\s*:|\bsystem\s+prompt\s*:/i,
  },
  {
    what: 'a fake role marker',
    raw: /<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\s*\|>|\[\/?INST\]|<<\/?SYS>>|<\/?(?:start_of_turn|end_of_turn)>|<\/?(?:system|assistant|developer)(?:_prompt)?>/i,
  },
  {
    what: 'a fake role marker',
    raw: /(?:^|\n)\s*#{2,}\s*(?:system|assistant|developer)\s*(?:prompt|message)?\s*:?\s*(?:\n|$)/i,
  },
  {
    what: 'a smuggled tool call',
    raw: /"(?:tool_calls|function_call|tool_use|tool_code)"\s*:|<\/?(?:tool_call|tool_use|function_calls?|invoke)\b|"method"\s*:\s*"tools\/call"/i,
  },
  {
    what: 'a smuggled tool call',
    rawAll: [
      /"(?:name|tool|tool_name|function|recipient_name)"\s*:\s*"[A-Za-z_][\w.-]*"/,
      /"(?:arguments|args|parameters|input)"\s*:\s*\{/,
    ],
  },
  {
    what: 'a link that would send secrets out',
    raw: /(?:https?:)?\/\/[^\s)"'>]*(?:\{\{[^}]*\}\}|\$\{[^}]*\}|%7B%7B|\{[A-Za-z_]*(?:key|token|secret|password|prompt|conversation|history|data|email)[A-Za-z_]*\}|<[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD|DATA)[A-Z_]*>|\[[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD|DATA)[A-Z_]*\])/i,
  },
  {
    what: 'a request to reveal secrets',
    words:
      / (?:reveal|print|repeat|output|leak|disclose|exfiltrate|send me|tell me) (?:all )?(?:your|the) (?:system prompt|hidden instructions|initial instructions|original instructions|api keys?|access tokens?|secrets|credentials) /,
  },
];

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 57)}…` : flat;
}

/** The first injection payload in `text`, described, or undefined. */
export function findInjection(text: string): { what: string; match: string } | undefined {
  const raw = text.normalize('NFKC');
  const words = wordsOf(text);
  for (const rule of RULES) {
    if (rule.words) {
      const m = rule.words.exec(words);
      if (m) {
        return { what: rule.what, match: m[0].trim() };
      }
    }
    if (rule.raw) {
      const m = rule.raw.exec(raw);
      if (m) {
        return { what: rule.what, match: m[0].trim() };
      }
    }
    if (rule.rawAll) {
      const found = rule.rawAll.map((pattern) => pattern.exec(raw));
      if (found.every((m) => m !== null)) {
        return { what: rule.what, match: found.map((m) => m?.[0] ?? '').join(' … ') };
      }
    }
  }
  return undefined;
}

/**
 * Screens one text field: invisible characters removed (reported in `sanitized`) or refused when
 * they hide text; prompt-injection payloads refused. The message names the field.
 */
export function screenText(field: string, value: string): Result<ScreenedText, CalgateError> {
  const cleaned = cleanInvisible(field, value);
  if (!cleaned.ok) {
    return cleaned;
  }
  const found = findInjection(cleaned.value.value);
  if (found !== undefined) {
    return refuse(
      field,
      `looks like a prompt-injection payload (${found.what}: "${excerpt(found.match)}"). Calendar text is read by AI agents, so it must not carry instructions for them; rephrase it. Nothing was written.`,
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
