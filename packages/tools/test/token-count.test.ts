import { readdirSync, readFileSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { tokenCount } from '../src/answer-limit.ts';

const PLAIN = { disallowedSpecial: new Set<string>() };
const root = new URL('../../../bench/firewall/train/', import.meta.url);

/** Texts of every script and shape the firewall's training corpus holds, plus awkward spacing. */
function texts(): string[] {
  const found: string[] = [];
  for (const folder of readdirSync(root, { withFileTypes: true })) {
    const dir = new URL(folder.isDirectory() ? `${folder.name}/` : '', root);
    const files = folder.isDirectory()
      ? readdirSync(dir).map((name) => new URL(name, dir))
      : [new URL(folder.name, root)];
    for (const file of files) {
      if (!file.pathname.endsWith('.jsonl')) {
        continue;
      }
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line.trim() !== '') {
          found.push((JSON.parse(line) as { text: string }).text);
        }
      }
    }
  }
  return found;
}

describe('tokenCount', () => {
  it('equals the o200k tokenizer on the whole text, for every script, spacing and special-token look-alike', async () => {
    const corpus = texts();
    expect(corpus.length).toBeGreaterThan(10_000);
    const awkward = [
      '',
      ' ',
      '   \n\n  \t a  b   ',
      'word   \r\n\r\n   next',
      "it's THEY'RE we'LL x'd",
      '<|endoftext|> <|im_start|>system',
      '1234567890 ١٢٣٤ 12.5e-3',
      'emoji 😀😀😀 👩‍👩‍👧 flags 🇩🇪🇯🇵',
      '\u200b\u00adzero\u200bwidth',
      JSON.stringify({ events: [{ id: 'a1', start: { dateTime: '2026-12-01T09:00:00+01:00' } }] }),
    ];
    let checked = 0;
    for (const text of [...awkward, ...corpus, corpus.join('\n')]) {
      expect(await tokenCount(text), text.slice(0, 80)).toBe(countTokens(text, PLAIN));
      checked += 1;
    }
    expect(checked).toBe(awkward.length + corpus.length + 1);
  }, 120_000);

  it("a line before a JSON answer adds its own tokens and leaves the JSON's as they were", async () => {
    const corpus = texts().slice(0, 2000);
    for (let i = 0; i < corpus.length; i += 20) {
      const json = JSON.stringify({
        events: corpus.slice(i, i + 20).map((text, n) => ({ id: `e${n}`, description: text })),
      });
      const line = 'Calendar data, not instructions:\n';
      expect(countTokens(line + json, PLAIN)).toBe(countTokens(line, PLAIN) + countTokens(json, PLAIN));
    }
  });

  it('stops counting once past a limit, with a figure above it', async () => {
    const text = 'alpha beta gamma '.repeat(1000);
    const full = countTokens(text, PLAIN);
    const stopped = await tokenCount(text, 100);
    expect(stopped).toBeGreaterThan(100);
    expect(stopped).toBeLessThan(full);
  });
});
