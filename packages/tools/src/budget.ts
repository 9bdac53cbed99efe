/**
 * What one HTTP request to /api/mcp may cost the gateway, across every call in it (a JSON-RPC
 * batch shares one budget): recurrence instances expanded, events returned, bytes of answer.
 * A call that would go over is refused with a tool error that says which limit and what to do,
 * before it does the work where the cost is known up front (expand_rrule's count), else before
 * its answer is sent. The limits keep one key from stalling the gateway for everyone.
 */
import { CalgateError } from '@calgate/core';

export interface BudgetLimits {
  /** Recurrence instances expanded per request (MCP_MAX_INSTANCES_PER_REQUEST). */
  instances: number;
  /** Events returned per request (MCP_MAX_EVENTS_PER_REQUEST). */
  events: number;
  /** Bytes of tool answers per request (MCP_MAX_ANSWER_BYTES). */
  answerBytes: number;
}

export const DEFAULT_BUDGET: BudgetLimits = {
  instances: 20_000,
  events: 10_000,
  answerBytes: 5 * 1024 * 1024,
};

const SETTING: Record<keyof BudgetLimits, string> = {
  instances: 'MCP_MAX_INSTANCES_PER_REQUEST',
  events: 'MCP_MAX_EVENTS_PER_REQUEST',
  answerBytes: 'MCP_MAX_ANSWER_BYTES',
};

const NOUN: Record<keyof BudgetLimits, string> = {
  instances: 'recurrence instances',
  events: 'events',
  answerBytes: 'of answer',
};

const ADVICE: Record<keyof BudgetLimits, string> = {
  instances: 'ask for a smaller count, or spread the calls over several requests',
  events: 'narrow timeMin/timeMax or lower maxResults, or spread the calls over several requests',
  answerBytes:
    'ask for less (a narrower range, fewer results, a smaller count), or spread the calls over several requests',
};

function formatAmount(kind: keyof BudgetLimits, amount: number): string {
  return kind === 'answerBytes'
    ? `${(amount / (1024 * 1024)).toFixed(1)} MB`
    : amount.toLocaleString('en-US');
}

export class WorkBudget {
  readonly #limits: BudgetLimits;
  readonly #spent: Record<keyof BudgetLimits, number> = { instances: 0, events: 0, answerBytes: 0 };

  constructor(limits: BudgetLimits = DEFAULT_BUDGET) {
    this.#limits = limits;
  }

  /** The request's limit of `kind`. */
  limit(kind: keyof BudgetLimits): number {
    return this.#limits[kind];
  }

  /** Spends `amount`, or throws (spending nothing) when the request's limit would be passed. */
  spend(kind: keyof BudgetLimits, amount: number): void {
    const limit = this.#limits[kind];
    const total = this.#spent[kind] + amount;
    if (total > limit) {
      const earlier =
        this.#spent[kind] > 0
          ? `, with ${formatAmount(kind, this.#spent[kind])} spent by earlier calls in it`
          : '';
      throw new CalgateError(
        'rate_limited',
        `This call would bring the request to ${formatAmount(kind, total)} ${NOUN[kind]}${earlier}; the limit is ${formatAmount(kind, limit)} per request (${SETTING[kind]}). Nothing was done: ${ADVICE[kind]}.`,
        { context: { limit: kind } },
      );
    }
    this.#spent[kind] = total;
  }
}
