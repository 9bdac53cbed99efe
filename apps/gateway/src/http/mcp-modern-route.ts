/**
 * MCP 2026-07-28 requests: answered by the SDK's handler with a server built for the key;
 * subscriptions/listen streams hear their key's changes through the tool-list streams.
 */
import type { KeyAccess } from '@calgate/store';
import type { SessionOptions } from '@calgate/tools';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { McpRouteDeps } from './mcp.ts';
import { FORWARDED_HEADERS } from './mcp-messages.ts';
import { carrying, KeyedEventBus, modernHandler } from './mcp-modern.ts';
import { LIST_CHANGED, RESOURCES_CHANGED, type ToolListStreams } from './mcp-streams.ts';
import { webRequest } from './web-request.ts';

/**
 * The handler for 2026-07-28 requests, closed with the app. `streams` is read when a request
 * comes, so the route may create its streams after this.
 */
export function modernServing(
  app: FastifyInstance,
  deps: McpRouteDeps,
  streamsOf: () => ToolListStreams,
): (
  request: FastifyRequest,
  reply: FastifyReply,
  key: KeyAccess,
  session: SessionOptions,
) => Promise<unknown> {
  // subscriptions/listen streams are told of their own key's changes, found as GET streams' are.
  const bus = new KeyedEventBus(({ key, authorization, end }, deliver) => {
    // Counted while open, so that workers keep publishing calendar changes (calendar-changes.ts).
    const listened = deps.calendarChanges?.listening();
    const stop = streamsOf().open(key, authorization, {
      write: (chunk) => {
        if (chunk === LIST_CHANGED) {
          deliver({ kind: 'tools_list_changed' });
        } else if (chunk === RESOURCES_CHANGED) {
          deliver({ kind: 'resources_list_changed' });
        }
      },
      // Only calendars the key may read reach here; the client's filter picks what it hears.
      updated: (uri) => deliver({ kind: 'resource_updated', uri }),
      // A key that stops working (revoked, expired, its app disconnected) has its streams ended.
      close: end,
      buffered: () => 0,
    });
    return () => {
      stop();
      listened?.();
    };
  });
  // Refusals are answered to the client; the log only keeps them for debugging.
  const modern = modernHandler(bus, (error) =>
    app.log.debug({ err: error }, 'MCP 2026-07-28 request refused'),
  );
  app.addHook('preClose', async () => modern.close());
  /** A 2026-07-28 request: answered by the SDK's handler with a server built for the key. */
  async function serveModern(
    request: FastifyRequest,
    reply: FastifyReply,
    key: KeyAccess,
    session: SessionOptions,
  ) {
    const { method, id } = (request.body ?? {}) as { method?: unknown; id?: unknown };
    const refusal = method === 'subscriptions/listen' ? streamsOf().refusal(key.keyId) : undefined;
    if (refusal !== undefined) {
      deps.metrics?.rateLimited('streams');
      // As the SDK refuses a subscription over its own limit, with the request's id.
      return reply
        .status(429)
        .header('retry-after', '30')
        .send({ jsonrpc: '2.0', id: id ?? null, error: { code: -32603, message: refusal } });
    }
    if (method === 'subscriptions/listen') {
      // Workers publish from now on, before the stream opens: it misses no change made after.
      await deps.calendarChanges?.willListen();
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && (FORWARDED_HEADERS.includes(name) || name.startsWith('mcp-'))) {
        headers.set(name, value);
      }
    }
    // Aborting ends a listen stream: the key stopped working, or the client left.
    const { request: asked, abort: end } = webRequest(reply, deps.mcpUrl, headers);
    const response = await bus.run({ key, authorization: request.headers.authorization ?? '', end }, () =>
      modern.fetch(asked, { parsedBody: request.body, authInfo: carrying(key, session) }),
    );
    reply.status(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    if (response.body === null) {
      return reply.send();
    }
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      return reply.send(Buffer.from(await response.arrayBuffer()));
    }
    return reply.send(response.body);
  }
  return serveModern;
}
