/** The characters a query may hold: no control characters, no lone surrogates. */
import { RuleError } from './errors.ts';

export function checkCharacters(query: string): RuleError | undefined {
  for (let i = 0; i < query.length; i++) {
    const code = query.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0x7f && code <= 0x9f)) {
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      return new RuleError(
        'control_character',
        `Control character U+${hex} at position ${i}: a query may contain printable characters, spaces, tabs and line breaks only.`,
        { position: i },
      );
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const pair = code <= 0xdbff && i + 1 < query.length && (query.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
      if (!pair) {
        return new RuleError(
          'invalid_unicode',
          `Invalid Unicode at position ${i}: a lone surrogate U+${code.toString(16).toUpperCase()} is not a character.`,
          { position: i },
        );
      }
      i += 1;
    }
  }
  return undefined;
}
