/**
 * The Graph side of the HTTP layer: request context, JSON and form bodies, Graph's error
 * mapping, and the per-request preferences (`Prefer: outlook.timezone`, body content type,
 * `odata.maxpagesize`). The route table and the wire are the emulator kit's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type KitRoute,
  Router as KitRouter,
  send as kitSend,
  type Reply,
  readText,
} from '@calgate/emulator-kit';
import { GraphError, graphErrors, IdentityError } from './errors.ts';
import type { Zone } from './state.ts';
import { acceptZone } from './zones.ts';

export type { Reply };

export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The base URL clients reached us on, without a trailing slash. */
  baseUrl: string;
  /** A 429 the throttle decided for this request before it ran. */
  throttled?: GraphError;
}

export interface Route extends KitRoute<RequestContext> {}

export class Router extends KitRouter<Route> {}

const MAX_BODY = 4 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readText(req, MAX_BODY, () => graphErrors.tooLarge());
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
      return Object.fromEntries(new URLSearchParams(text));
    }
    throw graphErrors.bodyRead();
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  kitSend(res, reply, {
    jsonType:
      'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8',
  });
}

export function errorReply(error: unknown, now: number): Reply {
  if (error instanceof GraphError) {
    return { status: error.status, body: error.toBody(now), headers: { ...error.headers } };
  }
  if (error instanceof IdentityError) {
    return { status: error.status, body: error.toBody(now), headers: { 'cache-control': 'no-store' } };
  }
  return { status: 500, body: new GraphError(500, 'UnknownError', '').toBody(now) };
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Reply => ({
  status,
  body,
  headers,
});

export const noContent = (): Reply => ({ status: 204 });

export interface Preferences {
  /** The zone answers are written in: the Prefer header's, else UTC. */
  zone: Zone;
  zoneGiven: boolean;
  bodyType?: 'text' | 'html';
  maxPageSize?: number;
}

const UTC: Zone = { name: 'UTC', iana: 'UTC' };

/** Reads every `Prefer` header; a zone Graph does not take is refused as Graph refuses it. */
export function preferences(headers: IncomingMessage['headers']): Preferences {
  const raw = headers.prefer;
  const text = Array.isArray(raw) ? raw.join(', ') : String(raw ?? '');
  const out: Preferences = { zone: UTC, zoneGiven: false };
  const zone = /outlook\.timezone\s*=\s*"([^"]*)"/i.exec(text)?.[1];
  if (zone !== undefined) {
    const accepted = acceptZone(zone);
    if (!accepted) {
      throw graphErrors.zoneNotSupported(zone);
    }
    out.zone = accepted;
    out.zoneGiven = true;
  }
  const body = /outlook\.body-content-type\s*=\s*"?(text|html)"?/i.exec(text)?.[1];
  if (body !== undefined) {
    out.bodyType = body.toLowerCase() as 'text' | 'html';
  }
  const size = /odata\.maxpagesize\s*=\s*(\d+)/i.exec(text)?.[1];
  if (size !== undefined) {
    out.maxPageSize = Number(size);
  }
  return out;
}

/** The `Preference-Applied` header for what was honoured. */
export function applied(prefs: Preferences): Record<string, string> {
  const parts: string[] = [];
  if (prefs.zoneGiven) {
    parts.push(`outlook.timezone="${prefs.zone.name}"`);
  }
  if (prefs.bodyType) {
    parts.push(`outlook.body-content-type="${prefs.bodyType}"`);
  }
  return parts.length > 0 ? { 'preference-applied': parts.join(', ') } : {};
}
