import { CalgateError } from '@calgate/core';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_TOKEN_LIMIT,
  decodePageToken,
  encodePageToken,
  type FitRequest,
  fitAnswer,
  resumeAfter,
  tokenBound,
} from '../src/answer-limit.ts';
import { jsonOf } from '../src/format.ts';

const PLAIN = { disallowedSpecial: new Set<string>() };
const tokens = (text: string) => encode(text, PLAIN).length;

/** `count` items of about 250 tokens each, distinct. */
const items = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    id: `item${index}`,
    text: Array.from({ length: 120 }, (_, word) => `w${(index * 131 + word * 17) % 997}`).join(' '),
  }));

function request(answer: Record<string, unknown>, pageable = true): FitRequest {
  return { tool: 'demo', answer, render: jsonOf, pageable, digest: () => 'digest', before: 0 };
}

describe('fitAnswer', () => {
  it('passes an answer within the limit unchanged, judged on its bytes', async () => {
    const answer = { items: items(10) };
    const fitted = await fitAnswer(request(answer));
    expect(fitted.answer).toBe(answer);
    expect(fitted.note).toBeUndefined();
    expect(await tokenBound('x'.repeat(ANSWER_TOKEN_LIMIT))).toBe(ANSWER_TOKEN_LIMIT);
  });

  it('pages a long list; resuming after each page gives every item once, in order', async () => {
    const all = items(400);
    const seen: unknown[] = [];
    let before = 0;
    let answer: Record<string, unknown> = { items: all, timeZone: 'UTC' };
    for (let page = 0; page < 20; page += 1) {
      const fitted = await fitAnswer({ ...request(answer), before });
      expect(tokens(fitted.json)).toBeLessThanOrEqual(ANSWER_TOKEN_LIMIT);
      expect(fitted.answer.timeZone).toBe('UTC');
      seen.push(...(fitted.answer.items as unknown[]));
      const token = fitted.answer.nextPageToken as string | undefined;
      if (token === undefined) {
        break;
      }
      expect(fitted.note).toMatch(/^\d+ items here, \d+ more: call demo again with the same arguments/);
      ({ answer, from: before } = resumeAfter(
        { items: all, timeZone: 'UTC' },
        decodePageToken(token, 'demo'),
        'demo',
      ));
    }
    expect(seen).toEqual(all);
  });

  it("a write tool's answer says how many items it left out instead of paging", async () => {
    const fitted = await fitAnswer(request({ results: items(400) }, false));
    expect(fitted.answer.nextPageToken).toBeUndefined();
    const kept = (fitted.answer.results as unknown[]).length;
    expect(fitted.answer.cut).toBe(
      `${400 - kept} of 400 items were left out to keep the answer within 25,000 tokens.`,
    );
    expect(tokens(fitted.json)).toBeLessThanOrEqual(ANSWER_TOKEN_LIMIT);
  });

  it('counts text that looks like special tokens as text', async () => {
    const fitted = await fitAnswer(
      request({ event: { id: 'e1', description: '<|endoftext|> '.repeat(20_000) } }),
    );
    expect(tokens(fitted.json)).toBeLessThanOrEqual(ANSWER_TOKEN_LIMIT);
    expect(fitted.answer.cut).toMatch(/^Cut to keep the answer within 25,000 tokens: event\.description \(/);
  });

  it('refuses an answer nothing can be cut from, saying how to ask for less', async () => {
    const numbers = { matrix: { rows: Array.from({ length: 40_000 }, (_, index) => index) } };
    await expect(fitAnswer(request(numbers))).rejects.toThrow(/ask for less/);
  });
});

describe('page tokens', () => {
  const token = encodePageToken({ t: 'demo', h: 'digest', o: 3, l: 'abc' });

  it('refuse edits, other tools and items that are gone', () => {
    const edited = token.replace(/\.([^.]*)$/, (_, check: string) => `.${check.slice(1)}x`);
    expect(() => decodePageToken(edited, 'demo')).toThrow(CalgateError);
    expect(() => decodePageToken(token, 'other')).toThrow('pageToken continues demo, not other');
    expect(() => resumeAfter({ items: items(5) }, decodePageToken(token, 'demo'), 'demo')).toThrow(
      /has changed since the page before/,
    );
  });
});
