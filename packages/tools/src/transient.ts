import { CalgateError } from '@calgate/core';

/**
 * Which failures mean the database or the cache is briefly away (a restart, a failover, a dropped
 * connection) rather than a fault of Calgate or of the request. Errors are classified by shape
 * (code strings, Prisma codes, driver-adapter kinds, and the few messages pg and ioredis raise
 * without a code), so this package needs neither pg nor ioredis.
 */

/** Node socket errors on a connection that was refused, reset or timed out. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs: class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now, 53300 too_many_connections.
 */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;

/**
 * Prisma: P1001 cannot reach the server, P1002 timed out reaching it, P1008 operation timed out,
 * P1017 server closed the connection, P2024 no pool connection in time, P2037 too many connections.
 */
const PRISMA_CODES: ReadonlySet<string> = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);

/** Kinds of @prisma/driver-adapter-utils errors that are about the connection. */
const ADAPTER_KINDS: ReadonlySet<string> = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

/** What pg, pg-pool and ioredis say without a code (Prisma quotes them inside its own message). */
const MESSAGES: readonly RegExp[] = [
  /Connection terminated (unexpectedly|due to connection timeout)/,
  /timeout exceeded when trying to connect/,
  /Client has encountered a connection error and is not queryable/,
  /Connection is closed\./,
  /Stream isn't writeable and enableOfflineQueue options is false/,
  /Reached the max retries per request limit/,
];

interface ErrorShape {
  code?: unknown;
  kind?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  meta?: { driverAdapterError?: unknown };
}

/**
 * Whether `error` is a connection-level failure of Postgres or Redis, looking through causes,
 * Prisma's driver-adapter error and AggregateError members. A CalgateError never is: it already
 * says what happened.
 */
export function isTransient(error: unknown): boolean {
  return inspect(error, 0);
}

function inspect(error: unknown, depth: number): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null || error instanceof CalgateError) {
    return false;
  }
  const { code, kind, message, cause, errors, meta } = error as ErrorShape;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATE.test(code) || PRISMA_CODES.has(code))) {
    return true;
  }
  if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) {
    return true;
  }
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message))) {
    return true;
  }
  const inner = [cause, meta?.driverAdapterError, ...(Array.isArray(errors) ? errors : [])];
  return inner.some((candidate) => inspect(candidate, depth + 1));
}

/** How long a read waits before its one transparent retry. */
export const RETRY_DELAY_MS = 300;

/** What a caller is told when a call failed on a transient error (after its retry, for reads). */
export function briefOutage(tool: string, requestId: string, cause: unknown): CalgateError {
  return new CalgateError(
    'unavailable',
    `Calgate is briefly unavailable (its database or cache did not answer) and could not complete ${tool}; try again in a few seconds (request ${requestId}).`,
    { retry: true, retryAfterMs: 2_000, cause },
  );
}

/** `thrown` as the 'unavailable' CalgateError when it is transient, else unchanged. */
export function asUnavailable(thrown: unknown, tool: string, requestId: string): unknown {
  return isTransient(thrown) ? briefOutage(tool, requestId, thrown) : thrown;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs `fn`; when it fails on a transient error, waits `delayMs` and runs it once more. Only for
 * work that is safe to repeat (read-only tools). An aborted call is not retried.
 */
export async function retryOnce<T>(
  fn: () => Promise<T>,
  options: { delayMs?: number; signal?: AbortSignal; onRetry?: () => void } = {},
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!isTransient(error) || options.signal?.aborted) {
      throw error;
    }
    options.onRetry?.();
    await pause(options.delayMs ?? RETRY_DELAY_MS, options.signal);
    if (options.signal?.aborted) {
      throw error;
    }
    return fn();
  }
}
