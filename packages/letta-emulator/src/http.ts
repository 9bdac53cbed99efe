/**
 * The small HTTP layer: a route table matched by method and path pattern, JSON bodies, and
 * the one place where replies and errors become bytes on the wire.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiErrors, LettaApiError } from './errors.ts';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body; `undefined` when there is none. */
  body: unknown;
  /** The caller's organization, set once the API key is checked. */
  organization: string;
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface Route {
  method: string;
  /** `/v1/agents/:agentId` — `:name` matches one path segment; a trailing slash is optional. */
  pattern: string;
  /** The operation name fault rules and the request log use, e.g. `messages.create`. */
  op: string;
  /** Public routes skip the API key check. */
  public?: boolean;
  handler: Handler;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

export type Match = { route: Route; params: Record<string, string> } | 'wrongMethod' | null;

export class Router {
  readonly #routes: CompiledRoute[] = [];

  add(routes: Route[]): void {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.pattern
        .replace(/\/$/, '')
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:(\w+)/g, (_m, name: string) => {
          names.push(name);
          return '([^/]+)';
        });
      this.#routes.push({ ...route, regex: new RegExp(`^${source}/?$`), names });
    }
  }

  match(method: string, path: string): Match {
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

/** Reads a JSON body; malformed JSON is a 422 the way FastAPI reports it. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY) {
      throw apiErrors.tooLarge();
    }
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') {
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw apiErrors.invalid([
      {
        type: 'json_invalid',
        loc: ['body', 0],
        msg: 'JSON decode error',
        input: {},
        ...{ ctx: { error: error instanceof Error ? error.message : String(error) } },
      },
    ]);
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) {
    return;
  }
  const headers: Record<string, string> = { ...reply.headers };
  const payload = reply.body === undefined ? '' : JSON.stringify(reply.body);
  if (reply.body !== undefined) {
    headers['content-type'] ??= 'application/json';
  }
  headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(reply.status, headers);
  res.end(payload);
}

export function errorReply(error: unknown): Reply {
  if (error instanceof LettaApiError) {
    return { status: error.status, body: error.toBody(), headers: error.headers };
  }
  return { status: 500, body: { detail: 'An internal server error occurred' } };
}

export const json = (body: unknown, status = 200): Reply => ({ status, body });
