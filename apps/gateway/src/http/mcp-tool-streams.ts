/**
 * Change streams of the MCP endpoint: the key's tool list, calendar resources and calendars the
 * mirror saw change (ToolListStreams), and the GET /api/mcp event stream that carries them.
 */
import type { KeyAccess } from '@calgate/store';
import { CalendarAccess, calendarUri, isVisible, resourceCalendars } from '@calgate/tools';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './errors.ts';
import type { McpRouteDeps } from './mcp.ts';
import { principalOf } from './mcp-principal.ts';
import { ToolListStreams } from './mcp-streams.ts';

/** The key's change streams, closed with the app; calendar changes reach them when deps carry them. */
export function toolListStreams(app: FastifyInstance, deps: McpRouteDeps): ToolListStreams {
  const streams = new ToolListStreams({
    authenticator: deps.authenticator,
    toolsOf: (key) => {
      const access = new CalendarAccess(principalOf(key), deps.providers);
      return deps.catalogue.entries
        .filter((entry) => isVisible(entry, access))
        .map((entry) => entry.definition.name)
        .join(',');
    },
    // The calendar resources are the key's enabled readable calendars, by id and name.
    resourcesOf: (key) =>
      key.calendars
        .filter((calendar) => calendar.canRead && calendar.enabled)
        .map((calendar) => `${calendar.id}\t${calendar.summary}`)
        .join('\n'),
    readableResources: (key) =>
      new Map(
        resourceCalendars(new CalendarAccess(principalOf(key), deps.providers)).map((calendar) => [
          calendar.id,
          calendarUri(calendar.id),
        ]),
      ),
    log: app.log,
    limits: deps.mcpStreams,
  });
  app.addHook('preClose', async () => streams.close());
  const stopChanges = deps.calendarChanges?.subscribe((changes) => {
    streams.calendarsChanged(changes).catch((error: unknown) => {
      app.log.warn({ err: error }, 'calendar change could not be told to listen streams');
    });
  });
  app.addHook('onClose', async () => stopChanges?.());
  return streams;
}

/** GET /api/mcp with Accept: text/event-stream: the key's change stream, until either side ends it. */
export async function openToolStream(
  streams: ToolListStreams,
  deps: McpRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const key = request.keyAccess as KeyAccess;
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    // 2026-07-28 has no GET stream: changes come on a subscriptions/listen POST.
    const instead =
      version === '2026-07-28' ? ' MCP 2026-07-28 has no GET stream; POST subscriptions/listen instead.' : '';
    return reply
      .status(400)
      .send(
        errorBody('invalid_argument', `Unsupported MCP-Protocol-Version '${version}'.${instead}`, request.id),
      );
  }
  const refusal = streams.refusal(key.keyId);
  if (refusal !== undefined) {
    deps.metrics?.rateLimited('streams');
    return reply
      .status(429)
      .header('retry-after', '30')
      .send(errorBody('rate_limited', refusal, request.id));
  }
  // The stream outlives this handler: Fastify hands the socket over.
  reply.hijack();
  const raw = reply.raw;
  const socket = request.raw.socket;
  raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    // The socket ends with the stream, so a shutdown that ends streams is not held up by it.
    connection: 'close',
    'x-request-id': request.id,
  });
  raw.flushHeaders();
  const remove = streams.open(key, request.headers.authorization ?? '', {
    write: (chunk) => raw.write(chunk),
    // Destroyed once flushed: a client that stopped reading must not hold the socket open.
    close: () => raw.end(() => socket.destroy()),
    buffered: () => raw.writableLength,
  });
  raw.once('close', () => {
    remove();
    // A client that went away may leave its side half-open; nothing more is sent on it.
    socket.destroy();
  });
}
