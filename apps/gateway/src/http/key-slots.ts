/**
 * How many tool calls each API key runs at once in this gateway process. A call beyond the
 * limit waits its turn (first come, first served); when too many of the key's calls are already
 * waiting, it is refused at once. Every call of a JSON-RPC batch counts, so a key cannot get
 * around the limit by packing calls into one request. These limits are this process's own: with
 * Redis, the gateway takes the key's slots there (`RedisKeyTurns`, the same rules across every
 * gateway) and falls back to these while Redis is unreachable.
 */
import { CalgateError } from '@calgate/core';

interface KeyState {
  running: number;
  waiting: (() => void)[];
}

export interface KeySlotLimits {
  concurrentPerKey: number;
  queuedPerKey: number;
}

export class KeySlots {
  readonly #limits: KeySlotLimits;
  readonly #keys = new Map<string, KeyState>();

  constructor(limits: KeySlotLimits) {
    this.#limits = limits;
  }

  /** Resolves with the release of a slot once the key has one free; throws when its queue is full. */
  async acquire(keyId: string): Promise<() => void> {
    let state = this.#keys.get(keyId);
    if (state === undefined) {
      state = { running: 0, waiting: [] };
      this.#keys.set(keyId, state);
    }
    if (state.running >= this.#limits.concurrentPerKey) {
      if (state.waiting.length >= this.#limits.queuedPerKey) {
        throw new CalgateError(
          'rate_limited',
          `This API key already has ${state.running} calls running and ${state.waiting.length} waiting (MCP_MAX_CONCURRENT_PER_KEY ${this.#limits.concurrentPerKey}, MCP_MAX_QUEUED_PER_KEY ${this.#limits.queuedPerKey}); nothing was done. Wait for answers before sending more.`,
          { retry: true, retryAfterMs: 1000 },
        );
      }
      const current = state;
      await new Promise<void>((resolve) => current.waiting.push(resolve));
    } else {
      state.running++;
    }
    const held = state;
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      const next = held.waiting.shift();
      if (next !== undefined) {
        next(); // the slot passes straight to the next waiting call
        return;
      }
      held.running--;
      if (held.running === 0) {
        this.#keys.delete(keyId);
      }
    };
  }

  /** Calls running and waiting for a key (for metrics and tests). */
  load(keyId: string): { running: number; waiting: number } {
    const state = this.#keys.get(keyId);
    return { running: state?.running ?? 0, waiting: state?.waiting.length ?? 0 };
  }
}
