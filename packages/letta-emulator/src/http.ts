/**
 * Letta's side of the HTTP layer: its routes (with API key checks), JSON bodies and the
 * `{detail}` error mapping. The router and the wire are the emulator kit's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type KitRoute,
  Router as KitRouter,
  send as kitSend,
  type Reply,
  readText,
} from '@calgate/emulator-kit';
import { apiErrors, LettaApiError } from './errors.ts';

export type { Reply };

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

export interface Route extends KitRoute<RequestContext> {
  /** `/v1/agents/:agentId` — `:name` matches one path segment; a trailing slash is optional. */
  pattern: string;
  /** Public routes skip the API key check. */
  public?: boolean;
}

export class Router extends KitRouter<Route> {
  constructor() {
    super({ optionalTrailingSlash: true });
  }
}

const MAX_BODY = 5 * 1024 * 1024;

/** Reads a JSON body; malformed JSON is a 422 the way FastAPI reports it. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req, MAX_BODY, () => apiErrors.tooLarge());
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
  kitSend(res, reply);
}

export function errorReply(error: unknown): Reply {
  if (error instanceof LettaApiError) {
    return { status: error.status, body: error.toBody(), headers: error.headers };
  }
  return { status: 500, body: { detail: 'An internal server error occurred' } };
}

export const json = (body: unknown, status = 200): Reply => ({ status, body });
