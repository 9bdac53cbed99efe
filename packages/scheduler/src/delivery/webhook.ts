import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CalgateError, type ErrorCode } from '@calgate/core';
import { type BackoffOptions, backoff, parseRetryAfter } from './backoff.ts';
import { isValidMessageId, parseWebhookSecret, signWebhook, type WebhookHeaders } from './signing.ts';
import {
  type CheckedTarget,
  checkTargetUrl,
  type HostResolver,
  pinnedLookup,
  TargetPolicyError,
} from './ssrf.ts';

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;
/** A `Retry-After` longer than this is shortened to it, so a receiver cannot park a delivery. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60 * 60_000;
const USER_AGENT = 'Calgate-Webhooks/1';

export interface WebhookDelivery {
  /** The target's id, the only name of the target that errors carry. */
  targetId: string;
  url: string;
  /** The target's `whsec_` secret. */
  secret: string;
  /** `webhook-id`: stable per occurrence, so a retry or a replay carries the same one. */
  messageId: string;
  /** Serialised with `JSON.stringify`; the signature covers exactly the bytes sent. */
  payload: unknown;
  /** 1 for the first try; decides the backoff when the receiver gives no `Retry-After`. */
  attempt?: number;
}

export interface WebhookSenderOptions {
  /** `OUTBOUND_ALLOW_PRIVATE` (alias `TARGETS_ALLOW_PRIVATE`); see `checkTargetUrl`. */
  allowPrivate: boolean;
  requireHttps?: boolean;
  /** Whole exchange, from DNS to the end of the response. Default 15 s. */
  timeoutMs?: number;
  maxRetryAfterMs?: number;
  backoff?: BackoffOptions;
  /** The clock for `webhook-timestamp` and HTTP-date `Retry-After`. */
  now?: () => Date;
  resolve?: HostResolver;
  /** Aborting (e.g. at shutdown) ends the attempt as retryable. */
  signal?: AbortSignal;
}

/**
 * What became of one attempt. `retry` carries the delay to wait; `disable` means the receiver
 * answered 410 Gone and the target should receive nothing more; `blocked` means this process's URL
 * policy refused the target (a process with OUTBOUND_ALLOW_PRIVATE on would send it); `failed` is
 * final for this occurrence.
 */
export type WebhookOutcome =
  | { kind: 'delivered'; status: number; durationMs: number }
  | {
      kind: 'retry';
      status: number | null;
      retryInMs: number;
      /** Whether the delay came from the receiver's `Retry-After`. */
      retryAfterHeader: boolean;
      error: CalgateError;
      durationMs: number;
    }
  | { kind: 'failed'; status: number | null; error: CalgateError; durationMs: number }
  | { kind: 'blocked'; status: null; error: CalgateError; durationMs: number }
  | { kind: 'disable'; status: 410; error: CalgateError; durationMs: number };

type Exchange = { status: number; retryAfter: string | undefined } | { networkCode: string };

/**
 * Sends one signed Standard Webhooks POST and classifies the answer: 2xx delivered; 410 disable;
 * 408, 429, 5xx, network errors and timeouts retry (after `Retry-After` when given, else
 * `backoff(attempt)`); other statuses, including redirects (never followed), fail for good. The
 * URL is checked against the SSRF policy first, and the connection goes to the checked addresses
 * only. Never throws; errors name the target id and status, never the URL or the secret.
 */
export async function sendWebhook(
  delivery: WebhookDelivery,
  options: WebhookSenderOptions,
): Promise<WebhookOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const context = { targetId: delivery.targetId };
  const final = (code: ErrorCode, message: string, status: number | null = null): WebhookOutcome => ({
    kind: 'failed',
    status,
    error: new CalgateError(code, message, {
      context: { ...context, ...(status === null ? {} : { status }) },
    }),
    durationMs: elapsed(),
  });
  const retry = (message: string, status: number | null, header: number | undefined, extra = {}) => {
    const cap = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    const retryInMs =
      header === undefined ? backoff(delivery.attempt ?? 1, options.backoff) : Math.min(header, cap);
    const error = new CalgateError('upstream_unavailable', message, {
      retry: true,
      retryAfterMs: retryInMs,
      context: { ...context, ...(status === null ? {} : { status }), ...extra },
    });
    return {
      kind: 'retry',
      status,
      retryInMs,
      retryAfterHeader: header !== undefined,
      error,
      durationMs: elapsed(),
    } as const;
  };

  const key = parseWebhookSecret(delivery.secret);
  if (!key.ok) {
    return final(
      'precondition_failed',
      `webhook target ${delivery.targetId} has an unusable secret: ${key.error.message}`,
    );
  }
  if (!isValidMessageId(delivery.messageId)) {
    return final('invalid_argument', 'webhook-id must be 1–256 printable ASCII characters without spaces');
  }
  const body = JSON.stringify(delivery.payload);
  if (body === undefined) {
    return final('invalid_argument', 'webhook payload is not JSON-serialisable');
  }

  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;

  const checked = await race(
    checkTargetUrl(delivery.url, {
      allowPrivate: options.allowPrivate,
      ...(options.requireHttps === undefined ? {} : { requireHttps: options.requireHttps }),
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
    }),
    signal,
    () => null,
  );
  if (checked === null) {
    const code = abortCode(signal);
    return retry(describeNetwork(code, timeoutMs, delivery.targetId), null, undefined, { networkCode: code });
  }
  if (!checked.ok) {
    const cause = checked.error;
    const message = `webhook target ${delivery.targetId} refused: ${cause.message}`;
    if (cause instanceof TargetPolicyError) {
      const error = new TargetPolicyError(cause.code, message, { context: { ...context, ...cause.context } });
      return { kind: 'blocked', status: null, error, durationMs: elapsed() };
    }
    return cause.retry ? retry(message, null, undefined) : final(cause.code, message);
  }

  const now = options.now?.() ?? new Date();
  const headers = signWebhook(key.value, { id: delivery.messageId, timestamp: now, body });
  const result = await exchange(checked.value, body, headers, signal);

  if ('networkCode' in result) {
    return retry(describeNetwork(result.networkCode, timeoutMs, delivery.targetId), null, undefined, {
      networkCode: result.networkCode,
    });
  }
  const { status } = result;
  if (status >= 200 && status < 300) {
    return { kind: 'delivered', status, durationMs: elapsed() };
  }
  const answered = `webhook target ${delivery.targetId} answered ${status}`;
  if (status === 410) {
    return {
      kind: 'disable',
      status,
      error: new CalgateError('not_found', `${answered} Gone; the target should be disabled`, {
        context: { ...context, status },
      }),
      durationMs: elapsed(),
    };
  }
  if (status >= 500 || status === 408 || status === 429) {
    const header = parseRetryAfter(result.retryAfter, (options.now?.() ?? new Date()).getTime());
    return retry(answered, status, header);
  }
  if (status >= 300 && status < 400) {
    return final('precondition_failed', `${answered} (a redirect, which is not followed)`, status);
  }
  return final(codeFor(status), answered, status);
}

function describeNetwork(code: string, timeoutMs: number, targetId: string): string {
  if (code === 'TIMEOUT') {
    return `webhook target ${targetId} did not answer within ${timeoutMs} ms`;
  }
  if (code === 'ABORTED') {
    return `delivery to webhook target ${targetId} was aborted`;
  }
  return `webhook target ${targetId} could not be reached (${code})`;
}

function codeFor(status: number): ErrorCode {
  switch (status) {
    case 401:
    case 403:
      return 'permission_denied';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    default:
      return 'precondition_failed';
  }
}

/** Settles when `work` does or when `signal` aborts, whichever comes first. */
function race<T, A>(work: Promise<T>, signal: AbortSignal, aborted: () => A): Promise<T | A> {
  if (signal.aborted) {
    return Promise.resolve(aborted());
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortCode(signal: AbortSignal): 'TIMEOUT' | 'ABORTED' {
  const reason: unknown = signal.reason;
  return reason instanceof DOMException && reason.name === 'TimeoutError' ? 'TIMEOUT' : 'ABORTED';
}

/** One POST to the vetted addresses. Settles on the response's status line; the body is ignored. */
function exchange(
  target: CheckedTarget,
  body: string,
  signed: WebhookHeaders,
  signal: AbortSignal,
): Promise<Exchange> {
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(target.url, {
      method: 'POST',
      agent: false,
      lookup: pinnedLookup(target.addresses),
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': USER_AGENT,
        ...signed,
      },
    });
    let settled = false;
    const settle = (value: Exchange) => {
      if (!settled) {
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      }
      req.destroy();
    };
    const onAbort = () => settle({ networkCode: abortCode(signal) });
    req.on('response', (res: IncomingMessage) => {
      const header = res.headers['retry-after'];
      settle({ status: res.statusCode ?? 0, retryAfter: Array.isArray(header) ? header[0] : header });
      res.destroy();
    });
    req.on('error', (error: NodeJS.ErrnoException) => settle({ networkCode: error.code ?? 'ERROR' }));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}
