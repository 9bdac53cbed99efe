/**
 * Outlook mailboxes' Graph limits across every process that calls Graph (gateways and `calgate
 * worker`s): at most 4 requests in flight per mailbox and 10,000 per 10 minutes, kept in Redis the
 * way API keys' concurrency is (`RedisKeyTurns`: leases renewed while held, so a process that
 * dies frees its slots within `leaseMs`; waiters first come, first served across processes) and
 * the requests counted in a window budget (`RedisWindowBudget`, on Redis's clock). While Redis
 * does not answer, each process keeps the limits by itself (`MailboxLimiters`): a mailbox may
 * then get 4 requests in flight per process, never without limit, and no call fails because
 * Redis is away.
 */
import { CalgateError } from '@calgate/core';
import { type KeyTurns, RedisKeyTurns, RedisWindowBudget, type WindowBudget } from '@calgate/locks';
import {
  GRAPH_MAILBOX_BUDGET,
  GRAPH_MAX_IN_FLIGHT,
  type MailboxBudgetPolicy,
  MailboxBudgetSpent,
  type MailboxLimit,
  MailboxLimiters,
  type MailboxLimits,
} from '@calgate/providers';
import type { Redis } from 'ioredis';
import type { OutageLog } from '../outage-log.ts';

/** Callers of one mailbox that may wait for a slot across the processes before more are refused. */
const MAX_WAITING = 10_000;

export interface SharedMailboxLimitsOptions {
  /** Requests per mailbox per window (Graph's: 10,000 per 10 minutes); smaller in tests. */
  budget?: MailboxBudgetPolicy;
  /** How long the slot of a process that stopped renewing it (it died) stays taken; default 15 s. */
  leaseMs?: number;
  /** Where the keys live in Redis (tests keep theirs apart). */
  prefix?: string;
  now?: () => number;
}

/** The mailboxes' limits in Redis, with this process's own as the fallback. */
export class SharedMailboxLimits implements MailboxLimits {
  readonly #turns: KeyTurns;
  readonly #budget: WindowBudget;
  readonly #policy: MailboxBudgetPolicy;
  readonly #local: MailboxLimiters;
  readonly #outage: OutageLog;
  readonly #now: () => number;

  constructor(redis: Redis, outage: OutageLog, options: SharedMailboxLimitsOptions = {}) {
    const prefix = options.prefix ?? 'calgate:graph:';
    this.#policy = options.budget ?? GRAPH_MAILBOX_BUDGET;
    this.#now = options.now ?? Date.now;
    this.#outage = outage;
    this.#turns = new RedisKeyTurns(
      redis,
      {
        limit: GRAPH_MAX_IN_FLIGHT,
        queued: MAX_WAITING,
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
        describe: (running, waiting) =>
          `This Microsoft 365 mailbox already has ${running} requests in flight and ${waiting} waiting across Calgate's processes; nothing was sent to Microsoft. Try again in a moment.`,
      },
      `${prefix}slots:`,
    );
    this.#budget = new RedisWindowBudget(redis, this.#policy, `${prefix}budget:`);
    this.#local = new MailboxLimiters(GRAPH_MAX_IN_FLIGHT, {
      budget: this.#policy,
      now: this.#now,
    });
  }

  for(mailbox: string): MailboxLimit {
    return { run: (task, signal) => this.#run(mailbox, task, signal) };
  }

  forget(mailbox: string): void {
    this.#local.forget(mailbox);
  }

  async #run<T>(mailbox: string, task: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    signal?.throwIfAborted();
    await this.#spend(mailbox);
    const release = await this.#slot(mailbox, signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  /** One of the window's requests, from Redis; while it is away, from this process's count. */
  async #spend(mailbox: string): Promise<void> {
    const startedAt = this.#outage.start();
    let decision: Awaited<ReturnType<WindowBudget['take']>>;
    try {
      decision = await this.#budget.take(mailbox);
    } catch (error) {
      this.#outage.failed(error, startedAt);
      this.#local.for(mailbox).spend();
      return;
    }
    this.#outage.succeeded(startedAt);
    if (!decision.allowed) {
      throw new MailboxBudgetSpent(this.#policy, decision.retryAfterMs, this.#now());
    }
  }

  /** One of the mailbox's slots, from Redis; while it is away, one of this process's. */
  async #slot(mailbox: string, signal: AbortSignal | undefined): Promise<() => void> {
    const startedAt = this.#outage.start();
    try {
      const release = await this.#turns.acquire(mailbox, signal);
      this.#outage.succeeded(startedAt);
      return release;
    } catch (error) {
      if (error instanceof CalgateError || signal?.aborted) {
        throw error;
      }
      this.#outage.failed(error, startedAt);
      return this.#local.for(mailbox).acquire(signal);
    }
  }
}

/** The mailboxes' limits: in Redis when there is one, else this process's own. */
export function mailboxLimits(
  redis: Redis | undefined,
  outage: OutageLog,
  options: SharedMailboxLimitsOptions = {},
): MailboxLimits {
  return redis === undefined
    ? new MailboxLimiters(GRAPH_MAX_IN_FLIGHT, {
        ...(options.budget === undefined ? {} : { budget: options.budget }),
        ...(options.now === undefined ? {} : { now: options.now }),
      })
    : new SharedMailboxLimits(redis, outage, options);
}
