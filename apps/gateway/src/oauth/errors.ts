import { CalgateError } from '@calgate/core';
import type { FastifyReply } from 'fastify';

/** An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2): its `error` name and description. */
export class OAuthFailure extends Error {
  override name = 'OAuthFailure';
  readonly error: string;
  readonly status: number;

  constructor(error: string, message: string, status = error === 'invalid_client' ? 401 : 400) {
    super(message);
    this.error = error;
    this.status = status;
  }
}

/**
 * The OAuth failure an error stands for: store errors carry their OAuth name in
 * `context.oauthError`; other refusals of bad input become `fallback` (invalid_request,
 * invalid_client_metadata). Anything else (Postgres away) is not an OAuth failure: undefined.
 */
export function asOAuthFailure(error: unknown, fallback: string): OAuthFailure | undefined {
  if (error instanceof OAuthFailure) {
    return error;
  }
  if (!(error instanceof CalgateError)) {
    return undefined;
  }
  const named = error.context.oauthError;
  if (typeof named === 'string') {
    return new OAuthFailure(named, error.message);
  }
  if (error.code === 'invalid_argument' || error.code === 'not_found') {
    return new OAuthFailure(fallback, error.message);
  }
  return undefined;
}

/** Sends an OAuth error as JSON, never cached; other errors go to the app's error handler. */
export function sendOAuthFailure(reply: FastifyReply, error: unknown, fallback: string): FastifyReply {
  const failure = asOAuthFailure(error, fallback);
  if (failure === undefined) {
    throw error;
  }
  if (failure.status === 401) {
    reply.header('www-authenticate', 'Basic realm="calgate"');
  }
  return reply
    .status(failure.status)
    .header('cache-control', 'no-store')
    .send({ error: failure.error, error_description: failure.message });
}
