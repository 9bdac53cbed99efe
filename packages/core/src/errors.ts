/**
 * Typed errors shared by every layer. Each transport maps `code` to its own shape exactly once
 * (HTTP status in the gateway, an `isError` tool result in the MCP wrapper).
 */
export type ErrorCode =
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'conflict'
  | 'precondition_failed'
  | 'rate_limited'
  | 'needs_reauth'
  | 'upstream_unavailable'
  | 'unavailable'
  | 'internal';

export interface ErrorOptions {
  /** Whether repeating the same call later may succeed. */
  retry?: boolean;
  /** Milliseconds after which a retry makes sense, when known. */
  retryAfterMs?: number;
  /** Safe, secret-free facts for logs and callers. */
  context?: Record<string, unknown>;
  cause?: unknown;
}

export class CalgateError extends Error {
  readonly code: ErrorCode;
  readonly retry: boolean;
  readonly retryAfterMs: number | undefined;
  readonly context: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CalgateError';
    this.code = code;
    this.retry = options.retry ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.context = options.context ?? {};
  }
}

export const invalidArgument = (message: string, context?: Record<string, unknown>) =>
  new CalgateError('invalid_argument', message, context ? { context } : {});

export const notFound = (message: string, context?: Record<string, unknown>) =>
  new CalgateError('not_found', message, context ? { context } : {});

export const permissionDenied = (message: string, context?: Record<string, unknown>) =>
  new CalgateError('permission_denied', message, context ? { context } : {});

export function isCalgateError(value: unknown): value is CalgateError {
  return value instanceof CalgateError;
}
