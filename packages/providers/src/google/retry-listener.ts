/**
 * Who hears about a retry of a Google call. The retry loop runs deep below the code that knows
 * whom to tell (a tool call with its client's event stream), and the CalendarProvider contract has
 * no place for a listener on every method, so the listener travels with the async context instead:
 * `whileListeningForRetries` runs work with one, and every retry inside that work reaches it.
 * Work outside any listener retries as before, silently.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** One failed attempt of a Google call that is about to be tried again. */
export interface UpstreamRetry {
  /** The Google operation, e.g. `events.list`, `freebusy.query`, `oauth.token`. */
  operation: string;
  /** Google's id of the calendar the call is about, when it is about one. */
  calendarId?: string;
  /** What went wrong: an HTTP status (with Google's reason code), no answer, or a timeout. */
  failure:
    | { kind: 'http'; status: number; reason?: string }
    | { kind: 'network'; code: string }
    | { kind: 'timeout'; afterMs: number };
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Attempts the policy allows in all (the time budget may end the call sooner). */
  maxAttempts: number;
  /** How long the loop waits before the next attempt. */
  delayMs: number;
}

export type RetryListener = (retry: UpstreamRetry) => void;

const listeners = new AsyncLocalStorage<RetryListener>();

/** Runs `work` so that every Google call it makes tells `listener` before retrying. */
export function whileListeningForRetries<T>(listener: RetryListener, work: () => T): T {
  return listeners.run(listener, work);
}

/** Tells the current listener, if any; a listener that throws never fails the call. */
export function announceRetry(retry: UpstreamRetry): void {
  const listener = listeners.getStore();
  if (listener === undefined) {
    return;
  }
  try {
    listener(retry);
  } catch {
    // The listener is a courtesy to the caller; the retry goes ahead regardless.
  }
}
