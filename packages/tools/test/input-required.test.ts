import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { INPUT_STATE_TTL_MS, inputStateMatches, mintInputState } from '../src/guard/input-required.ts';

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
