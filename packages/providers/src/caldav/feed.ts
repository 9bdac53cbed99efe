/**
 * Fetching an iCalendar feed (`import_events` from a URL, subscribed calendars): every URL,
 * redirects included, passes the outbound URL policy and is fetched over pinned DNS, with a size
 * and a time limit. `webcal:` is read as `https:`; plain `http:` is tried after it only where the
 * policy accepts http (OUTBOUND_ALLOW_PRIVATE), as some servers on a LAN speak no TLS.
 */
import { CalgateError } from '@calgate/core';
import { checkTargetUrl, pinnedFetch, type TargetUrlPolicy } from '@calgate/scheduler';

export interface FeedRequest {
  policy: TargetUrlPolicy;
  /** Bytes the feed may have (default 32 MiB). */
  maxBytes?: number;
  /** Milliseconds the whole fetch may take (default 30 s). */
  timeoutMs?: number;
  /** Validators of the copy already held: a 304 answers `unchanged`. */
  etag?: string | undefined;
  lastModified?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Takes a 2xx body chunk by chunk as it arrives (within the same size and time limits) instead
   * of answering it as `text` (then '').
   */
  onChunk?: ((chunk: Uint8Array) => Promise<void>) | undefined;
}

export type FeedResult =
  | { status: 'unchanged' }
  | { status: 'fetched'; text: string; etag: string | undefined; lastModified: string | undefined };

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The feed's http(s) URL; anything but http, https and webcal is `invalid_argument`. */
export function feedUrl(input: string): URL {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new CalgateError('invalid_argument', `'${input}' is not a URL; give an http(s) or webcal address.`);
  }
  if (url.protocol === 'webcal:' || url.protocol === 'webcals:') {
    return new URL(`https:${url.href.slice(url.protocol.length)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CalgateError(
      'invalid_argument',
      `A feed URL must be http(s) or webcal, not ${url.protocol.replace(/:$/, '')}.`,
    );
  }
  return url;
}

/** Fetches a feed; `webcal:` falls back to `http:` when TLS fails and the policy accepts http. */
export async function fetchFeed(input: string, request: FeedRequest): Promise<FeedResult> {
  const url = feedUrl(input);
  const webcal = /^webcals?:/i.test(input.trim());
  try {
    return await fetchFrom(url, request);
  } catch (error) {
    const tlsFailed = error instanceof CalgateError && error.context?.tls === true;
    if (webcal && tlsFailed && request.policy.allowPrivate) {
      return fetchFrom(new URL(`http:${url.href.slice('https:'.length)}`), request);
    }
    throw error;
  }
}

async function fetchFrom(start: URL, request: FeedRequest): Promise<FeedResult> {
  const maxBytes = request.maxBytes ?? 32 * 1024 * 1024;
  const timeoutMs = request.timeoutMs ?? 30_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]);
  let current = start.href;
  for (let hop = 0; ; hop += 1) {
    const checked = await checkTargetUrl(current, request.policy);
    if (!checked.ok) {
      throw new CalgateError(
        checked.error.code,
        `The feed address ${new URL(current).origin} is refused: ${checked.error.message}.`,
        { retry: checked.error.retry },
      );
    }
    const headers: Record<string, string> = {
      accept: 'text/calendar, */*;q=0.5',
      'user-agent': 'Calgate-ICS',
    };
    if (request.etag !== undefined) {
      headers['if-none-match'] = request.etag;
    }
    if (request.lastModified !== undefined) {
      headers['if-modified-since'] = request.lastModified;
    }
    let response: Response;
    let text: string;
    try {
      response = await pinnedFetch(checked.value, { maxResponseBytes: maxBytes })(current, {
        headers,
        signal,
      });
      if (request.onChunk !== undefined && response.status >= 200 && response.status < 300) {
        text = '';
        for await (const chunk of response.body ?? []) {
          await request.onChunk(chunk);
        }
      } else {
        text = response.status === 304 ? '' : await response.text();
      }
    } catch (cause) {
      if (request.signal?.aborted || cause instanceof CalgateError) {
        throw cause;
      }
      const code = (cause as { code?: unknown }).code;
      const origin = new URL(current).origin;
      if (cause instanceof RangeError || String((cause as Error)?.message).includes('larger than')) {
        throw new CalgateError(
          'invalid_argument',
          `The feed at ${origin} is larger than ${Math.round(maxBytes / (1024 * 1024))} MB; import a smaller file.`,
        );
      }
      const tls = typeof code === 'string' && (code.startsWith('ERR_SSL') || code === 'EPROTO');
      throw new CalgateError(
        'upstream_unavailable',
        timeout.aborted
          ? `The feed at ${origin} did not answer within ${Math.round(timeoutMs / 1000)} s.`
          : `The feed at ${origin} could not be reached${typeof code === 'string' ? ` (${code})` : ''}.`,
        { retry: true, cause, context: { tls } },
      );
    }
    const location = response.headers.get('location');
    if (REDIRECTS.has(response.status) && location !== null) {
      if (hop >= MAX_REDIRECTS) {
        throw new CalgateError(
          'upstream_unavailable',
          `The feed redirected more than ${MAX_REDIRECTS} times.`,
        );
      }
      current = new URL(location, current).href;
      continue;
    }
    if (response.status === 304) {
      return { status: 'unchanged' };
    }
    if (response.status === 404 || response.status === 410) {
      throw new CalgateError(
        'not_found',
        `The feed at ${new URL(current).origin} answered ${response.status}: no calendar there.`,
      );
    }
    if (response.status < 200 || response.status >= 300) {
      throw new CalgateError(
        'upstream_unavailable',
        `The feed at ${new URL(current).origin} answered HTTP ${response.status}.`,
        { retry: response.status >= 500 || response.status === 429 },
      );
    }
    return {
      status: 'fetched',
      text,
      etag: response.headers.get('etag') ?? undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
    };
  }
}
