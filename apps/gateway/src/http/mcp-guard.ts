/**
 * The MCP route's guard, run before every method: Origin check, bearer key (with the OAuth
 * challenge when it fails), batch size and the key's rate limit; it leaves the key, its log
 * level, the request's MCP revision and a single tool call's slot (asked for in the rate limit's
 * round trip to Redis) on the request.
 */
import type { KeyTurns } from '@calgate/locks';
import type { KeyAccess } from '@calgate/store';
import type { LogLevel } from '@calgate/tools';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUTH_FAILURE_MESSAGES } from '../auth.ts';
import type { LogLevelStore } from '../log-levels.ts';
import { resourceMetadataUrl } from '../oauth/metadata.ts';
import { SCOPES } from '../oauth/tokens.ts';
import { type EarlySlot, earlySlotFor } from './early-slot.ts';
import { errorBody } from './errors.ts';
import type { McpRouteDeps } from './mcp.ts';
import { callsTool, requestCount } from './mcp-messages.ts';
import { type Era, eraOf } from './mcp-modern.ts';
import type { originPolicy } from './origins.ts';
import { rateLimitedToolCalls } from './rate-limited.ts';

declare module 'fastify' {
  interface FastifyRequest {
    keyAccess?: KeyAccess;
    /** The key's MCP log level, looked up during the guard for tool calls. */
    logLevel?: Promise<LogLevel | undefined> | undefined;
    /** The MCP revision a POST speaks (see eraOf). */
    mcpEra?: Era | undefined;
    /** A single tool call's concurrency slot, asked for beside the rate limit (see EarlySlot). */
    earlySlot?: EarlySlot | undefined;
  }
}

/** The preHandler of every /api/mcp route. */
export function mcpGuard(
  deps: McpRouteDeps,
  origins: ReturnType<typeof originPolicy>,
  logLevels: LogLevelStore,
  slots?: KeyTurns,
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async function guard(request: FastifyRequest, reply: FastifyReply) {
    const refusal = origins.refusal(request.headers.origin, request.headers.host);
    if (refusal !== undefined) {
      return reply.status(403).send(errorBody('permission_denied', refusal, request.id));
    }
    const auth = await deps.authenticator.authenticate(request.headers.authorization);
    if (!auth.ok) {
      // RFC 9728 §5.1: the challenge names the metadata that leads an OAuth client to sign-in.
      const base = `Bearer realm="calgate", resource_metadata="${resourceMetadataUrl(deps.mcpUrl)}", scope="${SCOPES.join(' ')}"`;
      const challenge =
        auth.reason === 'missing'
          ? base
          : `${base}, error="invalid_token", error_description="${AUTH_FAILURE_MESSAGES[auth.reason]}"`;
      return reply
        .status(401)
        .header('www-authenticate', challenge)
        .send(errorBody('unauthenticated', AUTH_FAILURE_MESSAGES[auth.reason], request.id));
    }
    // Every message of a batch costs as much as a request of its own.
    const cost = request.method === 'POST' ? Math.max(1, requestCount(request.body)) : 1;
    if (cost > deps.rateLimiter.burst) {
      const message = `A batch of ${cost} calls is more than this key may send at once (RATE_LIMIT_BURST ${deps.rateLimiter.burst}); nothing was done. Send at most ${deps.rateLimiter.burst} calls per request.`;
      deps.metrics?.rateLimited('batch_too_large', cost);
      return reply.status(413).send(errorBody('rate_limited', message, request.id));
    }
    const era = request.method === 'POST' ? eraOf(request.headers, request.body) : 'legacy';
    // The key's log level is asked for beside the rate limit (one Redis round trip for both
    // with auto-pipelining); only tool calls send log messages. 2026-07-28 requests carry their own.
    const level =
      era === 'legacy' && request.method === 'POST' && callsTool(request.body)
        ? logLevels.get(auth.access.keyId)
        : undefined;
    level?.catch(() => {});
    // The gateway's limiter fails open (an unreachable Redis must not take every agent offline)
    // and logs an outage once, not per request.
    const deciding = deps.rateLimiter.take(auth.access.keyId, cost);
    // A single tool call's slot is asked for in the same round trip (see EarlySlot).
    const slot =
      slots !== undefined && request.method === 'POST'
        ? earlySlotFor(slots, auth.access.keyId, request.body)
        : undefined;
    let decision: Awaited<typeof deciding>;
    try {
      decision = await deciding;
    } catch (error) {
      slot?.drop();
      throw error;
    }
    if (!decision.allowed) {
      slot?.drop();
      deps.metrics?.rateLimited('key_rate', cost);
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      // SDK clients do not retry HTTP errors; a tool result tells the agent why and how long.
      const answer =
        request.method === 'POST' ? rateLimitedToolCalls(request.body, seconds, era === 'modern') : undefined;
      if (answer !== undefined) {
        return reply.status(200).header('retry-after', String(seconds)).send(answer);
      }
      return reply
        .status(429)
        .header('retry-after', String(seconds))
        .send(
          errorBody('rate_limited', `Too many requests for this API key; retry in ${seconds} s.`, request.id),
        );
    }
    request.keyAccess = auth.access;
    request.logLevel = level;
    request.mcpEra = era;
    request.earlySlot = slot;
  };
}
