import { encode } from '@toon-format/toon';
import { z } from 'zod';

/** How a read tool writes its text content; structuredContent is JSON either way. */
export const format = z
  .enum(['json', 'toon'])
  .default('json')
  .describe('Text as json or toon (fewer tokens).');

export type Format = z.infer<typeof format>;

/**
 * The text content of a result. TOON encodes exactly the JSON data model of the result (what
 * JSON.stringify would keep), so decoding it gives back the structured content.
 */
export function formatText(result: unknown, as: Format | undefined): string {
  const json = JSON.stringify(result);
  if (as !== 'toon') {
    return json;
  }
  return encode(JSON.parse(json));
}
