import { CalgateError, type ErrorCode } from '@calgate/core';
import { isTransient } from '@calgate/tools';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** The one mapping from Calgate error codes to HTTP statuses. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  precondition_failed: 412,
  rate_limited: 429,
  needs_reauth: 409,
  upstream_unavailable: 502,
  unavailable: 503,
  internal: 500,
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; requestId: string };
}

export function errorBody(code: ErrorCode, message: string, requestId: string): ErrorBody {
  return { error: { code, message, requestId } };
}

function isMcpPath(request: FastifyRequest): boolean {
  return request.url.split('?')[0] === '/api/mcp';
}

/**
 * Fastify's error handler: Calgate errors keep their meaning, malformed requests are 400, and
 * anything unexpected is a 500 with a request id and no internals. On /api/mcp a body that is not
 * JSON gets a JSON-RPC parse error, as MCP clients expect.
 */
export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof CalgateError && error.code === 'unavailable') {
    return unavailable(error, request, reply);
  }
  if (error instanceof CalgateError) {
    return reply.status(HTTP_STATUS[error.code]).send(errorBody(error.code, error.message, request.id));
  }
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    if (isMcpPath(request) && status === 413) {
      // The body is refused before any message in it is read (see bodyLimit in mcp.ts).
      return reply
        .status(413)
        .send(
          errorBody(
            'invalid_argument',
            'The request is larger than /api/mcp takes (twice MCP_MAX_ANSWER_BYTES, at least 1 MB), so nothing was done: send less in one request, and import a large .ics file with import_events {calendarId, url} rather than its text.',
            request.id,
          ),
        );
    }
    if (isMcpPath(request) && status === 400) {
      return reply.status(400).send({
        jsonrpc: '2.0',
        error: { code: -32700, message: `Parse error: ${error.message}` },
        id: null,
      });
    }
    const code: ErrorCode =
      status === 413 || status === 415
        ? 'invalid_argument'
        : status === 404
          ? 'not_found'
          : 'invalid_argument';
    return reply.status(status).send(errorBody(code, error.message, request.id));
  }
  if (isTransient(error)) {
    // Postgres or Redis away for a moment: the outage is logged once elsewhere; say try again.
    return unavailable(
      new CalgateError('unavailable', 'Calgate is briefly unavailable; try again in a few seconds.', {
        retry: true,
        retryAfterMs: 2_000,
      }),
      request,
      reply,
    );
  }
  request.log.error({ err: error }, 'request failed');
  return reply
    .status(500)
    .send(
      errorBody('internal', `Calgate could not complete the request (request ${request.id}).`, request.id),
    );
}

/** JSON-RPC's range for server errors; rate-limited answers use the same code. */
const UNAVAILABLE_RPC_CODE = -32000;

function rpcIdOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * A dependency is briefly away (Postgres restarting, Redis unreachable): 503 with Retry-After, so
 * clients and load balancers retry. On /api/mcp the body is a JSON-RPC error that says to try again.
 */
function unavailable(error: CalgateError, request: FastifyRequest, reply: FastifyReply) {
  const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 2_000) / 1000));
  reply.status(503).header('retry-after', String(seconds));
  if (isMcpPath(request)) {
    return reply.send({
      jsonrpc: '2.0',
      error: {
        code: UNAVAILABLE_RPC_CODE,
        message: error.message,
        data: { code: error.code, retryAfterSeconds: seconds, requestId: request.id },
      },
      id: rpcIdOf(request.body),
    });
  }
  return reply.send(errorBody(error.code, error.message, request.id));
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .status(404)
    .send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`, request.id));
}
