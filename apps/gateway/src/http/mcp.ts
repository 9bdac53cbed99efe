import type { RateLimiter } from '@calgate/locks';
import type { AuditLog, KeyAccess } from '@calgate/store';
import { CalendarAccess, type Catalogue, createMcpServer, type ProviderResolver } from '@calgate/tools';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AUTH_FAILURE_MESSAGES, type KeyAuthenticator } from '../auth.ts';
import type { BookingFactory } from '../booking.ts';
import type { DirectoryFactory } from '../directory.ts';
import { errorBody } from './errors.ts';

export interface McpRouteDeps {
  catalogue: Catalogue;
  authenticator: KeyAuthenticator;
  rateLimiter: RateLimiter;
  audit: AuditLog;
  providers: ProviderResolver;
  allowedOrigins: readonly string[];
  /** This endpoint's public URL, as the transport's web Request sees it. */
  mcpUrl: string;
  /** Base for links to Calgate's own event pages. */
  publicUrl: string;
  version: string;
  /** Creates calendars for create_calendar; the tool answers 'unavailable' without it. */
  directory?: DirectoryFactory | undefined;
  /** Locks and ledger for book_slot; the tool answers 'unavailable' without them. */
  booking?: BookingFactory | undefined;
}

/** Whether a JSON-RPC message (or batch) carries a progress token. */
function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

const FORWARDED_HEADERS = [
  'accept',
  'content-type',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
];

declare module 'fastify' {
  interface FastifyRequest {
    keyAccess?: KeyAccess;
  }
}

/**
 * The MCP endpoint: Origin check, bearer key, per-key rate limit, then the SDK's streamable
 * HTTP transport over a server built for this key. Stateless: any gateway process can answer
 * any request, so GET (server-initiated streams) and DELETE (session end) answer 405.
 */
export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const allowed = new Set(deps.allowedOrigins);

  async function guard(request: FastifyRequest, reply: FastifyReply) {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) {
      return reply
        .status(403)
        .send(errorBody('permission_denied', `Origin ${origin} is not allowed.`, request.id));
    }
    const auth = await deps.authenticator.authenticate(request.headers.authorization);
    if (!auth.ok) {
      const challenge =
        auth.reason === 'missing'
          ? 'Bearer realm="calgate"'
          : `Bearer realm="calgate", error="invalid_token", error_description="${AUTH_FAILURE_MESSAGES[auth.reason]}"`;
      return reply
        .status(401)
        .header('www-authenticate', challenge)
        .send(errorBody('unauthenticated', AUTH_FAILURE_MESSAGES[auth.reason], request.id));
    }
    let decision: Awaited<ReturnType<RateLimiter['take']>>;
    try {
      decision = await deps.rateLimiter.take(auth.access.keyId);
    } catch (error) {
      // Rate limiting fails open: an unreachable Redis must not take every agent offline.
      request.log.warn({ err: error }, 'rate limiter unavailable; request allowed');
      decision = { allowed: true, retryAfterMs: 0 };
    }
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      return reply
        .status(429)
        .header('retry-after', String(seconds))
        .send(
          errorBody('rate_limited', `Too many requests for this API key; retry in ${seconds} s.`, request.id),
        );
    }
    request.keyAccess = auth.access;
  }

  app.post('/api/mcp', { preHandler: guard }, async (request, reply) => {
    const key = request.keyAccess as KeyAccess;
    const access = new CalendarAccess(
      { tenantId: key.tenantId, keyId: key.keyId, calendars: key.calendars },
      deps.providers,
    );
    const server = createMcpServer({
      catalogue: deps.catalogue,
      access,
      requestId: request.id,
      version: deps.version,
      publicUrl: deps.publicUrl,
      onCall: (record) =>
        deps.audit.record({
          ...record,
          tenantId: key.tenantId,
          keyId: key.keyId,
          requestId: request.id,
          at: new Date(),
        }),
      onInternalError: (error, tool) => request.log.error({ err: error, tool }, 'tool failed'),
      ...(deps.directory === undefined ? {} : { directory: deps.directory(access) }),
      ...(deps.booking === undefined
        ? {}
        : { booking: deps.booking({ tenantId: key.tenantId, keyId: key.keyId }) }),
    });
    // Plain JSON answers unless the client asked for progress, which needs an event stream.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !wantsProgress(request.body),
    });
    // The transport speaks web Request/Response; Fastify has already read and parsed the body.
    const headers = new Headers();
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') {
        headers.set(name, value);
      }
    }
    const aborted = new AbortController();
    // A client that goes away mid-call aborts the handlers. A finished exchange needs no close:
    // nothing outlives the request, and closing costs an Error per call in the SDK.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) {
        aborted.abort();
        void transport.close();
        void server.close();
      }
    });
    await server.connect(transport);
    const response = await transport.handleRequest(
      new Request(deps.mcpUrl, { method: 'POST', headers, signal: aborted.signal }),
      { parsedBody: request.body },
    );
    reply.status(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    // JSON answers are sent as bytes in one write; event streams are piped.
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      return reply.send(Buffer.from(await response.arrayBuffer()));
    }
    return reply.send(response.body);
  });

  const notAllowed = async (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .status(405)
      .header('allow', 'POST')
      .send(
        errorBody(
          'invalid_argument',
          'Calgate serves MCP statelessly: send JSON-RPC messages with POST; there are no server-initiated streams or sessions to end.',
          request.id,
        ),
      );
  app.get('/api/mcp', { preHandler: guard }, notAllowed);
  app.delete('/api/mcp', { preHandler: guard }, notAllowed);
}
