/**
 * Graph's limits per app and mailbox: at most 4 requests in flight (a fifth is answered 429) and
 * 10,000 requests per 10 minutes. Every client of one mailbox must share its limits, so they come
 * from one registry keyed by the mailbox. `MailboxLimiter` keeps them within this process; the
 * gateway keeps them in Redis across processes (gateways and workers) and falls back to these
 * while Redis does not answer.
 */
import { CalgateError } from '@calgate/core';
import { formatSeconds } from '../google/failure.ts';

export const GRAPH_MAX_IN_FLIGHT = 4;

/** Requests per mailbox per window. */
export interface MailboxBudgetPolicy {
  limit: number;
  windowMs: number;
}

export const GRAPH_MAILBOX_BUDGET: Readonly<MailboxBudgetPolicy> = Object.freeze({
  limit: 10_000,
  windowMs: 600_000,
});

/** Slices of the budget's window in which requests are counted (ten seconds of ten minutes). */
const BUDGET_SLICES = 60;

/** What a Graph client needs of its mailbox's limits. */
export interface MailboxLimit {
  /**
   * Spends one of the mailbox's requests, then runs `task` in one of its slots once one is free.
   * Throws `MailboxBudgetSpent` (nothing run) when the window's requests are spent, and the
   * signal's reason when the caller gives up while waiting for a slot.
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** A registry of mailboxes' limits (key: the connection id). */
export interface MailboxLimits {
  for(mailbox: string): MailboxLimit;
  /** Forgets a mailbox (its connection was removed); requests already running keep their slots. */
  forget(mailbox: string): void;
}

function describeWindow(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}` : formatSeconds(ms);
}

function describeWait(ms: number): string {
  if (ms < 60_000) {
    return formatSeconds(ms);
  }
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.ceil((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/**
 * The mailbox's requests for the window are spent: nothing was sent. Retryable, with when (the
 * Graph client waits when that is soon, and otherwise ends the call with this).
 */
export class MailboxBudgetSpent extends CalgateError {
  override name = 'MailboxBudgetSpent';
  override readonly retryAfterMs: number;

  constructor(budget: MailboxBudgetPolicy, retryAfterMs: number, now: number) {
    const at = new Date(now + retryAfterMs).toISOString().replace(/\.\d+Z$/, 'Z');
    super(
      'rate_limited',
      `Microsoft 365 allows ${budget.limit.toLocaleString('en-US')} requests per mailbox every ${describeWindow(budget.windowMs)}, and this account's are spent; nothing was sent to Microsoft. Try again in ${describeWait(retryAfterMs)} (at ${at}).`,
      {
        retry: true,
        retryAfterMs,
        context: { retryAt: at, budget: budget.limit, windowMs: budget.windowMs },
      },
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Requests spent per slice of the window; a check adds up one slice more than the window holds,
 * so no window anywhere holds more than the limit (as `RedisWindowBudget` counts).
 */
class WindowCount {
  readonly #policy: MailboxBudgetPolicy;
  readonly #sliceMs: number;
  readonly #span: number;
  readonly #slices = new Map<number, number>();

  constructor(policy: MailboxBudgetPolicy) {
    this.#policy = policy;
    this.#sliceMs = Math.max(1, Math.ceil(policy.windowMs / BUDGET_SLICES));
    this.#span = Math.ceil(policy.windowMs / this.#sliceMs);
  }

  /** Spends one request; refused, the milliseconds until one fits. */
  take(now: number): number {
    const current = Math.floor(now / this.#sliceMs);
    const oldest = current - this.#span;
    let used = 0;
    for (const [slice, count] of this.#slices) {
      if (slice < oldest) {
        this.#slices.delete(slice);
      } else {
        used += count;
      }
    }
    if (used + 1 > this.#policy.limit) {
      let over = used + 1 - this.#policy.limit;
      for (const slice of [...this.#slices.keys()].sort((a, b) => a - b)) {
        over -= this.#slices.get(slice) ?? 0;
        if (over <= 0) {
          return Math.max(1, (slice + this.#span + 1) * this.#sliceMs - now);
        }
      }
      return this.#policy.windowMs + this.#sliceMs;
    }
    this.#slices.set(current, (this.#slices.get(current) ?? 0) + 1);
    return 0;
  }
}

export interface MailboxLimiterOptions {
  budget?: MailboxBudgetPolicy;
  now?: () => number;
}

/** One mailbox's limits within this process. */
export class MailboxLimiter implements MailboxLimit {
  readonly #limit: number;
  readonly #budget: MailboxBudgetPolicy;
  readonly #spent: WindowCount;
  readonly #now: () => number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit = GRAPH_MAX_IN_FLIGHT, options: MailboxLimiterOptions = {}) {
    this.#limit = limit;
    this.#budget = options.budget ?? GRAPH_MAILBOX_BUDGET;
    this.#spent = new WindowCount(this.#budget);
    this.#now = options.now ?? Date.now;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` once a slot is free; a caller that gives up while waiting leaves the queue. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    this.spend();
    const release = await this.acquire(signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  /** Spends one of the window's requests, or throws MailboxBudgetSpent. */
  spend(): void {
    const now = this.#now();
    const wait = this.#spent.take(now);
    if (wait > 0) {
      throw new MailboxBudgetSpent(this.#budget, wait, now);
    }
  }

  /** One of the mailbox's slots, once free; resolves with its release. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        this.#release();
      }
    };
    if (this.#active < this.#limit) {
      this.#active += 1;
      return Promise.resolve(release);
    }
    return new Promise<() => void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.#active += 1;
        resolve(release);
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) {
          this.#waiting.splice(index, 1);
        }
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(grant);
    });
  }

  #release(): void {
    this.#active -= 1;
    this.#waiting.shift()?.();
  }
}

/** One limiter per mailbox (key: the connection or account id) within this process, created on first use. */
export class MailboxLimiters implements MailboxLimits {
  readonly #limit: number;
  readonly #options: MailboxLimiterOptions;
  readonly #byMailbox = new Map<string, MailboxLimiter>();

  constructor(limit = GRAPH_MAX_IN_FLIGHT, options: MailboxLimiterOptions = {}) {
    this.#limit = limit;
    this.#options = options;
  }

  for(mailbox: string): MailboxLimiter {
    let limiter = this.#byMailbox.get(mailbox);
    if (limiter === undefined) {
      limiter = new MailboxLimiter(this.#limit, this.#options);
      this.#byMailbox.set(mailbox, limiter);
    }
    return limiter;
  }

  forget(mailbox: string): void {
    this.#byMailbox.delete(mailbox);
  }
}
