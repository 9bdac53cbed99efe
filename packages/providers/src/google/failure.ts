/**
 * What went wrong talking to Google, read once from whatever the transport threw (a GaxiosError
 * from googleapis or a token-endpoint answer), and mapped to a CalgateError for permanent
 * failures. Tokens never enter messages or context: only statuses, reasons and Google's texts.
 */
import { CalgateError } from '@calgate/core';

export type Failure =
  | {
      kind: 'http';
      status: number;
      /** Calendar API `errors[0].reason`, or the OAuth `error` code. */
      reason?: string;
      message: string;
      retryAfterMs?: number;
    }
  /** No answer: refused, reset, dropped connection, DNS. */
  | { kind: 'network'; code: string }
  | { kind: 'timeout'; afterMs: number };

/** Thrown inside an attempt; the retry loop decides whether to try again. */
export class UpstreamFailure extends Error {
  readonly failure: Failure;
  /** Try again at once, without backoff (after a token refresh forced by a 401). */
  readonly immediate: boolean;

  constructor(failure: Failure, immediate = false) {
    super(describeFailure(failure));
    this.name = 'UpstreamFailure';
    this.failure = failure;
    this.immediate = immediate;
  }
}

const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

export function isRateLimit(failure: Failure): boolean {
  return (
    failure.kind === 'http' &&
    (failure.status === 429 || (failure.status === 403 && RATE_REASONS.has(failure.reason ?? '')))
  );
}

export function isRetryable(failure: Failure): boolean {
  if (failure.kind !== 'http') {
    return true;
  }
  return isRateLimit(failure) || failure.status >= 500 || failure.status === 408;
}

export function formatSeconds(ms: number): string {
  if (ms < 100) {
    return `${Math.round(ms)} ms`;
  }
  const seconds = ms / 1000;
  return Number.isInteger(seconds) || seconds >= 10 ? `${Math.round(seconds)} s` : `${seconds.toFixed(1)} s`;
}

export function describeFailure(failure: Failure): string {
  switch (failure.kind) {
    case 'http':
      return `HTTP ${failure.status}${failure.reason ? ` ${failure.reason}` : ''}: ${failure.message}`;
    case 'network':
      return `no answer (${failure.code})`;
    case 'timeout':
      return `no answer within ${formatSeconds(failure.afterMs)}`;
  }
}

/** Seconds or an HTTP date, as Retry-After allows; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value.trim() === '') {
    return undefined;
  }
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    return Math.round(Number(text) * 1000);
  }
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function headerValue(headers: unknown, name: string): string | undefined {
  // gaxios answers with node-fetch's Headers, not the global class: read it by shape.
  const get = (headers as { get?: unknown } | null)?.get;
  if (typeof get === 'function') {
    const value: unknown = get.call(headers, name);
    return typeof value === 'string' ? value : undefined;
  }
  if (headers !== null && typeof headers === 'object') {
    const value = (headers as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/** Reads Google's two error shapes: Calendar's `{error:{message,errors:[{reason}]}}` and OAuth's `{error, error_description}`. */
export function httpFailure(
  status: number,
  data: unknown,
  retryAfter: string | undefined,
  now: number,
): Failure {
  let reason: string | undefined;
  let message = `HTTP ${status}`;
  if (data !== null && typeof data === 'object') {
    const body = data as Record<string, unknown>;
    if (typeof body.error === 'string') {
      reason = body.error;
      message = typeof body.error_description === 'string' ? body.error_description : body.error;
    } else if (body.error !== null && typeof body.error === 'object') {
      const error = body.error as { message?: unknown; errors?: { reason?: unknown }[] };
      if (typeof error.message === 'string') {
        message = error.message;
      }
      const first = error.errors?.[0]?.reason;
      if (typeof first === 'string') {
        reason = first;
      }
    }
  } else if (typeof data === 'string' && data.trim() !== '' && data.length < 300) {
    message = data.trim();
  }
  const failure: Failure = { kind: 'http', status, message };
  if (reason !== undefined) {
    failure.reason = reason;
  }
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  if (retryAfterMs !== undefined) {
    failure.retryAfterMs = retryAfterMs;
  }
  return failure;
}

/** The system error code (ECONNREFUSED, ECONNRESET …) somewhere in an error's cause chain. */
export function networkCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') {
      return code;
    }
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  return 'connection failed';
}

/**
 * What a googleapis (gaxios) call failed with. Returns null for errors that are not about the
 * exchange with Google (bugs, a caller's own abort), which the caller rethrows as they are.
 */
export function failureOf(error: unknown, now: number): Failure | null {
  if (error === null || typeof error !== 'object') {
    return null;
  }
  const response = (error as { response?: { status?: unknown; data?: unknown; headers?: unknown } }).response;
  if (response && typeof response.status === 'number') {
    return httpFailure(response.status, response.data, headerValue(response.headers, 'retry-after'), now);
  }
  // A GaxiosError (it carries the request `config`) without a response: nothing came back.
  if (error instanceof TypeError || 'config' in error) {
    return { kind: 'network', code: networkCode(error) };
  }
  return null;
}

export interface FailureContext {
  operation: string;
  calendarId?: string;
  eventId?: string;
}

function contextOf(failure: Failure, where: FailureContext): Record<string, unknown> {
  const context: Record<string, unknown> = { ...where };
  if (failure.kind === 'http') {
    context.status = failure.status;
    if (failure.reason !== undefined) {
      context.reason = failure.reason;
    }
  }
  return context;
}

function what(where: FailureContext): string {
  if (where.eventId !== undefined) {
    return `Event '${where.eventId}'`;
  }
  if (where.calendarId !== undefined) {
    return `Calendar '${where.calendarId}'`;
  }
  return 'The resource';
}

/** Calls that change something: without a write scope Google answers them insufficientPermissions. */
const WRITE_OPERATIONS = new Set([
  'events.insert',
  'events.patch',
  'events.delete',
  'events.quickAdd',
  'calendars.insert',
  'calendarList.insert',
]);

/**
 * What a write through a read-only connection answers: the account (when known) and the fix.
 * The provider adds the account's email, which the failure itself does not carry.
 */
export function readOnlyMessage(account: string | undefined): string {
  return `Calgate has read-only access to ${account ?? 'this Google account'}; upgrade it on the Accounts page ("Allow writing") to let Calgate change its calendars.`;
}

/** The CalgateError for a failure that retrying will not fix. */
export function permanentError(failure: Failure, where: FailureContext): CalgateError {
  const context = contextOf(failure, where);
  if (failure.kind !== 'http') {
    return new CalgateError(
      'upstream_unavailable',
      `Google Calendar could not be reached: ${describeFailure(failure)}.`,
      {
        retry: true,
        context,
      },
    );
  }
  const { status, reason, message } = failure;
  if (reason === 'invalid_grant') {
    return new CalgateError(
      'needs_reauth',
      "Google no longer accepts this account's authorization (invalid_grant); reconnect this account.",
      { context },
    );
  }
  if (status === 400) {
    return new CalgateError('invalid_argument', `Google rejected the request: ${message}`, { context });
  }
  if (status === 401) {
    return new CalgateError(
      'needs_reauth',
      "Google rejected this account's credentials even after a token refresh; reconnect this account.",
      { context },
    );
  }
  if (status === 403 && isRateLimit(failure)) {
    return new CalgateError('rate_limited', `Google is rate-limiting this account: ${message}`, {
      retry: true,
      context,
    });
  }
  if (status === 403 && (reason === 'quotaExceeded' || reason === 'dailyLimitExceeded')) {
    return new CalgateError('rate_limited', `Google's quota for this account is used up: ${message}`, {
      context,
    });
  }
  if (status === 403 && reason === 'insufficientPermissions' && WRITE_OPERATIONS.has(where.operation)) {
    return new CalgateError('permission_denied', readOnlyMessage(undefined), {
      context: { ...context, readOnlyConnection: true },
    });
  }
  if (status === 403 && reason === 'insufficientPermissions') {
    return new CalgateError(
      'needs_reauth',
      'This Google account did not grant calendar access to Calgate; reconnect this account and allow calendar access.',
      { context },
    );
  }
  if (status === 403) {
    return new CalgateError('permission_denied', `Google refused the operation: ${message}`, { context });
  }
  if (status === 404) {
    return new CalgateError('not_found', `${what(where)} was not found on Google Calendar.`, { context });
  }
  if (status === 409) {
    return new CalgateError(
      'already_exists',
      `${what(where)} already exists on Google Calendar: ${message}`,
      {
        context,
      },
    );
  }
  if (status === 410 && reason === 'fullSyncRequired') {
    return new CalgateError(
      'precondition_failed',
      'Google says the sync token is no longer valid; a full sync is required.',
      { context: { ...context, fullSyncRequired: true } },
    );
  }
  if (status === 410) {
    return new CalgateError('not_found', `${what(where)} has already been deleted on Google Calendar.`, {
      context: { ...context, alreadyDeleted: true },
    });
  }
  if (status === 412) {
    return new CalgateError(
      'precondition_failed',
      `${what(where)} changed on Google Calendar since it was read (ETag mismatch); read it again and retry.`,
      { context },
    );
  }
  if (status === 429) {
    return new CalgateError('rate_limited', `Google is rate-limiting this account: ${message}`, {
      retry: true,
      ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      context,
    });
  }
  if (status >= 500) {
    return new CalgateError(
      'upstream_unavailable',
      `Google Calendar is unavailable (HTTP ${status}: ${message}).`,
      {
        retry: true,
        context,
      },
    );
  }
  return new CalgateError('invalid_argument', `Google rejected the request (HTTP ${status}): ${message}`, {
    context,
  });
}
