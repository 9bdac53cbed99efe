/**
 * What went wrong talking to Microsoft Graph or the identity platform, read once from the
 * answer, and mapped to a CalgateError for failures that retrying will not fix. Graph's error
 * body is `{error: {code, message}}`, the token endpoint's `{error, error_description}`. Tokens
 * never enter messages or context: only statuses, codes and Microsoft's texts.
 */
import { CalgateError } from '@calgate/core';
import { type Failure, parseRetryAfter } from '../google/failure.ts';

export {
  type Failure,
  formatSeconds,
  networkCode,
  parseRetryAfter,
  UpstreamFailure,
} from '../google/failure.ts';

/** Reads Graph's `{error: {code, message}}` and the token endpoint's `{error, error_description}`. */
export function graphFailure(
  status: number,
  data: unknown,
  retryAfter: string | null | undefined,
  now: number,
): Failure {
  let reason: string | undefined;
  let message = `HTTP ${status}`;
  if (data !== null && typeof data === 'object') {
    const body = data as Record<string, unknown>;
    if (typeof body.error === 'string') {
      reason = body.error;
      const description = typeof body.error_description === 'string' ? body.error_description : body.error;
      // AADSTS texts end with trace and correlation ids: keep the first line.
      message = description.split(/\r?\n/)[0] ?? description;
    } else if (body.error !== null && typeof body.error === 'object') {
      const error = body.error as { code?: unknown; message?: unknown };
      if (typeof error.code === 'string') {
        reason = error.code;
      }
      if (typeof error.message === 'string' && error.message !== '') {
        message = error.message;
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

/** Throttling and transient faults: 429, 503, other 5xx, 408, and no answer at all. */
export function isRetryable(failure: Failure): boolean {
  if (failure.kind !== 'http') {
    return true;
  }
  return failure.status === 429 || failure.status === 408 || failure.status >= 500;
}

export interface GraphFailureContext {
  operation: string;
  calendarId?: string;
  eventId?: string;
}

function what(where: GraphFailureContext): string {
  if (where.eventId !== undefined) {
    return `Event '${where.eventId}'`;
  }
  if (where.calendarId !== undefined) {
    return `Calendar '${where.calendarId}'`;
  }
  return 'The resource';
}

function contextOf(failure: Failure, where: GraphFailureContext): Record<string, unknown> {
  const context: Record<string, unknown> = { ...where };
  if (failure.kind === 'http') {
    context.status = failure.status;
    if (failure.reason !== undefined) {
      context.reason = failure.reason;
    }
  }
  return context;
}

/** Calls that change something: a read-only connection (Calendars.Read) is refused them with 403. */
const WRITE_OPERATIONS = new Set([
  'events.insert',
  'events.patch',
  'events.delete',
  'events.respond',
  'events.cancel',
  'calendars.insert',
]);

/** Token-endpoint answers that mean the person must sign in again. */
const REAUTH_CODES = new Set(['invalid_grant', 'interaction_required', 'consent_required', 'login_required']);

/** Delta answers that mean the token is no longer good: start over. */
const RESYNC_CODES = new Set(['SyncStateNotFound', 'SyncStateInvalid', 'resyncRequired', 'ResyncRequired']);

/** The CalgateError for a Graph failure that retrying will not fix (or that ran out of retries). */
export function permanentGraphError(failure: Failure, where: GraphFailureContext): CalgateError {
  const context = contextOf(failure, where);
  if (failure.kind !== 'http') {
    return new CalgateError(
      'upstream_unavailable',
      `Microsoft Graph could not be reached: ${failure.kind === 'network' ? `no answer (${failure.code})` : `no answer within ${failure.afterMs} ms`}.`,
      { retry: true, context },
    );
  }
  const { status, reason, message } = failure;
  if (reason !== undefined && REAUTH_CODES.has(reason)) {
    return new CalgateError(
      'needs_reauth',
      `Microsoft no longer accepts this account's authorization (${reason}); reconnect this account.`,
      { context },
    );
  }
  if (reason === 'invalid_client' || reason === 'unauthorized_client') {
    return new CalgateError(
      'unavailable',
      `Microsoft rejected Calgate's app registration (${reason}); check MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET and MICROSOFT_TENANT.`,
      { context },
    );
  }
  if (status === 401) {
    return new CalgateError(
      'needs_reauth',
      "Microsoft Graph rejected this account's credentials even after a token refresh; reconnect this account.",
      { context },
    );
  }
  if (status === 400) {
    return new CalgateError('invalid_argument', `Microsoft Graph rejected the request: ${message}`, {
      context,
    });
  }
  if (status === 403 && WRITE_OPERATIONS.has(where.operation)) {
    return new CalgateError(
      'permission_denied',
      `Microsoft refused the change (${message}); if this account was connected read-only, allow writing on the Accounts page.`,
      { context: { ...context, readOnlyConnection: true } },
    );
  }
  if (status === 403) {
    return new CalgateError('permission_denied', `Microsoft Graph refused the operation: ${message}`, {
      context,
    });
  }
  if (status === 404) {
    return new CalgateError('not_found', `${what(where)} was not found in Microsoft 365.`, { context });
  }
  if (status === 409 && reason === 'ErrorIrresolvableConflict') {
    return new CalgateError(
      'precondition_failed',
      `${what(where)} changed in Microsoft 365 while it was being written; read it again and retry.`,
      { context },
    );
  }
  if (status === 409) {
    return new CalgateError('conflict', `Microsoft Graph reports a conflict: ${message}`, { context });
  }
  if (status === 410 || (reason !== undefined && RESYNC_CODES.has(reason))) {
    return new CalgateError(
      'precondition_failed',
      'Microsoft Graph no longer knows this delta token; a full sync is required.',
      { context: { ...context, fullSyncRequired: true } },
    );
  }
  if (status === 412) {
    return new CalgateError(
      'precondition_failed',
      `${what(where)} changed in Microsoft 365 since it was read (ETag mismatch); read it again and retry.`,
      { context },
    );
  }
  if (status === 429) {
    return new CalgateError('rate_limited', `Microsoft Graph is throttling this mailbox: ${message}`, {
      retry: true,
      ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      context,
    });
  }
  if (status >= 500) {
    return new CalgateError(
      'upstream_unavailable',
      `Microsoft Graph is unavailable (HTTP ${status}: ${message}).`,
      {
        retry: true,
        ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
        context,
      },
    );
  }
  return new CalgateError(
    'invalid_argument',
    `Microsoft Graph rejected the request (HTTP ${status}): ${message}`,
    {
      context,
    },
  );
}
