/** The text of a scheduled prompt. */
import { CalgateError, err, ok, type Result } from '@calgate/core';

export const MAX_PROMPT_CHARACTERS = 10_000;

function invalid(message: string, context: Record<string, unknown> = {}): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message, { context }));
}

/**
 * The prompt unchanged, or an error: it must be text with something other than white space, at
 * most 10,000 characters (Unicode code points), and without NUL characters.
 */
export function validatePrompt(prompt: unknown): Result<string, CalgateError> {
  if (typeof prompt !== 'string') {
    return invalid('The prompt must be text.');
  }
  if (prompt.trim() === '') {
    return invalid('The prompt is empty; give the text to deliver when the schedule fires.');
  }
  let length = 0;
  for (const _ of prompt) {
    length += 1;
  }
  if (length > MAX_PROMPT_CHARACTERS) {
    return invalid(
      `The prompt is ${length} characters long; the limit is ${MAX_PROMPT_CHARACTERS.toLocaleString('en-US')}.`,
      { length },
    );
  }
  const nul = prompt.indexOf('\u0000');
  if (nul >= 0) {
    return invalid(`The prompt contains a NUL character (at position ${nul}).`, { position: nul });
  }
  return ok(prompt);
}
