/**
 * The small HTTP layer: a route table matched by method and path pattern, body parsing, and
 * the one place where replies and errors become bytes on the wire.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GoogleApiError, OAuthError } from './errors.ts';

export interface Reply {
  status: number;
  /** JSON-serialised unless `raw` is set. */
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** Parsed JSON object or form fields; `{}` when there is no body. */
  body: Record<string, unknown>;
  /** The base URL clients reached us on, without a trailing slash. */
  baseUrl: string;
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface Route {
  method: string;
  /** `/calendar/v3/calendars/:calendarId/events` — `:name` matches one path segment. */
  pattern: string;
  /** The operation name fault rules and the request log use, e.g. `events.list`. */
  op: string;
  handler: Handler;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

export class Router {
  readonly #routes: CompiledRoute[] = [];

  add(routes: Route[]): void {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.pattern
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:(\w+)/g, (_m, name: string) => {
          names.push(name);
          return '([^/]+)';
        });
      this.#routes.push({ ...route, regex: new RegExp(`^${source}$`), names });
    }
  }

  match(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | 'wrongMethod' | null {
    let pathMatched = false;
    for (const route of this.#routes) {
      const m = route.regex.exec(path);
      if (m === null) {
        continue;
      }
      pathMatched = true;
      if (route.method !== method) {
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? '');
      });
      return { route, params };
    }
    return pathMatched ? 'wrongMethod' : null;
  }
}

const MAX_BODY = 5 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY) {
      throw new GoogleApiError(413, 'uploadTooLarge', 'Request Entity Too Large');
    }
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') {
    return {};
  }
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error('not an object');
    }
    return parsed as Record<string, unknown>;
  } catch {
    if (!type.includes('json')) {
      // Token endpoints accept forms sent without a content type.
      return Object.fromEntries(new URLSearchParams(text));
    }
    throw new GoogleApiError(400, 'parseError', 'Parse Error');
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) {
    return;
  }
  const headers: Record<string, string> = { ...reply.headers };
  let payload = '';
  if (reply.raw !== undefined) {
    payload = reply.raw;
  } else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body, null, 1);
    headers['content-type'] ??= 'application/json; charset=UTF-8';
  }
  headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(reply.status, headers);
  res.end(payload);
}

/** Maps a thrown error to Google's shape for the surface it came from. */
export function errorReply(error: unknown): Reply {
  if (error instanceof GoogleApiError) {
    return { status: error.code, body: error.toBody(), headers: error.options.headers ?? {} };
  }
  if (error instanceof OAuthError) {
    return { status: error.status, body: error.toBody(), headers: { 'cache-control': 'no-store' } };
  }
  return { status: 500, body: new GoogleApiError(500, 'backendError', 'Backend Error').toBody() };
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Reply => ({
  status,
  body,
  headers,
});

export const noContent = (): Reply => ({ status: 204 });

export const redirect = (location: string): Reply => ({ status: 302, headers: { location } });

export const html = (page: string, status = 200): Reply => ({
  status,
  raw: page,
  headers: { 'content-type': 'text/html; charset=utf-8' },
});
