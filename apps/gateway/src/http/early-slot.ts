/**
 * A single tool call's concurrency slot, asked for in the guard beside the key's rate limit: with
 * Redis's auto-pipelining both go in one round trip, so a call waits for Redis once before it
 * runs, not twice. The call takes the slot when it is admitted (callTool's `admit`); a request
 * that never gets there (refused by the rate limit, invalid arguments, an unknown tool) gives it
 * back. The slot's rules are unchanged: the same key turns, only asked for a few microseconds
 * earlier.
 */
import type { KeyTurns } from '@calgate/locks';
import { callsRiskyTool } from './mcp-messages.ts';

export class EarlySlot {
  readonly #turn: Promise<() => void>;
  #state: 'waiting' | 'taken' | 'dropped' = 'waiting';

  constructor(turn: Promise<() => void>) {
    this.#turn = turn;
    // A refusal reaches the call that takes the slot; nobody else waits on it.
    turn.catch(() => {});
  }

  /** The slot asked for early, once; every later caller asks `again`. */
  take(again: () => Promise<() => void>): Promise<() => void> {
    if (this.#state !== 'waiting') {
      return again();
    }
    this.#state = 'taken';
    return this.#turn;
  }

  /** Gives the slot back if no call took it (idempotent). */
  drop(): void {
    if (this.#state === 'waiting') {
      this.#state = 'dropped';
      this.#turn.then(
        (release) => release(),
        () => {},
      );
    }
  }
}

/**
 * The early slot of a POST that is one tools/call request, or undefined. Batches take their
 * slots call by call; risky tools may wait for a person before they run and take theirs after.
 */
export function earlySlotFor(slots: KeyTurns, keyId: string, body: unknown): EarlySlot | undefined {
  if (Array.isArray(body) || body === null || typeof body !== 'object') {
    return undefined;
  }
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (method !== 'tools/call' || (typeof id !== 'string' && typeof id !== 'number') || callsRiskyTool(body)) {
    return undefined;
  }
  return new EarlySlot(slots.acquire(keyId));
}
