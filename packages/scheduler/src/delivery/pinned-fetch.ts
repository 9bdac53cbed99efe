import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { type CheckedTarget, pinnedLookup } from './ssrf.ts';

/** The `fetch` shape HTTP client libraries accept as an option. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Answers larger than this are cut off: a delivery target has nothing big to say. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Statuses whose response must not carry a body (the `Response` constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` that connects only to the addresses `checkTargetUrl` vetted, for a client library
 * that takes a custom `fetch` (global `fetch` would resolve the host again, and a second DNS
 * answer could point at a private address). It serves only the checked URL's origin, never
 * follows redirects (a 3xx comes back as it is), and cuts off answers past `maxResponseBytes`.
 * Network failures reject with the socket error, whose `code` (ECONNREFUSED, …) says what happened.
 */
export function pinnedFetch(
  target: CheckedTarget,
  options: { maxResponseBytes?: number } = {},
): FetchFunction {
  const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== target.url.origin) {
      throw new TypeError('request outside the checked target origin refused');
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = bodyBytes(init.body, headers);
    if (body !== undefined) {
      headers['content-length'] = String(body.byteLength);
    }
    return new Promise<Response>((resolve, reject) => {
      const req = send(url, {
        method: (init.method ?? 'GET').toUpperCase(),
        headers,
        agent: false,
        lookup: pinnedLookup(target.addresses),
        ...(init.signal ? { signal: init.signal } : {}),
      });
      req.on('error', reject);
      req.on('response', (res: IncomingMessage) => {
        try {
          resolve(toResponse(res, limit));
        } catch (error) {
          res.destroy();
          reject(error);
        }
      });
      req.end(body);
    });
  };
}

function toResponse(res: IncomingMessage, limit: number): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
    } catch {
      // A header the Fetch API cannot hold; nothing a client needs.
    }
  }
  let received = 0;
  res.on('data', (chunk: Buffer) => {
    received += chunk.byteLength;
    if (received > limit) {
      res.destroy(new RangeError(`response larger than ${limit} bytes`));
    }
  });
  if (NULL_BODY.has(status)) {
    res.resume();
    return new Response(null, { status, headers });
  }
  const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
  return new Response(body, { status, headers });
}

function bodyBytes(body: RequestInit['body'], headers: Record<string, string>): Uint8Array | undefined {
  if (body === undefined || body === null) {
    return undefined;
  }
  if (typeof body === 'string') {
    return Buffer.from(body, 'utf8');
  }
  if (body instanceof ArrayBuffer) {
    return new Uint8Array(body);
  }
  if (ArrayBuffer.isView(body)) {
    return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  }
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return Buffer.from(body.toString(), 'utf8');
  }
  // Streams, forms and files: nothing a delivery sends.
  throw new TypeError('unsupported request body');
}
