/**
 * One call to Google Calendar: inside the retry loop (retry.ts) with an access token from the
 * connection's token source, the token refreshed once after a 401, an attempt without a clear
 * answer marked ambiguous (so a create Google gives no id for is not sent twice), and a refusal
 * of a write through a read-only connection that names the account.
 */
import { CalgateError } from '@calgate/core';
import { type FailureContext, failureOf, readOnlyMessage, UpstreamFailure } from './failure.ts';
import { type RetryRuntime, withRetry } from './retry.ts';
import type { AccessTokenSource } from './token-sources.ts';

export interface CallOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
  /** Set when an attempt ended without a clear answer, so a write may have been applied. */
  outcome?: { ambiguous: boolean };
  /**
   * The request creates something Google gives no id for in advance (quickAdd, calendars.insert):
   * after an attempt without a clear answer, trying again could create it twice, so stop.
   */
  notRepeatable?: boolean;
}

export type Request<T> = (options: {
  headers: Record<string, string>;
  signal: AbortSignal;
  retry: false;
}) => Promise<{ data: T }>;

/** A provider's calls: `call` bound to its retry runtime, token source and account. */
export type Call = <T>(where: FailureContext, request: Request<T>, options?: CallOptions) => Promise<T>;

export async function call<T>(
  runtime: RetryRuntime,
  tokens: AccessTokenSource,
  account: string | undefined,
  where: FailureContext,
  request: Request<T>,
  options: CallOptions = {},
): Promise<T> {
  try {
    return await attempts(runtime, tokens, where, request, options);
  } catch (error) {
    if (account !== undefined && error instanceof CalgateError && error.context.readOnlyConnection === true) {
      throw new CalgateError(error.code, readOnlyMessage(account), { context: error.context });
    }
    throw error;
  }
}

async function attempts<T>(
  runtime: RetryRuntime,
  tokens: AccessTokenSource,
  where: FailureContext,
  request: Request<T>,
  options: CallOptions,
): Promise<T> {
  let refreshed = false;
  const outcome = options.outcome ?? (options.notRepeatable ? { ambiguous: false } : undefined);
  const response = await withRetry(
    runtime,
    where,
    async (attempt) => {
      if (options.notRepeatable && outcome?.ambiguous) {
        throw new CalgateError(
          'upstream_unavailable',
          `Google did not confirm ${where.operation}, so it may or may not have been applied; check before trying again.`,
          { context: { ...where, ambiguous: true } },
        );
      }
      const token = await tokens.token(attempt.signal);
      try {
        return await request({
          headers: { ...options.headers, authorization: `Bearer ${token}` },
          signal: attempt.signal,
          retry: false,
        });
      } catch (error) {
        if (attempt.signal.aborted) {
          if (outcome) {
            outcome.ambiguous = true;
          }
          throw error;
        }
        const failure = failureOf(error, runtime.now());
        if (failure === null) {
          throw error;
        }
        if (failure.kind === 'http' && failure.status === 401 && !refreshed) {
          refreshed = true;
          tokens.invalidate(token);
          throw new UpstreamFailure(failure, true);
        }
        // No answer or a 5xx: a write may have been applied before the failure.
        if (outcome && (failure.kind !== 'http' || failure.status >= 500)) {
          outcome.ambiguous = true;
        }
        throw new UpstreamFailure(failure);
      }
    },
    options.signal,
  );
  return response.data;
}
