/**
 * MCP 2026-07-28 on POST /api/mcp, beside 2025-11-25: no initialize and no session; every request
 * carries its own `_meta` envelope (protocol version, client capabilities, log level). The SDK's
 * `createMcpHandler` answers it — `server/discover`, the envelope and header checks (-32602,
 * -32020), methods the revision removed (-32601), cache fields and `subscriptions/listen` — with
 * a server built for the calling key, as the 2025 path builds one.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { KeyAccess } from '@calgate/store';
import { createMcpServer, type SessionOptions } from '@calgate/tools';
import { ClientCapabilitiesSchema, ImplementationSchema } from '@modelcontextprotocol/core';
import {
  classifyInboundRequest,
  createMcpHandler,
  type McpHttpHandler,
  type ServerEvent,
  type ServerEventBus,
} from '@modelcontextprotocol/server';

type Headers = Record<string, string | string[] | undefined>;

/** Which revision's path answers a POST: `legacy` (2025-11-25 and earlier) or `modern`. */
export type Era = 'legacy' | 'modern';

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The path a POST takes, decided as the SDK decides it: a request that claims the per-request
 * envelope (or names a 2026 revision in MCP-Protocol-Version) is modern, including malformed
 * claims, which the modern path refuses; everything else (initialize, batches, plain 2025
 * requests and notifications, responses to elicitations) is legacy.
 */
export function eraOf(headers: Headers, body: unknown): Era {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header(headers, 'mcp-protocol-version'),
    mcpMethodHeader: header(headers, 'mcp-method'),
    mcpNameHeader: header(headers, 'mcp-name'),
    body,
  });
  return outcome.kind === 'legacy' ? 'legacy' : 'modern';
}

/** What a `subscriptions/listen` stream of one key is told; the key's open streams are tracked by the caller. */
export interface ListenTarget {
  key: KeyAccess;
  authorization: string;
  /** Ends the stream now (the key stopped authenticating). */
  end(): void;
}

/**
 * The change events of `subscriptions/listen`, per key: the SDK's listen router subscribes each
 * stream while the gateway serves that key's request (see {@link KeyedEventBus.run}), and the
 * gateway tells a key's streams what changed for that key only (its tools, its calendars).
 */
export class KeyedEventBus implements ServerEventBus {
  readonly #current = new AsyncLocalStorage<ListenTarget>();
  readonly #open: (target: ListenTarget, deliver: (event: ServerEvent) => void) => () => void;

  /** `open` starts watching the key for a new stream and returns what stops it. */
  constructor(open: (target: ListenTarget, deliver: (event: ServerEvent) => void) => () => void) {
    this.#open = open;
  }

  /** Runs `serve` (the SDK handler) knowing which key any listen stream it opens belongs to. */
  run<T>(target: ListenTarget, serve: () => T): T {
    return this.#current.run(target, serve);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const target = this.#current.getStore();
    if (target === undefined) {
      return () => {};
    }
    return this.#open(target, listener);
  }

  /** Events are published per key by the watcher `open` starts, never to every key. */
  publish(_event: ServerEvent): void {}
}

/** The server of one modern request is built from the session the route made for it. */
interface SessionCarrier {
  session: SessionOptions;
}

/** The 2026-07-28 handler: one server per request, built from the route's session for the key. */
export function modernHandler(bus: KeyedEventBus, onerror: (error: Error) => void): McpHttpHandler {
  return createMcpHandler(
    (context) => {
      const carrier = context.authInfo?.extra as SessionCarrier | undefined;
      if (carrier === undefined) {
        throw new Error('A modern MCP request reached the handler without its session.');
      }
      return createMcpServer(carrier.session);
    },
    { legacy: 'reject', bus, onerror, maxSubscriptions: 10_000 },
  );
}

/** The pass-through `authInfo` that carries the request's session to the server factory. */
export function carrying(key: KeyAccess, session: SessionOptions) {
  return { token: '', clientId: key.keyId, scopes: [], extra: { session } satisfies SessionCarrier };
}

const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The common 2026-07-28 tools/call the SDK would answer as a plain JSON exchange without any check
 * failing, or undefined: a single request with an id, Content-Type and Accept as the SDK wants
 * them, MCP-Protocol-Version, Mcp-Method and Mcp-Name present and matching the body, and an
 * envelope of exactly protocol version, client capabilities and (optionally) client info, all
 * valid — no log level, no progress token, nothing else in `_meta`. Its params come back without
 * `_meta`, as directToolCall takes them; everything else goes through the SDK handler.
 */
export function directModernCall(
  headers: Headers,
  body: unknown,
): { id: string | number; params: Record<string, unknown> } | undefined {
  const accept = header(headers, 'accept');
  if (
    !isPlainObject(body) ||
    body.jsonrpc !== '2.0' ||
    body.method !== 'tools/call' ||
    (typeof body.id !== 'string' && typeof body.id !== 'number') ||
    !isPlainObject(body.params) ||
    header(headers, 'content-type') !== 'application/json' ||
    accept === undefined ||
    !accept.includes('application/json') ||
    !accept.includes('text/event-stream') ||
    header(headers, 'mcp-protocol-version') !== '2026-07-28' ||
    header(headers, 'mcp-method') !== 'tools/call'
  ) {
    return undefined;
  }
  const { _meta: meta, ...params } = body.params;
  if (
    typeof params.name !== 'string' ||
    header(headers, 'mcp-name') !== params.name ||
    !isPlainObject(meta)
  ) {
    return undefined;
  }
  for (const key of Object.keys(meta)) {
    if (!ENVELOPE_KEYS.has(key)) {
      return undefined;
    }
  }
  if (
    meta[PROTOCOL_VERSION] !== '2026-07-28' ||
    !ClientCapabilitiesSchema.safeParse(meta[CLIENT_CAPABILITIES]).success ||
    (meta[CLIENT_INFO] !== undefined && !ImplementationSchema.safeParse(meta[CLIENT_INFO]).success)
  ) {
    return undefined;
  }
  return { id: body.id, params };
}

/** A tool answer as the SDK writes it for 2026-07-28: its result type and the server's identity. */
export function modernToolResult(
  result: Record<string, unknown>,
  serverInfo: { name: string; title: string; version: string; icons?: unknown[] },
): Record<string, unknown> {
  return { ...result, resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo } };
}
