/**
 * One call to Google within a time budget: each attempt gets a timeout, transient failures
 * (rate limits, 5xx, no answer) are retried with exponential backoff and full jitter or after
 * Retry-After, and the loop never sleeps past the budget — it gives up with an error that says
 * how long it tried. Permanent failures end the call at once.
 */
import { CalgateError } from '@calgate/core';
import {
  type Failure,
  type FailureContext,
  formatSeconds,
  isRateLimit,
  isRetryable,
  permanentError,
  UpstreamFailure,
} from './failure.ts';
import { announceRetry, type UpstreamRetry } from './retry-listener.ts';

export interface RetryPolicy {
  /** Wall time one call may take, attempts and waits included. */
  budgetMs: number;
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  budgetMs: 8000,
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 4000,
});

export interface RetryRuntime {
  policy: RetryPolicy;
  /** Upper bound for one attempt; the remaining budget bounds it too. */
  requestTimeoutMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

export interface Attempt {
  number: number;
  /** Aborted when the attempt times out or the caller gives up. */
  signal: AbortSignal;
}

const TIMEOUT = Symbol('attempt timeout');

export const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function abortable(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) {
    return promise;
  }
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

interface GiveUp {
  failure: Failure;
  attempts: number;
  elapsedMs: number;
  /** The wait that no longer fitted in the budget, when that is why we stopped. */
  nextDelayMs?: number;
}

function giveUpError(state: GiveUp, policy: RetryPolicy, where: FailureContext): CalgateError {
  const { failure, attempts, elapsedMs, nextDelayMs } = state;
  const tried = attempts === 1 ? '' : ` (${attempts} attempts over ${formatSeconds(elapsedMs)})`;
  const context: Record<string, unknown> = { ...where, attempts, elapsedMs: Math.round(elapsedMs) };
  if (failure.kind === 'timeout') {
    return new CalgateError(
      'upstream_unavailable',
      `Google did not answer within ${formatSeconds(failure.afterMs)}${tried}; try again shortly.`,
      { retry: true, context: { ...context, timeout: true } },
    );
  }
  if (failure.kind === 'network') {
    return new CalgateError(
      'upstream_unavailable',
      `Google Calendar could not be reached (${failure.code})${tried}; try again shortly.`,
      { retry: true, context },
    );
  }
  context.status = failure.status;
  if (failure.reason !== undefined) {
    context.reason = failure.reason;
  }
  if (isRateLimit(failure)) {
    const asked =
      failure.retryAfterMs !== undefined && nextDelayMs !== undefined && nextDelayMs === failure.retryAfterMs
        ? ` Google asked to wait ${formatSeconds(failure.retryAfterMs)}, beyond the ${formatSeconds(policy.budgetMs)} budget.`
        : '';
    return new CalgateError(
      'rate_limited',
      `Google is rate-limiting this account (HTTP ${failure.status})${tried}.${asked} Try again later.`,
      {
        retry: true,
        ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
        context,
      },
    );
  }
  return new CalgateError(
    'upstream_unavailable',
    `Google Calendar is unavailable (HTTP ${failure.status}: ${failure.message})${tried}; try again shortly.`,
    { retry: true, context },
  );
}

/** Google's reason codes (`backendError`, `rateLimitExceeded`); anything else is not passed on. */
const REASON_CODE = /^[A-Za-z_]{1,64}$/;

/** The failure as a retry listener hears it: statuses and codes only, never Google's texts. */
function retrySummary(failure: Failure): UpstreamRetry['failure'] {
  switch (failure.kind) {
    case 'network':
      return { kind: 'network', code: failure.code };
    case 'timeout':
      return { kind: 'timeout', afterMs: failure.afterMs };
    case 'http':
      return {
        kind: 'http',
        status: failure.status,
        ...(failure.reason !== undefined && REASON_CODE.test(failure.reason)
          ? { reason: failure.reason }
          : {}),
      };
  }
}

/** Runs `run` until it succeeds, fails permanently, or the budget or attempts are spent. */
export async function withRetry<T>(
  runtime: RetryRuntime,
  where: FailureContext,
  run: (attempt: Attempt) => Promise<T>,
  callerSignal?: AbortSignal,
): Promise<T> {
  const { policy } = runtime;
  const start = runtime.now();
  for (let number = 1; ; number += 1) {
    callerSignal?.throwIfAborted();
    const remaining = policy.budgetMs - (runtime.now() - start);
    const timeoutMs = Math.max(1, Math.min(runtime.requestTimeoutMs, remaining));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMEOUT), timeoutMs);
    const onAbort = () => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onAbort, { once: true });
    let failure: Failure;
    let immediate = false;
    try {
      return await run({ number, signal: controller.signal });
    } catch (error) {
      if (callerSignal?.aborted) {
        throw callerSignal.reason;
      }
      if (controller.signal.aborted && controller.signal.reason === TIMEOUT) {
        failure = { kind: 'timeout', afterMs: timeoutMs };
      } else if (error instanceof UpstreamFailure) {
        failure = error.failure;
        immediate = error.immediate;
      } else {
        throw error;
      }
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    }
    if (!immediate && !isRetryable(failure)) {
      throw permanentError(failure, where);
    }
    const elapsedMs = runtime.now() - start;
    if (number >= policy.maxAttempts) {
      throw giveUpError({ failure, attempts: number, elapsedMs }, policy, where);
    }
    const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (number - 1));
    const delay = immediate
      ? 0
      : failure.kind === 'http' && failure.retryAfterMs !== undefined
        ? failure.retryAfterMs
        : Math.floor(runtime.random() * backoff);
    if (elapsedMs + delay >= policy.budgetMs) {
      throw giveUpError({ failure, attempts: number, elapsedMs, nextDelayMs: delay }, policy, where);
    }
    // A retry forced by a token refresh is routine; one after a failure is worth telling.
    if (!immediate) {
      announceRetry({
        operation: where.operation,
        ...(where.calendarId === undefined ? {} : { calendarId: where.calendarId }),
        failure: retrySummary(failure),
        attempt: number,
        maxAttempts: policy.maxAttempts,
        delayMs: delay,
      });
    }
    if (delay > 0) {
      await abortable(runtime.sleep(delay), callerSignal);
    }
  }
}
