import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './errors.ts';

/**
 * Which browser pages may call Calgate, and under which Host names it answers.
 *
 * A gateway whose PUBLIC_URL is a loopback address runs on someone's machine: local tools serve
 * their pages from any loopback port, so any loopback Origin is welcome. Such a gateway is what a
 * DNS-rebinding page (evil.example resolving to 127.0.0.1) reaches, and that page's requests carry
 * `Host: evil.example`, so a loopback gateway also refuses a Host that is neither its own nor a
 * loopback name. Any other gateway accepts PUBLIC_URL's origin and ALLOWED_ORIGINS only, and
 * leaves Host to its proxy.
 */
export interface OriginPolicy {
  /** Whether PUBLIC_URL is a loopback address. */
  readonly loopback: boolean;
  /** Why a request with these Origin and Host headers is refused; undefined when it is not. */
  refusal(origin: string | undefined, host: string | undefined): string | undefined;
  /** Whether a page of this (present) Origin may call and read the answers. */
  allowsOrigin(origin: string): boolean;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost, as WHATWG URL parsing normalises them. */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name === 'localhost.') {
    return true;
  }
  if (isIP(name) === 4) {
    return name.startsWith('127.');
  }
  if (isIP(name) === 6) {
    return name === '::1' || /^::ffff:(127\.|7f[0-9a-f]{2}:)/.test(name);
  }
  return false;
}

/**
 * Why a page's Origin is refused, naming what this gateway does accept and where that is set:
 * `publicOrigin` is PUBLIC_URL's origin, `extra` the other ALLOWED_ORIGINS.
 */
export function originRefusalMessage(
  origin: string,
  publicOrigin: string,
  extra: readonly string[],
  loopback = false,
): string {
  const others = extra.filter((item) => item !== publicOrigin);
  const accepted = [
    ...(loopback ? ['pages from loopback addresses'] : []),
    `${publicOrigin} (PUBLIC_URL)`,
    ...(others.length === 0 ? [] : [`${others.join(', ')} (ALLOWED_ORIGINS)`]),
  ];
  const list =
    accepted.length === 1
      ? `${accepted[0]} only`
      : `${accepted.slice(0, -1).join(', ')} and ${accepted.at(-1)}`;
  return `Origin ${origin} is not allowed: this gateway accepts ${list}. Add it to ALLOWED_ORIGINS to let its pages call Calgate.`;
}

/** A Host header's parts, or undefined when it is not a plain `name[:port]`. */
function parseHost(host: string): URL | undefined {
  if (/[\s/\\@?#]/.test(host)) {
    return undefined;
  }
  try {
    return new URL(`http://${host}`);
  } catch {
    return undefined;
  }
}

function parseOrigin(origin: string): URL | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The policy for a gateway at `publicUrl`; `allowedOrigins` are the configured ones (PUBLIC_URL's
 * origin and ALLOWED_ORIGINS).
 */
export function originPolicy(publicUrl: string, allowedOrigins: readonly string[]): OriginPolicy {
  const own = new URL(publicUrl);
  const loopback = isLoopbackHostname(own.hostname);
  const allowed = new Set([own.origin, ...allowedOrigins]);

  function allowsOrigin(origin: string): boolean {
    if (allowed.has(origin)) {
      return true;
    }
    if (!loopback) {
      return false;
    }
    const url = parseOrigin(origin);
    return url !== undefined && url.origin === origin && isLoopbackHostname(url.hostname);
  }

  function hostRefusal(host: string | undefined): string | undefined {
    if (!loopback) {
      return undefined;
    }
    const parsed = host === undefined ? undefined : parseHost(host);
    if (parsed !== undefined && (parsed.host === own.host || isLoopbackHostname(parsed.hostname))) {
      return undefined;
    }
    return `Host ${host ?? '(none)'} is not this gateway: it answers at ${own.host} or another loopback name (PUBLIC_URL is ${own.origin}). A page whose name resolves to this machine cannot call it; if the gateway is reached through another name, set PUBLIC_URL to that address.`;
  }

  return {
    loopback,
    allowsOrigin,
    refusal(origin, host) {
      if (origin !== undefined && !allowsOrigin(origin)) {
        return originRefusalMessage(origin, own.origin, allowedOrigins, loopback);
      }
      return hostRefusal(host);
    },
  };
}

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOW_HEADERS =
  'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id, accept';
const EXPOSE_HEADERS = 'mcp-session-id, www-authenticate';
const MAX_AGE_SECONDS = '600';

function pathOf(url: string): string {
  return url.split('?')[0] ?? url;
}

/**
 * CORS for the routes browser-based MCP clients call: preflights (OPTIONS) from allowed origins
 * get 204 and the allowed methods and headers, others 403 without CORS headers; every answer to
 * an allowed origin (errors included) names it and exposes the MCP headers. `paths` are Fastify
 * route paths (`/api/mcp`, `/.well-known/*`); a `*` path covers everything below its prefix.
 */
export function registerCors(app: FastifyInstance, policy: OriginPolicy, paths: readonly string[]): void {
  const matches = (url: string) => {
    const path = pathOf(url);
    return paths.some((pattern) =>
      pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern,
    );
  };

  // Set on the raw response so answers that bypass Fastify's send (event streams) carry them too.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (request.method === 'OPTIONS' || origin === undefined || !matches(request.url)) {
      return;
    }
    reply.raw.setHeader('vary', 'Origin');
    if (policy.allowsOrigin(origin)) {
      reply.raw.setHeader('access-control-allow-origin', origin);
      reply.raw.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
    }
  });

  for (const path of paths) {
    app.options(path, async (request, reply) => {
      const refusal = policy.refusal(request.headers.origin, request.headers.host);
      if (refusal !== undefined) {
        return reply
          .status(403)
          .header('vary', 'Origin')
          .send(errorBody('permission_denied', refusal, request.id));
      }
      const origin = request.headers.origin;
      if (origin !== undefined) {
        reply
          .header('access-control-allow-origin', origin)
          .header('access-control-allow-methods', ALLOW_METHODS)
          .header('access-control-allow-headers', ALLOW_HEADERS)
          .header('access-control-max-age', MAX_AGE_SECONDS);
      }
      return reply.status(204).header('vary', 'Origin').header('allow', ALLOW_METHODS).send();
    });
  }
}
