import { CalgateError, type ErrorCode } from '@calgate/core';
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
  if (error instanceof CalgateError) {
    return reply.status(HTTP_STATUS[error.code]).send(errorBody(error.code, error.message, request.id));
  }
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
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
  request.log.error({ err: error }, 'request failed');
  return reply
    .status(500)
    .send(
      errorBody('internal', `Calgate could not complete the request (request ${request.id}).`, request.id),
    );
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .status(404)
    .send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`, request.id));
}
