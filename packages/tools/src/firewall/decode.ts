/**
 * Obvious encodings a payload hides behind: base64, hex, percent- and backslash-escapes, HTML
 * character references, ROT13 and reversed text. Each yields the decoded text for screening
 * when it decodes to readable text; ids, tokens and hashes decode to bytes and are left alone.
 */

export interface Decoded {
  /** How the text was encoded, for the message. */
  how: string;
  text: string;
}

/** Decoded text longer than this is not screened again. */
const MAX_DECODED = 32_768;
const MAX_RUNS = 24;

const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const HEX_RUN = /(?:\b|0x)((?:[0-9a-fA-F]{2}){10,})\b/g;
const HEX_ESCAPES = /(?:\\x[0-9a-fA-F]{2}){4,}/g;
const PERCENT = /(?:%[0-9a-fA-F]{2})+/g;
const UNICODE_ESCAPE = /\\u(?:\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4}))/g;
const ENTITY =
  /&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos|nbsp|sol|colon|lpar|rpar|lsqb|rsqb|vert|num));/gi;
const NAMED: Record<string, string> = {
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  sol: '/',
  colon: ':',
  lpar: '(',
  rpar: ')',
  lsqb: '[',
  rsqb: ']',
  vert: '|',
  num: '#',
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes as text when they are valid UTF-8 and nearly all readable, with a few words in them. */
function readable(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  const chars = Array.from(text);
  if (chars.length < 8) {
    return undefined;
  }
  let good = 0;
  let letters = 0;
  for (const char of chars) {
    if (/[\p{L}\p{M}]/u.test(char)) {
      letters++;
      good++;
    } else if (/[\p{N}\p{P}\p{S}\p{Zs}\n\r\t]/u.test(char)) {
      good++;
    }
  }
  return good / chars.length >= 0.95 && letters / chars.length >= 0.5 ? text : undefined;
}

function fromCodePoint(hex: string | undefined, decimal?: string): string | undefined {
  const cp = hex === undefined ? Number(decimal) : Number.parseInt(hex, 16);
  return Number.isInteger(cp) && cp >= 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : undefined;
}

function base64(text: string): string | undefined {
  const found: string[] = [];
  for (const [run] of text.matchAll(BASE64_RUN)) {
    if (found.length >= MAX_RUNS) {
      break;
    }
    const decoded = readable(Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
    if (decoded !== undefined) {
      found.push(decoded);
    }
  }
  return found.length > 0 ? found.join('\n') : undefined;
}

function hex(text: string): string | undefined {
  const found: string[] = [];
  for (const match of text.matchAll(HEX_RUN)) {
    const decoded = readable(Buffer.from(match[1] ?? '', 'hex'));
    if (decoded !== undefined) {
      found.push(decoded);
    }
  }
  for (const [run] of text.matchAll(HEX_ESCAPES)) {
    const decoded = readable(Buffer.from(run.replace(/\\x/g, ''), 'hex'));
    if (decoded !== undefined) {
      found.push(decoded);
    }
  }
  return found.length > 0 ? found.join('\n') : undefined;
}

function percent(text: string): string | undefined {
  const matches = text.match(PERCENT);
  if (matches === null || matches.join('').length < 9) {
    return undefined;
  }
  return text.replace(PERCENT, (run) => {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    try {
      return utf8.decode(bytes);
    } catch {
      return run;
    }
  });
}

function escapes(text: string): string | undefined {
  let changed = false;
  const unescaped = text
    .replace(UNICODE_ESCAPE, (whole, braced: string | undefined, plain: string | undefined) => {
      const char = fromCodePoint(braced ?? plain);
      changed ||= char !== undefined;
      return char ?? whole;
    })
    .replace(
      ENTITY,
      (whole, decimal: string | undefined, hexDigits: string | undefined, name: string | undefined) => {
        const char = name === undefined ? fromCodePoint(hexDigits, decimal) : NAMED[name.toLowerCase()];
        changed ||= char !== undefined;
        return char ?? whole;
      },
    );
  return changed ? unescaped : undefined;
}

/** Common English words as ROT13 and reversed writes them: two of them make decoding worth a try. */
const ROT13_WORDS =
  /\b(?:gur|naq|lbh|lbhe|nyy|guvf|sbe|jvgu|ner|abj|abg|vtaber|qvfertneq|sbetrg|cerivbhf|vafgehpgvbaf?|flfgrz|cebzcg|nffvfgnag|hfre)\b/g;
const REVERSED_WORDS =
  /\b(?:eht|dna|uoy|ruoy|lla|siht|rof|htiw|era|won|ton|erongi|dragersid|tegrof|suoiverp|snoitcurtsni?|metsys|tpmorp|tnatsissa|resu)\b/g;

function looksLike(words: RegExp, folded: string): boolean {
  return new Set(folded.match(words)).size >= 2;
}

function rot13(text: string): string {
  return text.replace(/[a-z]/gi, (c) => {
    const base = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });
}

/**
 * The decodings of `text` worth screening. `folded` is the text folded for matching (lower
 * case, see normalize.ts), where ROT13 and reversed words are spotted.
 */
export function decodings(text: string, folded: string): Decoded[] {
  const out: Decoded[] = [];
  const add = (how: string, decoded: string | undefined) => {
    if (decoded !== undefined && decoded !== text && decoded.length <= MAX_DECODED) {
      out.push({ how, text: decoded });
    }
  };
  add('base64', base64(text));
  add('hex', hex(text));
  add('percent-encoding', percent(text));
  add('escapes', escapes(text));
  if (looksLike(ROT13_WORDS, folded)) {
    add('ROT13', rot13(text));
  }
  if (looksLike(REVERSED_WORDS, folded)) {
    add('reversed text', Array.from(text).reverse().join(''));
  }
  return out;
}
