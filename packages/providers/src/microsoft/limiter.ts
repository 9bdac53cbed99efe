/**
 * At most N requests in flight per mailbox (Graph allows 4 concurrent requests per app per
 * mailbox and answers 429 beyond). Every client of one mailbox must share its limiter, so they
 * come from one registry keyed by the account, which the process keeps.
 */

export const GRAPH_MAX_IN_FLIGHT = 4;

export class MailboxLimiter {
  readonly #limit: number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit = GRAPH_MAX_IN_FLIGHT) {
    this.#limit = limit;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` once a slot is free; a caller that gives up while waiting leaves the queue. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#active < this.#limit) {
      this.#active += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.#active += 1;
        resolve();
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

/** One limiter per mailbox (key: the connection or account id), created on first use. */
export class MailboxLimiters {
  readonly #limit: number;
  readonly #byMailbox = new Map<string, MailboxLimiter>();

  constructor(limit = GRAPH_MAX_IN_FLIGHT) {
    this.#limit = limit;
  }

  for(mailbox: string): MailboxLimiter {
    let limiter = this.#byMailbox.get(mailbox);
    if (limiter === undefined) {
      limiter = new MailboxLimiter(this.#limit);
      this.#byMailbox.set(mailbox, limiter);
    }
    return limiter;
  }

  /** Forgets a mailbox (its connection was removed); requests already running keep their slots. */
  forget(mailbox: string): void {
    this.#byMailbox.delete(mailbox);
  }
}
