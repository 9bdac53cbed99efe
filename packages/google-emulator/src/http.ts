/**
 * Google's side of the HTTP layer: body parsing (JSON and forms), Google's JSON formatting and
 * error mapping. The route table and the wire are the emulator kit's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type KitRoute,
  Router as KitRouter,
  send as kitSend,
  type Reply,
  readText,
} from '@calgate/emulator-kit';
import { GoogleApiError, OAuthError } from './errors.ts';

export type { Reply };

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

export interface Route extends KitRoute<RequestContext> {
  /** `/calendar/v3/calendars/:calendarId/events` — `:name` matches one path segment. */
  pattern: string;
  /** The operation name fault rules and the request log use, e.g. `events.list`. */
  op: string;
}

export class Router extends KitRouter<Route> {}

const MAX_BODY = 5 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readText(
    req,
    MAX_BODY,
    () => new GoogleApiError(413, 'uploadTooLarge', 'Request Entity Too Large'),
  );
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
  kitSend(res, reply, { indent: 1, jsonType: 'application/json; charset=UTF-8' });
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
