/**
 * Google's error shapes. Calendar API v3 answers `{error:{code,message,errors:[{domain,reason,
 * message}]}}`; the OAuth endpoints answer `{error, error_description}`. Handlers throw these
 * and the server maps them to a response in one place.
 */

export interface ErrorItem {
  domain: string;
  reason: string;
  message: string;
  location?: string;
  locationType?: string;
}

export interface ApiErrorOptions {
  domain?: string;
  location?: string;
  locationType?: string;
  /** Google's canonical status string, sent by the auth layer (`UNAUTHENTICATED`, …). */
  status?: string;
  headers?: Record<string, string>;
}

export class GoogleApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly domain: string;
  readonly options: ApiErrorOptions;

  constructor(code: number, reason: string, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'GoogleApiError';
    this.code = code;
    this.reason = reason;
    this.domain = options.domain ?? 'global';
    this.options = options;
  }

  toBody(): { error: Record<string, unknown> } {
    const item: ErrorItem = { domain: this.domain, reason: this.reason, message: this.message };
    if (this.options.location !== undefined) {
      item.location = this.options.location;
    }
    if (this.options.locationType !== undefined) {
      item.locationType = this.options.locationType;
    }
    const error: Record<string, unknown> = { errors: [item], code: this.code, message: this.message };
    if (this.options.status !== undefined) {
      error.status = this.options.status;
    }
    return { error };
  }
}

/** The errors Google Calendar documents, with its reasons and messages. */
export const apiErrors = {
  invalid: (message = 'Invalid Value', location?: string) =>
    new GoogleApiError(400, 'invalid', message, location ? { location, locationType: 'parameter' } : {}),
  required: (message = 'Required', location?: string) =>
    new GoogleApiError(400, 'required', message, location ? { location, locationType: 'parameter' } : {}),
  badRequest: (reason: string, message: string, domain = 'global') =>
    new GoogleApiError(400, reason, message, { domain }),
  timeRangeEmpty: () =>
    new GoogleApiError(400, 'timeRangeEmpty', 'The specified time range is empty.', { domain: 'calendar' }),
  loginRequired: () =>
    new GoogleApiError(401, 'required', 'Login Required.', {
      location: 'Authorization',
      locationType: 'header',
      status: 'UNAUTHENTICATED',
      headers: { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' },
    }),
  invalidCredentials: () =>
    new GoogleApiError(401, 'authError', 'Invalid Credentials', {
      location: 'Authorization',
      locationType: 'header',
      status: 'UNAUTHENTICATED',
      headers: { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
    }),
  insufficientScopes: () =>
    new GoogleApiError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', {
      status: 'PERMISSION_DENIED',
      headers: {
        'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="insufficient_scope"',
      },
    }),
  forbidden: (message = 'Forbidden') => new GoogleApiError(403, 'forbidden', message),
  requiredAccessLevel: (level: 'reader' | 'writer' | 'owner') =>
    new GoogleApiError(403, 'requiredAccessLevel', `You need to have ${level} access to this calendar.`, {
      domain: 'calendar',
    }),
  forbiddenForNonOrganizer: () =>
    new GoogleApiError(
      403,
      'forbiddenForNonOrganizer',
      'The operation can only be performed by the organizer of the event.',
      { domain: 'calendar' },
    ),
  forbiddenForServiceAccounts: () =>
    new GoogleApiError(
      403,
      'forbiddenForServiceAccounts',
      'Service accounts cannot invite attendees without Domain-Wide Delegation of Authority.',
      { domain: 'calendar' },
    ),
  rateLimitExceeded: (code: 403 | 429 = 403) =>
    new GoogleApiError(code, 'rateLimitExceeded', 'Rate Limit Exceeded', { domain: 'usageLimits' }),
  notFound: () => new GoogleApiError(404, 'notFound', 'Not Found'),
  duplicate: () => new GoogleApiError(409, 'duplicate', 'The requested identifier already exists.'),
  deleted: () => new GoogleApiError(410, 'deleted', 'Resource has been deleted'),
  fullSyncRequired: () =>
    new GoogleApiError(410, 'fullSyncRequired', 'Sync token is no longer valid, a full sync is required.'),
  conditionNotMet: () =>
    new GoogleApiError(412, 'conditionNotMet', 'Precondition Failed', {
      location: 'If-Match',
      locationType: 'header',
    }),
  backendError: (code = 503) => new GoogleApiError(code, 'backendError', 'Backend Error'),
};

/** Default reason and domain for a status injected by a fault rule. */
export function errorForStatus(code: number, reason?: string, message?: string): GoogleApiError {
  const defaults: Record<number, [string, string, string]> = {
    400: ['invalid', 'global', 'Invalid Value'],
    401: ['authError', 'global', 'Invalid Credentials'],
    403: ['rateLimitExceeded', 'usageLimits', 'Rate Limit Exceeded'],
    404: ['notFound', 'global', 'Not Found'],
    409: ['duplicate', 'global', 'The requested identifier already exists.'],
    410: ['deleted', 'global', 'Resource has been deleted'],
    412: ['conditionNotMet', 'global', 'Precondition Failed'],
    429: ['rateLimitExceeded', 'usageLimits', 'Rate Limit Exceeded'],
    500: ['backendError', 'global', 'Backend Error'],
  };
  const [defReason, domain, defMessage] = defaults[code] ?? ['backendError', 'global', 'Backend Error'];
  const usage =
    reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded' || reason === 'quotaExceeded';
  return new GoogleApiError(code, reason ?? defReason, message ?? defMessage, {
    domain: reason === undefined ? domain : usage ? 'usageLimits' : 'global',
  });
}

/** An OAuth 2.0 error (RFC 6749 §5.2) as Google's token and revoke endpoints send it. */
export class OAuthError extends Error {
  readonly status: number;
  readonly error: string;

  constructor(status: number, error: string, description: string) {
    super(description);
    this.name = 'OAuthError';
    this.status = status;
    this.error = error;
  }

  toBody(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}
