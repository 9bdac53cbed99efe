/**
 * Graph's error shapes. Graph answers `{error: {code, message, innerError: {date, request-id,
 * client-request-id}}}`; the identity platform's token endpoint answers OAuth errors with AADSTS
 * codes. Handlers throw these and the pipeline maps them to a response in one place.
 */
import { randomUUID } from 'node:crypto';

export class GraphError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'GraphError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  toBody(now: number, requestId: string = randomUUID()): { error: Record<string, unknown> } {
    return {
      error: {
        code: this.code,
        message: this.message,
        innerError: {
          date: new Date(now).toISOString().slice(0, 19),
          'request-id': requestId,
          'client-request-id': requestId,
        },
      },
    };
  }
}

export const graphErrors = {
  noToken: () =>
    new GraphError(401, 'InvalidAuthenticationToken', 'Access token is empty.', {
      'www-authenticate': 'Bearer realm=""',
    }),
  badToken: () =>
    new GraphError(401, 'InvalidAuthenticationToken', 'IDX14100: JWT is not well formed.', {
      'www-authenticate': 'Bearer realm=""',
    }),
  expiredToken: () =>
    new GraphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.', {
      'www-authenticate': 'Bearer realm="", error="invalid_token"',
    }),
  accessDenied: () =>
    new GraphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.'),
  notFound: () =>
    new GraphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.'),
  malformedId: () => new GraphError(400, 'ErrorInvalidIdMalformed', 'Id is malformed.'),
  noRoute: (path: string) =>
    new GraphError(400, 'BadRequest', `Resource not found for the segment '${path.split('/').pop() ?? ''}'.`),
  methodNotAllowed: () =>
    new GraphError(405, 'Request_BadRequest', 'Specified HTTP method is not allowed for the request target.'),
  invalidRequest: (message: string) => new GraphError(400, 'ErrorInvalidRequest', message),
  invalidParameter: (message: string) => new GraphError(400, 'ErrorInvalidParameter', message),
  badRequest: (message: string) => new GraphError(400, 'BadRequest', message),
  timeWindowRequired: () =>
    new GraphError(
      400,
      'ErrorInvalidParameter',
      'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.',
    ),
  zoneNotSupported: (zone: string) =>
    new GraphError(
      400,
      'TimeZoneNotSupportedException',
      `A valid TimeZone value must be specified. The following TimeZone value is not supported: '${zone}'.`,
    ),
  unknownProperty: (name: string) =>
    new GraphError(
      400,
      'RequestBroker--ParseUri',
      `Could not find a property named '${name}' on type 'microsoft.graph.event'.`,
    ),
  conflict: () =>
    new GraphError(
      412,
      'ErrorIrresolvableConflict',
      'The send or update operation could not be performed because the change key passed in the request does not match the current change key for the item.',
    ),
  syncStateNotFound: () =>
    new GraphError(
      410,
      'SyncStateNotFound',
      'The sync state generation is not found; a full synchronization is required.',
    ),
  throttled: (message: string, retryAfterSeconds: number) =>
    new GraphError(429, 'ApplicationThrottled', message, { 'retry-after': String(retryAfterSeconds) }),
  bodyRead: () =>
    new GraphError(400, 'RequestBodyRead', 'Invalid JSON. A token was not recognized in the JSON content.'),
  tooLarge: () => new GraphError(413, 'RequestEntityTooLarge', 'The request entity is too large.'),
};

/** The default code and message of a status a fault injects. */
export function errorForStatus(status: number, code?: string, message?: string): GraphError {
  const defaults: Record<number, [string, string]> = {
    400: ['BadRequest', 'Bad request.'],
    401: ['InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.'],
    403: ['ErrorAccessDenied', 'Access is denied. Check credentials and try again.'],
    404: ['ErrorItemNotFound', 'The specified object was not found in the store.'],
    409: ['ErrorIrresolvableConflict', 'Another operation changed the item.'],
    410: ['SyncStateNotFound', 'The sync state generation is not found; a full synchronization is required.'],
    412: ['ErrorIrresolvableConflict', 'The change key does not match the current change key for the item.'],
    429: ['ApplicationThrottled', 'Application is over its MailboxConcurrency limit.'],
    500: ['UnknownError', ''],
    502: ['BadGateway', 'Bad gateway.'],
    503: ['ServiceNotAvailable', 'The service is temporarily unavailable.'],
    504: ['GatewayTimeout', 'The gateway timed out.'],
  };
  const [defCode, defMessage] = defaults[status] ?? ['UnknownError', ''];
  return new GraphError(status, code ?? defCode, message ?? defMessage);
}

/** An OAuth 2.0 error as the Microsoft identity platform sends it (AADSTS code in the description). */
export class IdentityError extends Error {
  readonly status: number;
  readonly error: string;
  readonly aadsts: number;

  constructor(status: number, error: string, aadsts: number, description: string) {
    super(`AADSTS${aadsts}: ${description}`);
    this.name = 'IdentityError';
    this.status = status;
    this.error = error;
    this.aadsts = aadsts;
  }

  toBody(now: number): Record<string, unknown> {
    const id = randomUUID();
    const stamp = `${new Date(now).toISOString().slice(0, 19).replace('T', ' ')}Z`;
    return {
      error: this.error,
      error_description: `${this.message} Trace ID: ${id} Correlation ID: ${id} Timestamp: ${stamp}`,
      error_codes: [this.aadsts],
      timestamp: stamp,
      trace_id: id,
      correlation_id: id,
    };
  }
}

export const identityErrors = {
  unknownClient: (clientId: string) =>
    new IdentityError(
      400,
      'unauthorized_client',
      700016,
      `Application with identifier '${clientId}' was not found in the directory.`,
    ),
  badSecret: (clientId: string) =>
    new IdentityError(
      401,
      'invalid_client',
      7000215,
      `Invalid client secret provided. Client: '${clientId}'.`,
    ),
  missing: (name: string) =>
    new IdentityError(
      400,
      'invalid_request',
      900144,
      `The request body must contain the following parameter: '${name}'.`,
    ),
  grantType: (type: string) =>
    new IdentityError(
      400,
      'unsupported_grant_type',
      70003,
      `The app requested an unsupported grant type '${type}'.`,
    ),
  badCode: () =>
    new IdentityError(
      400,
      'invalid_grant',
      70000,
      "The provided value for the 'code' parameter is not valid.",
    ),
  codeRedeemed: () =>
    new IdentityError(400, 'invalid_grant', 54005, 'OAuth2 Authorization code was already redeemed.'),
  pkce: () =>
    new IdentityError(
      400,
      'invalid_grant',
      50148,
      'The code_verifier does not match the code_challenge supplied in the authorization request for PKCE.',
    ),
  redirectMismatch: () =>
    new IdentityError(
      400,
      'invalid_grant',
      70000,
      'The redirect URI in the token request does not match the one in the authorization request.',
    ),
  refreshInvalid: () =>
    new IdentityError(
      400,
      'invalid_grant',
      70008,
      'The provided authorization code or refresh token has expired due to inactivity or was revoked.',
    ),
  tenant: (tenant: string) =>
    new IdentityError(400, 'invalid_request', 90002, `Tenant '${tenant}' not found.`),
};
