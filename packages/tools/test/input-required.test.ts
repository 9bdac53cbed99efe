import { randomBytes } from 'node:crypto';
import { MemoryOnceLedger, type OnceLedger } from '@calgate/locks';
import { describe, expect, it } from 'vitest';
import {
  askThroughResult,
  INPUT_STATE_TTL_MS,
  inputStateMatches,
  mintInputState,
  usedStateMessage,
} from '../src/guard/input-required.ts';

const secret = randomBytes(32);
const binding = { keyId: 'key_1', tool: 'delete_event', argsHash: 'abc' };
const now = new Date('2026-11-28T12:00:00Z');

describe('input_required request state', () => {
  it('matches only the call it was minted for, by the same server, before it expires', () => {
    const state = mintInputState(secret, binding, now);
    expect(inputStateMatches(secret, state, binding, now)).toBe(true);
    expect(inputStateMatches(secret, state, { ...binding, keyId: 'key_2' }, now)).toBe(false);
    expect(inputStateMatches(secret, state, { ...binding, tool: 'update_event' }, now)).toBe(false);
    expect(inputStateMatches(secret, state, { ...binding, argsHash: 'abd' }, now)).toBe(false);
    expect(inputStateMatches(randomBytes(32), state, binding, now)).toBe(false);
    const later = new Date(now.getTime() + INPUT_STATE_TTL_MS);
    expect(inputStateMatches(secret, state, binding, later)).toBe(false);
  });

  it('refuses states that are not its own shape', () => {
    const state = mintInputState(secret, binding, now);
    const [payload] = state.split('.');
    for (const bad of [undefined, 42, '', payload, `${state}.x`, `${payload}.`, 'x'.repeat(2_000)]) {
      expect(inputStateMatches(secret, bad, binding, now)).toBe(false);
    }
  });
});

describe('input_required answers are used once', () => {
  const accepted = { confirm: { action: 'accept', content: { allow: true } } };
  const elicitWith = (state: unknown, once: OnceLedger) =>
    askThroughResult({ secret, binding, now, responses: accepted, state, once, ask: () => {} });

  it('the first use of a state carries the answer; the same state again is refused in one sentence', async () => {
    const state = mintInputState(secret, binding, now);
    const once = new MemoryOnceLedger(() => now.getTime());
    expect(await elicitWith(state, once)('Allow?', {})).toEqual({
      action: 'accept',
      content: { allow: true },
    });
    expect(await elicitWith(state, once)('Allow?', {})).toEqual({
      refused: usedStateMessage('delete_event', 'used'),
    });
    // Another state for the same call is its own question, answered once too.
    const next = mintInputState(secret, binding, now);
    expect(await elicitWith(next, once)('Allow?', {})).toEqual({
      action: 'accept',
      content: { allow: true },
    });
  });

  it('when the ledger cannot answer (Redis away) the answer does not count', async () => {
    const state = mintInputState(secret, binding, now);
    const down: OnceLedger = {
      claim: async () => {
        throw new Error('Connection is closed.');
      },
    };
    expect(await elicitWith(state, down)('Allow?', {})).toEqual({
      refused: usedStateMessage('delete_event', 'unavailable'),
    });
    expect(usedStateMessage('delete_event', 'unavailable')).toBe(
      "delete_event was not run: Calgate cannot check just now that the person's answer sent with this call (its requestState) was not used already, because its shared store (Redis) does not answer, so the answer does not count. Try again in a few seconds.",
    );
  });

  it('a state minted without a nonce (by an earlier version) is asked again', async () => {
    const payload = Buffer.from(
      JSON.stringify({ k: 'key_1', t: 'delete_event', h: 'abc', e: now.getTime() + 60_000 }),
    ).toString('base64url');
    const { createHmac } = await import('node:crypto');
    const old = `${payload}.${createHmac('sha256', secret).update(payload).digest('base64url')}`;
    const asked: unknown[] = [];
    const elicit = askThroughResult({
      secret,
      binding,
      now,
      responses: accepted,
      state: old,
      once: new MemoryOnceLedger(),
      ask: (question) => asked.push(question),
    });
    expect(await elicit('Allow?', {})).toBe('input_required');
    expect(asked).toHaveLength(1);
  });
});
