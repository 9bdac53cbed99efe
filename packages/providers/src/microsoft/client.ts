/**
 * A small Microsoft Graph HTTP client for one mailbox. URLs are built by appending to
 * MICROSOFT_GRAPH_URL, which ends in `/v1.0` (`new URL('/me', base)` would drop it); absolute
 * `@odata.nextLink`/`@odata.deltaLink` URLs are followed as given, with the same Authorization
 * and Prefer headers, and only on Graph's own origin. Pages may be shorter than `$top`: only a
 * missing nextLink ends a listing. Every attempt spends one of the mailbox's 10,000 requests per
 * 10 minutes and holds one of its slots (4 in flight); when the requests are spent, the client
 * waits as it would for a Retry-After that short, else ends the call saying when to try again.
 * 429/503 wait Retry-After (bounded by the budget), other 5xx and lost connections back off; a
 * 401 refreshes the token once and tries again.
 */
import { CalgateError } from '@calgate/core';
import { announceRetry } from '../google/retry-listener.ts';
import type { AccessTokenSource } from '../google/token-sources.ts';
import {
  type Failure,
  formatSeconds,
  type GraphFailureContext,
  graphFailure,
  isRetryable,
  networkCode,
  permanentGraphError,
  UpstreamFailure,
} from './failure.ts';
import { MailboxBudgetSpent, type MailboxLimit } from './limiter.ts';

export interface GraphRetryPolicy {
  /** Wall time one call may take, attempts and waits included. */
  budgetMs: number;
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest Retry-After the client waits out; a longer one ends the call as rate_limited. */
  maxRetryAfterMs: number;
}

export const DEFAULT_GRAPH_RETRY: GraphRetryPolicy = Object.freeze({
  budgetMs: 20_000,
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 4000,
  maxRetryAfterMs: 10_000,
});

export interface GraphClientOptions {
  /** MICROSOFT_GRAPH_URL, e.g. `https://graph.microsoft.com/v1.0`. */
  graphUrl: string;
  tokens: AccessTokenSource;
  /** The mailbox's limits, shared by every client of that mailbox (see MailboxLimits). */
  limiter: MailboxLimit;
  retry?: Partial<GraphRetryPolicy>;
  /** Bound on one attempt. */
  requestTimeoutMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export type GraphQuery = Record<string, string | number | boolean | undefined>;

export interface GraphRequest {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** A path under the Graph root (`/me/calendars`), built with `graphPath` when it carries ids. */
  path: string;
  query?: GraphQuery;
  body?: unknown;
  /** `Prefer` preferences (`outlook.timezone="UTC"`, `outlook.body-content-type="text"` …), resent on every page. */
  prefer?: readonly string[];
  /** `If-Match` for a conditional update or delete. */
  ifMatch?: string;
  /** What the call is, for errors and logs: `events.list`, `calendars.get` … */
  operation: string;
  calendarId?: string;
  eventId?: string;
  signal?: AbortSignal;
}

export interface GraphPage<T> {
  value: T[];
  nextLink?: string;
  deltaLink?: string;
}

/** A path with its interpolated ids percent-encoded: graphPath`/me/events/${id}`. */
export function graphPath(strings: TemplateStringsArray, ...ids: (string | number)[]): string {
  return strings.reduce(
    (out, part, i) => out + part + (i < ids.length ? encodeURIComponent(String(ids[i])) : ''),
    '',
  );
}

/** OData query options keep their `$`; values are percent-encoded (`+` in an offset is `%2B`). */
function queryString(query: GraphQuery | undefined): string {
  const parts = Object.entries(query ?? {})
    .filter(([, value]) => value !== undefined)
    .map(
      ([key, value]) =>
        `${encodeURIComponent(key).replace(/^%24/, '$')}=${encodeURIComponent(String(value))}`,
    );
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

const TIMEOUT = Symbol('attempt timeout');
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function abortable(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) {
    return promise;
  }
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Thrown inside an attempt: what Graph answered (or that it did not). */
class AttemptFailure extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super('Graph attempt failed');
    this.failure = failure;
  }
}

export class GraphClient {
  readonly #root: string;
  readonly #origin: string;
  readonly #tokens: AccessTokenSource;
  readonly #limiter: MailboxLimit;
  readonly #policy: GraphRetryPolicy;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;

  constructor(options: GraphClientOptions) {
    this.#root = options.graphUrl.replace(/\/+$/, '');
    this.#origin = new URL(this.#root).origin;
    this.#tokens = options.tokens;
    this.#limiter = options.limiter;
    this.#policy = { ...DEFAULT_GRAPH_RETRY, ...options.retry };
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? realSleep;
    this.#random = options.random ?? Math.random;
  }

  /** The absolute URL of a path under the Graph root, with its query. */
  url(path: string, query?: GraphQuery): string {
    const tail = path.startsWith('/') ? path : `/${path}`;
    return `${this.#root}${tail}${queryString(query)}`;
  }

  /** One request; the parsed answer (undefined for 204 No Content). */
  request<T>(request: GraphRequest): Promise<T> {
    return this.#send<T>(this.url(request.path, request.query), request);
  }

  /** One page of a collection: from the request, or from a nextLink/deltaLink Graph gave earlier. */
  async page<T>(request: GraphRequest, link?: string): Promise<GraphPage<T>> {
    const url = link === undefined ? this.url(request.path, request.query) : this.#ownLink(link, request);
    const data = await this.#send<Record<string, unknown> | undefined>(url, request);
    const page: GraphPage<T> = { value: Array.isArray(data?.value) ? (data.value as T[]) : [] };
    const next = data?.['@odata.nextLink'];
    if (typeof next === 'string' && next !== '') {
      page.nextLink = next;
    }
    const delta = data?.['@odata.deltaLink'];
    if (typeof delta === 'string' && delta !== '') {
      page.deltaLink = delta;
    }
    return page;
  }

  /** Every page of a collection, following nextLink until Graph gives none (short pages included). */
  async *pages<T>(request: GraphRequest): AsyncGenerator<GraphPage<T>> {
    let link: string | undefined;
    for (;;) {
      const page: GraphPage<T> = await this.page<T>(request, link);
      yield page;
      if (page.nextLink === undefined) {
        return;
      }
      link = page.nextLink;
    }
  }

  /** Every item of a collection. */
  async all<T>(request: GraphRequest): Promise<T[]> {
    const items: T[] = [];
    for await (const page of this.pages<T>(request)) {
      items.push(...page.value);
    }
    return items;
  }

  /** A link Graph gave, if it points at Graph: the token is never sent anywhere else. */
  #ownLink(link: string, request: GraphRequest): string {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      throw new CalgateError(
        'upstream_unavailable',
        'Microsoft Graph answered a next link that is not a URL.',
        {
          context: { operation: request.operation },
        },
      );
    }
    if (url.origin !== this.#origin) {
      throw new CalgateError(
        'upstream_unavailable',
        `Microsoft Graph answered a next link to another host (${url.host}); Calgate does not follow it.`,
        { context: { operation: request.operation, host: url.host } },
      );
    }
    return link;
  }

  async #attempt<T>(url: string, request: GraphRequest, token: string, signal: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (request.prefer !== undefined && request.prefer.length > 0) {
      headers.prefer = request.prefer.join(', ');
    }
    if (request.ifMatch !== undefined) {
      headers['if-match'] = request.ifMatch;
    }
    const init: RequestInit = { method: request.method ?? 'GET', headers, signal };
    if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(request.body);
    }
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      if (signal.aborted) {
        throw signal.reason;
      }
      throw new AttemptFailure({ kind: 'network', code: networkCode(error) });
    }
    const text = await response.text();
    let data: unknown;
    try {
      data = text === '' ? undefined : JSON.parse(text);
    } catch {
      data = text;
    }
    if (!response.ok) {
      throw new AttemptFailure(
        graphFailure(response.status, data, response.headers.get('retry-after'), this.#now()),
      );
    }
    return data as T;
  }

  async #send<T>(url: string, request: GraphRequest): Promise<T> {
    const where: GraphFailureContext = {
      operation: request.operation,
      ...(request.calendarId === undefined ? {} : { calendarId: request.calendarId }),
      ...(request.eventId === undefined ? {} : { eventId: request.eventId }),
    };
    const caller = request.signal;
    const policy = this.#policy;
    const started = this.#now();
    let refreshed = false;
    let backoffs = 0;
    for (;;) {
      caller?.throwIfAborted();
      const remaining = policy.budgetMs - (this.#now() - started);
      const timeoutMs = Math.max(1, Math.min(this.#timeoutMs, remaining));
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(TIMEOUT), timeoutMs);
      const onAbort = () => controller.abort(caller?.reason);
      caller?.addEventListener('abort', onAbort, { once: true });
      let failure: Failure;
      let token: string | undefined;
      let spent: MailboxBudgetSpent | undefined;
      try {
        token = await this.#tokens.token(controller.signal);
        const used = token;
        return await this.#limiter.run(
          () => this.#attempt<T>(url, request, used, controller.signal),
          controller.signal,
        );
      } catch (error) {
        if (caller?.aborted) {
          throw caller.reason;
        }
        if (controller.signal.aborted && controller.signal.reason === TIMEOUT) {
          failure = { kind: 'timeout', afterMs: timeoutMs };
        } else if (error instanceof AttemptFailure) {
          failure = error.failure;
        } else if (error instanceof UpstreamFailure) {
          // The token endpoint did not answer, or answered 429/5xx: retried like Graph.
          failure = error.failure;
        } else if (error instanceof MailboxBudgetSpent) {
          spent = error;
          // Never read: a spent budget is answered below, before any failure is.
          failure = { kind: 'http', status: 429, message: error.message };
        } else {
          throw error;
        }
      } finally {
        clearTimeout(timer);
        caller?.removeEventListener('abort', onAbort);
      }
      if (spent !== undefined) {
        // Nothing was sent: wait only as long as a Retry-After the client would wait out.
        const wait = spent.retryAfterMs;
        if (wait > policy.maxRetryAfterMs || this.#now() - started + wait >= policy.budgetMs) {
          throw spent;
        }
        await abortable(this.#sleep(wait), caller);
        continue;
      }
      if (failure.kind === 'http' && failure.status === 401 && !refreshed && token !== undefined) {
        // An expired or revoked access token (InvalidAuthenticationToken): refresh once, at once.
        refreshed = true;
        this.#tokens.invalidate(token);
        continue;
      }
      if (!isRetryable(failure)) {
        throw permanentGraphError(failure, where);
      }
      const elapsed = this.#now() - started;
      backoffs += 1;
      const retryAfter = failure.kind === 'http' ? failure.retryAfterMs : undefined;
      const delay =
        retryAfter !== undefined
          ? retryAfter
          : Math.floor(
              this.#random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (backoffs - 1)),
            );
      const tooLong = retryAfter !== undefined && retryAfter > policy.maxRetryAfterMs;
      if (backoffs >= policy.maxAttempts || tooLong || elapsed + delay >= policy.budgetMs) {
        throw this.#giveUp(
          failure,
          where,
          backoffs,
          elapsed,
          tooLong || elapsed + delay >= policy.budgetMs ? delay : undefined,
        );
      }
      announceRetry({
        operation: where.operation,
        ...(where.calendarId === undefined ? {} : { calendarId: where.calendarId }),
        failure:
          failure.kind === 'http'
            ? {
                kind: 'http',
                status: failure.status,
                ...(failure.reason === undefined ? {} : { reason: failure.reason }),
              }
            : failure,
        attempt: backoffs,
        maxAttempts: policy.maxAttempts,
        delayMs: delay,
      });
      if (delay > 0) {
        await abortable(this.#sleep(delay), caller);
      }
    }
  }

  #giveUp(
    failure: Failure,
    where: GraphFailureContext,
    attempts: number,
    elapsedMs: number,
    nextDelayMs: number | undefined,
  ): CalgateError {
    const base = permanentGraphError(failure, where);
    const tried = attempts === 1 ? '' : ` (${attempts} attempts over ${formatSeconds(elapsedMs)})`;
    const waited =
      nextDelayMs !== undefined && failure.kind === 'http' && failure.retryAfterMs === nextDelayMs
        ? ` Microsoft asked to wait ${formatSeconds(nextDelayMs)}, longer than Calgate waits within one call; try again then.`
        : '';
    return new CalgateError(base.code, `${base.message.replace(/\.$/, '')}${tried}.${waited}`, {
      retry: true,
      ...(base.retryAfterMs === undefined ? {} : { retryAfterMs: base.retryAfterMs }),
      context: { ...base.context, attempts, elapsedMs: Math.round(elapsedMs) },
    });
  }
}
