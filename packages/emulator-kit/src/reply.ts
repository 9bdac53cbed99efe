/** Replies, request bodies and the one place where a reply becomes bytes on the wire. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Reply {
  status: number;
  /** JSON-serialised unless `raw` is set. */
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

export interface SendOptions {
  /** `JSON.stringify` indentation (Google pretty-prints with 1). */
  indent?: number;
  /** Content type of JSON bodies. */
  jsonType?: string;
}

export function send(res: ServerResponse, reply: Reply, options: SendOptions = {}): void {
  if (res.headersSent || res.destroyed) {
    return;
  }
  const headers: Record<string, string> = { ...reply.headers };
  let payload = '';
  if (reply.raw !== undefined) {
    payload = reply.raw;
  } else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body, null, options.indent);
    headers['content-type'] ??= options.jsonType ?? 'application/json';
  }
  headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(reply.status, headers);
  res.end(payload);
}

/** The request body as text, refusing more than `maxBytes` with the emulator's own error. */
export async function readText(
  req: IncomingMessage,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBytes) {
      throw tooLarge();
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export const DEFAULT_MAX_BODY = 5 * 1024 * 1024;

/** `?a=1&a=2&b=3` → `{a: ['1','2'], b: '3'}`. */
export function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    out[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}

/** The bearer token of an `Authorization` header. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''));
  return m?.[1];
}
