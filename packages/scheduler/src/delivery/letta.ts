import { CalgateError, err, ok, type Result } from '@calgate/core';
import type Letta from '@letta-ai/letta-client';
import { backoff } from './backoff.ts';
import {
  abortCode,
  classifyLettaError,
  type LettaErrorClasses,
  type LettaFailure,
  lettaNetworkMessage,
  type Redactor,
} from './letta-errors.ts';
import { pinnedFetch } from './pinned-fetch.ts';
import { isValidMessageId } from './signing.ts';
import { checkTargetUrl, TargetPolicyError } from './ssrf.ts';
import { DEFAULT_MAX_RETRY_AFTER_MS, type WebhookOutcome, type WebhookSenderOptions } from './webhook.ts';

export const DEFAULT_LETTA_TIMEOUT_MS = 15_000;

/** The official client, loaded on the first Letta call: a gateway that never calls Letta does without its 70-odd modules. */
let sdkLoading: Promise<typeof import('@letta-ai/letta-client')> | undefined;
function lettaSdk(): Promise<typeof import('@letta-ai/letta-client')> {
  sdkLoading ??= import('@letta-ai/letta-client');
  return sdkLoading;
}
/** `listLettaAgents` stops here: enough to pick from, bounded for a tenant with a huge server. */
export const LETTA_AGENT_LIST_CAP = 1_000;
const LIST_PAGE_SIZE = 100;
const AGENT_ID_MAX = 200;

/** A Letta server and the key Calgate calls it with. */
export interface LettaTarget {
  /** The target's id, the only name of the target that errors carry. */
  targetId: string;
  /** The server's base URL (`https://api.letta.com`, `http://letta.internal:8283`); a trailing `/v1` is tolerated. */
  baseUrl: string;
  apiKey: string;
}

export interface LettaDelivery extends LettaTarget {
  agentId: string;
  prompt: string;
  /**
   * Stable per occurrence (like a webhook's `webhook-id`): sent as the message's `otid`, Letta's
   * offline threading id, which it documents for recognising a retried request.
   */
  messageId?: string;
}

export interface LettaSenderOptions extends WebhookSenderOptions {
  /** 1 for the first try; decides the backoff when Letta gives no `Retry-After`. */
  attempt?: number;
}

export type LettaListOptions = Pick<
  WebhookSenderOptions,
  'allowPrivate' | 'requireHttps' | 'timeoutMs' | 'resolve' | 'signal'
>;

export interface LettaAgentSummary {
  id: string;
  name: string;
}

/**
 * Sends a due prompt to a Letta agent as one user message, through the official client:
 * `POST {base}/v1/agents/{agentId}/messages` with `Authorization: Bearer <apiKey>`.
 *
 * The base URL is checked against the SSRF policy and the client connects only to the checked
 * addresses. The client's own retries are off: retrying is the scheduler's job, so the answer is
 * classified like a webhook's — 2xx delivered; 408, 409 (the agent is busy, which the official
 * client itself retries), 429, 5xx, network errors and timeouts retry (after `Retry-After`, capped,
 * else `backoff(attempt)`); 410 disables the target; 401/403, 404 and other statuses fail.
 * Never throws; errors name the target and agent ids, never the API key or the URL's path.
 */
export async function sendLettaMessage(
  delivery: LettaDelivery,
  options: LettaSenderOptions,
): Promise<WebhookOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const { targetId, agentId } = delivery;
  const timeoutMs = timeoutOf(options);
  const outcome = (failure: LettaFailure): WebhookOutcome =>
    toOutcome(failure, { targetId, agentId }, options, elapsed());

  const invalid = invalidDelivery(delivery);
  if (invalid !== undefined) {
    return outcome({ kind: 'failed', status: null, code: 'invalid_argument', message: invalid });
  }
  const signal = deadline(timeoutMs, options.signal);
  const connected = await connect(delivery, options, timeoutMs, signal);
  if (!connected.ok) {
    return outcome(connected.error);
  }
  const { client, redact, sdk } = connected.value;
  const message = {
    role: 'user' as const,
    content: [{ type: 'text' as const, text: delivery.prompt }],
    ...(delivery.messageId === undefined ? {} : { otid: delivery.messageId }),
  };
  try {
    const response = await client.agents.messages
      .create(agentId, { messages: [message] }, { signal })
      .asResponse();
    // The agent has the message once Letta answers 2xx; its reply is not needed.
    await response.body?.cancel().catch(() => {});
    return { kind: 'delivered', status: response.status, durationMs: elapsed() };
  } catch (error) {
    return outcome(
      classifyLettaError(error, {
        sdk,
        targetId,
        agentId,
        timeoutMs,
        signal,
        redact,
        now: options.now ?? (() => new Date()),
      }),
    );
  }
}

/**
 * The agents a Letta target's key can see, `{id, name}`, at most `LETTA_AGENT_LIST_CAP` of them
 * (Letta's default order: newest first). Pages through the official client's list. Returns an
 * error instead of throwing: `permission_denied` when the key is refused, `not_found` when the
 * URL is not a Letta server, `upstream_unavailable` with `retry` for 429/5xx/network/timeouts,
 * and the SSRF refusal as `checkTargetUrl` words it. `timeoutMs` bounds the whole listing.
 */
export async function listLettaAgents(
  target: LettaTarget,
  options: LettaListOptions,
): Promise<Result<LettaAgentSummary[], CalgateError>> {
  const { targetId } = target;
  const timeoutMs = timeoutOf(options);
  const fail = (failure: LettaFailure) => err(toError(failure, { targetId }, DEFAULT_MAX_RETRY_AFTER_MS));
  if (target.apiKey.trim() === '') {
    return fail({
      kind: 'failed',
      status: null,
      code: 'precondition_failed',
      message: `Letta target ${targetId} has no API key`,
    });
  }
  const signal = deadline(timeoutMs, options.signal);
  const connected = await connect(target, options, timeoutMs, signal);
  if (!connected.ok) {
    return fail(connected.error);
  }
  const { client, redact, sdk } = connected.value;
  const agents: LettaAgentSummary[] = [];
  try {
    let page = await client.agents.list({ limit: LIST_PAGE_SIZE }, { signal });
    for (;;) {
      for (const agent of page.items.slice(0, LETTA_AGENT_LIST_CAP - agents.length)) {
        agents.push({ id: agent.id, name: agent.name });
      }
      // A short page is the last one: no need to ask for an empty page after it.
      if (
        agents.length >= LETTA_AGENT_LIST_CAP ||
        page.items.length < LIST_PAGE_SIZE ||
        !page.hasNextPage()
      ) {
        break;
      }
      page = await page.getNextPage();
    }
  } catch (error) {
    return fail(
      classifyLettaError(error, { sdk, targetId, timeoutMs, signal, redact, now: () => new Date() }),
    );
  }
  return ok(agents);
}

/**
 * The base URL a Letta client takes: origin and path, without a trailing `/` or `/v1` (the client
 * adds `/v1/…` itself) and without query or fragment.
 */
export function lettaBaseUrl(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/i, '');
  return `${url.origin}${path}`;
}

function invalidDelivery(delivery: LettaDelivery): string | undefined {
  const { targetId, agentId } = delivery;
  if (delivery.apiKey.trim() === '') {
    return `Letta target ${targetId} has no API key`;
  }
  if (
    agentId === '' ||
    agentId.length > AGENT_ID_MAX ||
    /[\s\p{Cc}]/u.test(agentId) ||
    /^\.{1,2}$/.test(agentId)
  ) {
    return `Letta target ${targetId}: the agent id is not a usable Letta agent id`;
  }
  if (delivery.messageId !== undefined && !isValidMessageId(delivery.messageId)) {
    return 'the message id must be 1–256 printable ASCII characters without spaces';
  }
  return undefined;
}

/** A positive whole number of milliseconds, whatever the caller passed. */
function timeoutOf(options: { timeoutMs?: number | undefined }): number {
  const ms = options.timeoutMs;
  return ms !== undefined && Number.isFinite(ms) && ms >= 1 ? Math.round(ms) : DEFAULT_LETTA_TIMEOUT_MS;
}

function deadline(timeoutMs: number, outer: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return outer ? AbortSignal.any([timeout, outer]) : timeout;
}

/** Checks the URL (SSRF policy) and builds a client pinned to the checked addresses. */
async function connect(
  target: LettaTarget,
  options: LettaListOptions,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Result<{ client: Letta; redact: Redactor; sdk: LettaErrorClasses }, LettaFailure>> {
  const { targetId } = target;
  const checked = await untilAborted(
    checkTargetUrl(target.baseUrl, {
      allowPrivate: options.allowPrivate,
      ...(options.requireHttps === undefined ? {} : { requireHttps: options.requireHttps }),
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
    }),
    signal,
  );
  if (checked === undefined) {
    return err(networkFailure(signal, timeoutMs, targetId));
  }
  if (!checked.ok) {
    const cause = checked.error;
    const message = `Letta target ${targetId} refused: ${cause.message}`;
    return err(
      cause instanceof TargetPolicyError
        ? { kind: 'blocked', status: null, code: cause.code, message }
        : cause.retry
          ? { kind: 'retry', status: null, retryAfterMs: undefined, message, context: {} }
          : { kind: 'failed', status: null, code: cause.code, message },
    );
  }
  const { url } = checked.value;
  const sdk = await lettaSdk();
  const client = new sdk.default({
    baseURL: lettaBaseUrl(url),
    apiKey: target.apiKey,
    maxRetries: 0,
    timeout: timeoutMs,
    fetch: pinnedFetch(checked.value),
    logLevel: 'off',
  });
  return ok({ client, redact: redactor(target.apiKey, url), sdk });
}

function networkFailure(signal: AbortSignal, timeoutMs: number, targetId: string): LettaFailure {
  const code = abortCode(signal);
  return {
    kind: 'retry',
    status: null,
    retryAfterMs: undefined,
    message: lettaNetworkMessage(code, timeoutMs, targetId),
    context: { networkCode: code },
  };
}

/** Strips the API key and the URL's path and query out of text a server sent back. */
function redactor(apiKey: string, url: URL): Redactor {
  const secrets = [apiKey.trim(), url.search, url.pathname.length > 1 ? url.pathname : ''].filter(
    (s) => s.length >= 2,
  );
  return (text) => secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
}

/** Settles with `work`, or `undefined` once `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
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

function toError(
  failure: LettaFailure,
  context: Record<string, unknown>,
  maxRetryAfterMs: number,
  attempt = 1,
  backoffOptions?: LettaSenderOptions['backoff'],
): CalgateError {
  const status = failure.status === null ? {} : { status: failure.status };
  switch (failure.kind) {
    case 'retry': {
      const retryAfterMs =
        failure.retryAfterMs === undefined
          ? backoff(attempt, backoffOptions)
          : Math.min(failure.retryAfterMs, maxRetryAfterMs);
      return new CalgateError('upstream_unavailable', failure.message, {
        retry: true,
        retryAfterMs,
        context: { ...context, ...status, ...failure.context },
      });
    }
    case 'disable':
      return new CalgateError('not_found', failure.message, { context: { ...context, ...status } });
    case 'failed':
      return new CalgateError(failure.code, failure.message, { context: { ...context, ...status } });
    case 'blocked':
      return new TargetPolicyError(failure.code, failure.message, { context });
  }
}

function toOutcome(
  failure: LettaFailure,
  context: Record<string, unknown>,
  options: LettaSenderOptions,
  durationMs: number,
): WebhookOutcome {
  const error = toError(
    failure,
    context,
    options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
    options.attempt ?? 1,
    options.backoff,
  );
  switch (failure.kind) {
    case 'retry':
      return {
        kind: 'retry',
        status: failure.status,
        retryInMs: error.retryAfterMs ?? 0,
        retryAfterHeader: failure.retryAfterMs !== undefined,
        error,
        durationMs,
      };
    case 'disable':
      return { kind: 'disable', status: 410, error, durationMs };
    case 'failed':
      return { kind: 'failed', status: failure.status, error, durationMs };
    case 'blocked':
      return { kind: 'blocked', status: null, error, durationMs };
  }
}
