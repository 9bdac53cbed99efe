/**
 * The CalDAV client's HTTP: one request with the outbound URL policy checked on every hop
 * (redirects followed, 401 → `needs_reauth`), and WebDAV requests that must answer a multistatus.
 */
import { CalgateError } from '@calgate/core';
import { checkTargetUrl, pinnedFetch } from '@calgate/scheduler';
import type { CaldavClientOptions, CaldavCredentials } from './client.ts';
import { parseMultistatus } from './xml.ts';

export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The URL that answered, after redirects. */
  url: string;
}

export type DavRequestInit = { headers?: Record<string, string>; body?: string; signal?: AbortSignal };

/** What the client's operations send through: its `request`, so a subclass overriding it sees every request. */
export interface DavSession {
  request(method: string, url: string, init?: DavRequestInit): Promise<RawResponse>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
export function upstream(message: string, retry = true, status?: number): CalgateError {
  return new CalgateError('upstream_unavailable', message, {
    retry,
    ...(status === undefined ? {} : { context: { status } }),
  });
}

export function basicAuth({ username, password }: CaldavCredentials): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** One request, following redirects (each target checked); 401 → `needs_reauth`. */
export async function request(
  options: CaldavClientOptions,
  authorization: string,
  method: string,
  url: string,
  init: DavRequestInit = {},
): Promise<RawResponse> {
  let current = url;
  let currentMethod = method;
  let body = init.body;
  for (let hop = 0; ; hop += 1) {
    const checked = await checkTargetUrl(current, options.policy);
    if (!checked.ok) {
      throw new CalgateError(
        checked.error.code,
        `The CalDAV server address ${new URL(current).origin} is refused: ${checked.error.message}.`,
        { retry: checked.error.retry, context: checked.error.context },
      );
    }
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signal = init.signal === undefined ? timeout : AbortSignal.any([timeout, init.signal]);
    const send = pinnedFetch(checked.value, {
      maxResponseBytes: options.maxResponseBytes ?? 64 * 1024 * 1024,
    });
    let response: Response;
    let text: string;
    try {
      response = await send(current, {
        method: currentMethod,
        headers: {
          authorization: authorization,
          'user-agent': 'Calgate-CalDAV',
          ...(body === undefined ? {} : { 'content-type': 'application/xml; charset=utf-8' }),
          ...init.headers,
        },
        ...(body === undefined ? {} : { body }),
        signal,
      });
      text = await response.text();
    } catch (cause) {
      if (init.signal?.aborted) {
        throw cause;
      }
      const code = (cause as { code?: unknown }).code;
      throw new CalgateError(
        'upstream_unavailable',
        timeout.aborted
          ? `The CalDAV server at ${new URL(current).origin} did not answer within ${Math.round((options.timeoutMs ?? 30_000) / 1000)} s.`
          : `The CalDAV server at ${new URL(current).origin} could not be reached${typeof code === 'string' ? ` (${code})` : ''}.`,
        { retry: true, cause },
      );
    }
    const location = response.headers.get('location');
    if (REDIRECTS.has(response.status) && location !== null) {
      if (hop >= MAX_REDIRECTS) {
        throw upstream(`The CalDAV server redirected more than ${MAX_REDIRECTS} times.`, false);
      }
      current = new URL(location, current).toString();
      if (response.status === 303) {
        currentMethod = 'GET';
        body = undefined;
      }
      continue;
    }
    if (response.status === 401) {
      throw new CalgateError(
        'needs_reauth',
        'The CalDAV server refused the username or password; reconnect the account with the current password (an app-specific password for iCloud).',
        { context: { status: 401 } },
      );
    }
    return { status: response.status, headers: response.headers, body: text, url: current };
  }
}

export async function dav(
  session: DavSession,
  method: string,
  url: string,
  body: string,
  depth: '0' | '1',
  signal?: AbortSignal,
) {
  const response = await session.request(method, url, {
    headers: { depth },
    body,
    ...(signal === undefined ? {} : { signal }),
  });
  if (response.status === 404) {
    throw new CalgateError(
      'not_found',
      `The CalDAV server has nothing at ${new URL(response.url).pathname}.`,
    );
  }
  if (response.status === 403) {
    throw new CalgateError(
      'permission_denied',
      `The CalDAV server does not let this account read ${new URL(response.url).pathname}.`,
    );
  }
  if (response.status !== 207) {
    throw upstream(
      `The CalDAV server answered ${method} ${new URL(response.url).pathname} with HTTP ${response.status} instead of a multistatus.`,
      response.status >= 500,
      response.status,
    );
  }
  return { multistatus: parseMultistatus(response.body), url: response.url };
}
