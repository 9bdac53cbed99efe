/**
 * Graph's Outlook limits per mailbox: at most 4 requests in flight (a fifth is refused at once
 * with 429 and Retry-After) and a budget of 10,000 requests per 10 minutes.
 */
import { type GraphError, graphErrors } from './errors.ts';

export interface ThrottleLimits {
  /** Requests in flight per mailbox (default 4). */
  concurrency: number;
  /** Requests per window per mailbox (default 10,000). */
  budget: number;
  /** Window in ms (default 10 minutes). */
  windowMs: number;
}

export const DEFAULT_LIMITS: ThrottleLimits = { concurrency: 4, budget: 10_000, windowMs: 600_000 };

export class Throttle {
  limits: ThrottleLimits;
  readonly #inFlight = new Map<string, number>();
  readonly #hits = new Map<string, number[]>();

  constructor(limits: Partial<ThrottleLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  clear(): void {
    this.#inFlight.clear();
    this.#hits.clear();
  }

  inFlight(mailbox: string): number {
    return this.#inFlight.get(mailbox) ?? 0;
  }

  /** Admits a request (call `release` when its answer is out) or says why not. */
  admit(mailbox: string, now: number): { release: () => void } | { error: GraphError } {
    const hits = (this.#hits.get(mailbox) ?? []).filter((t) => t > now - this.limits.windowMs);
    this.#hits.set(mailbox, hits);
    if (hits.length >= this.limits.budget) {
      const wait = Math.max(1, Math.ceil(((hits[0] as number) + this.limits.windowMs - now) / 1000));
      return {
        error: graphErrors.throttled('Application is over its request limit for this mailbox.', wait),
      };
    }
    const flying = this.inFlight(mailbox);
    if (flying >= this.limits.concurrency) {
      return { error: graphErrors.throttled('Application is over its MailboxConcurrency limit.', 1) };
    }
    hits.push(now);
    this.#inFlight.set(mailbox, flying + 1);
    let released = false;
    return {
      release: () => {
        if (!released) {
          released = true;
          this.#inFlight.set(mailbox, Math.max(0, this.inFlight(mailbox) - 1));
        }
      },
    };
  }
}
