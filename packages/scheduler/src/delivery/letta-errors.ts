import type { ErrorCode } from '@calgate/core';
import type { APIError } from '@letta-ai/letta-client';
import { parseRetryAfter } from './backoff.ts';

/** Removes secrets (the API key, the URL's path and query) from text a server sent back. */
export type Redactor = (text: string) => string;

/** What a failed Letta call means for the caller, before it becomes an outcome or an error. */
export type LettaFailure =
  | {
      kind: 'retry';
      status: number | null;
      /** What `Retry-After` asked for, uncapped; `undefined` means back off. */
      retryAfterMs: number | undefined;
      message: string;
      context: Record<string, unknown>;
    }
  | { kind: 'failed'; status: number | null; code: ErrorCode; message: string }
  /** The URL policy of this process refused the server (OUTBOUND_ALLOW_PRIVATE). */
  | { kind: 'blocked'; status: null; code: ErrorCode; message: string }
  | { kind: 'disable'; status: 410; message: string };

/** The official client's error classes (its module is loaded once a Letta call is made). */
export type LettaErrorClasses = Pick<
  typeof import('@letta-ai/letta-client'),
  'APIConnectionError' | 'APIConnectionTimeoutError' | 'APIError' | 'APIUserAbortError'
>;

export interface LettaErrorContext {
  /** The classes of the client that made the call. */
  sdk: LettaErrorClasses;
  targetId: string;
  /** Set when the call was about one agent (sending a message). */
  agentId?: string;
  timeoutMs: number;
  /** The attempt's own deadline and the caller's abort, merged. */
  signal: AbortSignal;
  redact: Redactor;
  now: () => Date;
}

const DETAIL_MAX = 200;

/**
 * Classifies what the official client threw. With the client's retries off, every answer but a
 * 2xx arrives here as an `APIError` subclass carrying the status and headers; connection
 * failures as `APIConnectionError` (the socket error as `cause`).
 */
export function classifyLettaError(error: unknown, ctx: LettaErrorContext): LettaFailure {
  const { targetId, agentId } = ctx;
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = ctx.sdk;
  const retry = (message: string, status: number | null, retryAfterMs?: number, context = {}) =>
    ({ kind: 'retry', status, retryAfterMs, message, context }) as const;

  if (error instanceof APIUserAbortError || ctx.signal.aborted) {
    const code = abortCode(ctx.signal);
    return retry(lettaNetworkMessage(code, ctx.timeoutMs, targetId), null, undefined, { networkCode: code });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return retry(lettaNetworkMessage('TIMEOUT', ctx.timeoutMs, targetId), null, undefined, {
      networkCode: 'TIMEOUT',
    });
  }
  if (error instanceof APIConnectionError) {
    const code = networkCode(error.cause);
    return retry(lettaNetworkMessage(code, ctx.timeoutMs, targetId), null, undefined, { networkCode: code });
  }
  if (!(error instanceof APIError) || typeof error.status !== 'number') {
    // Not an answer from the server: a malformed body the client could not read, or a request
    // the client refused to build. Either way, trying again later may work.
    const code = networkCode(error);
    return retry(`Letta target ${targetId} gave an answer that could not be read`, null, undefined, {
      networkCode: code,
    });
  }

  const status = error.status;
  const answered = `Letta target ${targetId} answered ${status}`;
  const detail = detailOf(error, ctx.redact);
  const withDetail = detail === undefined ? answered : `${answered}: ${detail}`;
  if (status === 401 || status === 403) {
    return {
      kind: 'failed',
      status,
      code: 'permission_denied',
      message: `${answered}: the target's API key was refused`,
    };
  }
  if (status === 404) {
    const aboutAgent = detail !== undefined && /agent/i.test(detail);
    const message =
      agentId !== undefined && aboutAgent
        ? `Letta agent ${agentId} was not found at target ${targetId}`
        : `${answered} Not Found${agentId === undefined ? '' : ` for agent ${agentId}`}; check that the target's URL is the Letta server's base URL (e.g. https://api.letta.com)`;
    return { kind: 'failed', status, code: 'not_found', message };
  }
  if (status === 410) {
    return { kind: 'disable', status, message: `${answered} Gone; the target should be disabled` };
  }
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    const header = error.headers?.get('retry-after') ?? undefined;
    return retry(withDetail, status, parseRetryAfter(header, ctx.now().getTime()));
  }
  if (status >= 300 && status < 400) {
    return {
      kind: 'failed',
      status,
      code: 'precondition_failed',
      message: `${answered} (a redirect, which is not followed)`,
    };
  }
  return {
    kind: 'failed',
    status,
    code: status === 400 || status === 422 ? 'invalid_argument' : 'precondition_failed',
    message: withDetail,
  };
}

export function lettaNetworkMessage(code: string, timeoutMs: number, targetId: string): string {
  if (code === 'TIMEOUT') {
    return `Letta target ${targetId} did not answer within ${timeoutMs} ms`;
  }
  if (code === 'ABORTED') {
    return `the call to Letta target ${targetId} was aborted`;
  }
  return `Letta target ${targetId} could not be reached (${code})`;
}

export function abortCode(signal: AbortSignal): 'TIMEOUT' | 'ABORTED' {
  const reason: unknown = signal.reason;
  return reason instanceof DOMException && reason.name === 'TimeoutError' ? 'TIMEOUT' : 'ABORTED';
}

/** The socket error's code (ECONNREFUSED, ECONNRESET, …), looking through `cause` chains. */
function networkCode(cause: unknown): string {
  let current = cause;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code)) {
      return code;
    }
    current = current.cause;
  }
  return 'ERROR';
}

/** Letta's (FastAPI's) `detail`, as one short, redacted line. */
function detailOf(error: APIError, redact: Redactor): string | undefined {
  const body: unknown = error.error;
  let text: string | undefined;
  const detail = typeof body === 'object' && body !== null ? (body as { detail?: unknown }).detail : body;
  if (typeof detail === 'string') {
    text = detail;
  } else if (Array.isArray(detail)) {
    text = detail
      .map((issue: unknown) => {
        const { loc, msg } = (issue ?? {}) as { loc?: unknown; msg?: unknown };
        const where = Array.isArray(loc) ? loc.join('.') : '';
        return typeof msg === 'string' ? (where ? `${where}: ${msg}` : msg) : '';
      })
      .filter(Boolean)
      .join('; ');
  }
  if (text === undefined || text.trim() === '') {
    return undefined;
  }
  const line = redact(text.replace(/\s+/g, ' ').trim());
  return line.length > DETAIL_MAX ? `${line.slice(0, DETAIL_MAX - 1)}…` : line;
}
