import { CalgateError } from '@calgate/core';
import type { RateLimiter } from '@calgate/locks';
import {
  type Database,
  type KeyAccess,
  loadKeyAccessById,
  type OAuthClientRecord,
  type OAuthRepository,
  type TokenEndpointAuthMethod,
} from '@calgate/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml, ResultPages } from '../google/pages.ts';
import type { ClientDocuments } from './client-documents.ts';
import { asOAuthFailure, OAuthFailure, sendOAuthFailure } from './errors.ts';
import { authorizationServerMetadata, OAUTH_PATHS, protectedResourceMetadata } from './metadata.ts';
import { type AccessTokens, type AuthorizationRequests, SCOPES, type Scope } from './tokens.ts';

export interface AuthorizationServerDeps {
  publicUrl: string;
  mcpUrl: string;
  db: Database;
  oauth: OAuthRepository;
  clients: Pick<ClientDocuments, 'resolve'>;
  tokens: AccessTokens;
  requests: AuthorizationRequests;
  /** Registrations and token requests per client address. */
  rateLimiter: RateLimiter;
  /** The built dashboard, whose stylesheet the error pages use. */
  dashboardDir: string;
  /** Drops cached key lookups, so a connection revoked here refuses its access tokens at once. */
  /** Drops the cached key lookups of one tenant. */
  invalidateKeys(tenantId: string): void;
}

type Params = Record<string, string>;

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** A form or JSON body (or query) as single-valued parameters; a repeated one is refused (RFC 6749 §3.1). */
function paramsOf(value: unknown): Params {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {};
  }
  const params: Params = {};
  for (const [name, item] of Object.entries(value)) {
    if (Array.isArray(item)) {
      throw new OAuthFailure('invalid_request', `Parameter ${name} is given more than once.`);
    }
    if (typeof item === 'string') {
      params[name] = item;
    }
  }
  return params;
}

function required(params: Params, name: string, why = ''): string {
  const value = params[name];
  if (value === undefined || value === '') {
    throw new OAuthFailure('invalid_request', `Parameter ${name} is required${why}.`);
  }
  return value;
}

/** The scopes asked for; none named means all of them (write is still unticked at consent). */
export function requestedScopes(scope: string | undefined): Scope[] {
  const names = (scope ?? '').split(' ').filter((name) => name !== '');
  if (names.length === 0) {
    return [...SCOPES];
  }
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new OAuthFailure(
      'invalid_scope',
      `Unknown scope ${unknown.slice(0, 3).join(', ')}: Calgate's scopes are ${SCOPES.join(' and ')}.`,
    );
  }
  return SCOPES.filter((name) => name === 'calendars:read' || names.includes(name));
}

/** What a connection may do now, as a scope string: write when any calendar is writable. */
export function scopeOf(access: KeyAccess): string {
  return access.calendars.some((calendar) => calendar.canWrite)
    ? 'calendars:read calendars:write'
    : 'calendars:read';
}

/** `redirectUri` with the given parameters (and `iss`, RFC 9207) added to its query. */
export function redirectWith(
  redirectUri: string,
  issuer: string,
  params: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) {
      url.searchParams.set(name, value);
    }
  }
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/**
 * A request whose client or redirect URI cannot be trusted is answered here, never by
 * redirecting to the URI it names (RFC 6749 §4.1.2.1: that would make Calgate an open redirector).
 */
function errorPage(pages: ResultPages, reply: FastifyReply, message: string): Promise<FastifyReply> {
  return pages.send(reply, 400, {
    title: 'This app cannot connect to Calgate',
    body: `<p>${escapeHtml(message)}</p><p>Go back to the app and start connecting again; if this keeps happening, its developer needs to fix its OAuth settings.</p>`,
    back: { href: '/', label: 'Open the Calgate dashboard' },
  });
}

/** `Authorization: Basic` client credentials (RFC 6749 §2.3.1: each part form-encoded). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i.exec(header ?? '');
  if (match?.[1] === undefined) {
    return undefined;
  }
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) {
    throw new OAuthFailure('invalid_client', 'Basic client credentials must be client_id:client_secret.');
  }
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new OAuthFailure('invalid_client', 'Basic client credentials are not validly encoded.');
  }
}

/**
 * Calgate as its own OAuth 2.1 authorization server for /api/mcp (MCP authorization,
 * 2025-11-25): discovery documents, dynamic client registration, the authorization endpoint
 * (which hands over to the dashboard's consent page), the token endpoint and revocation.
 */
export function registerAuthorizationServer(app: FastifyInstance, deps: AuthorizationServerDeps): void {
  const resourceMetadata = protectedResourceMetadata(deps.publicUrl, deps.mcpUrl);
  const serverMetadata = authorizationServerMetadata(deps.publicUrl);
  const mcpPath = new URL(deps.mcpUrl).pathname;
  const pages = new ResultPages(deps.dashboardDir);

  const json = (body: object) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('cache-control', 'public, max-age=300').send(body);
  app.get(`/.well-known/oauth-protected-resource${mcpPath}`, json(resourceMetadata));
  app.get('/.well-known/oauth-protected-resource', json(resourceMetadata));
  app.get('/.well-known/oauth-authorization-server', json(serverMetadata));
  app.get('/.well-known/openid-configuration', json(serverMetadata));

  async function throttle(request: FastifyRequest, what: string): Promise<void> {
    const decision = await deps.rateLimiter.take(`oauth:${what}:${request.ip}`, 1);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new OAuthFailure('slow_down', `Too many requests from this address; retry in ${seconds} s.`, 429);
    }
  }

  // Token and revocation requests are forms (RFC 6749 §4.1.3); JSON is accepted too.
  app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => {
        const params: Record<string, string | string[]> = {};
        for (const [name, value] of new URLSearchParams(body as string)) {
          const seen = params[name];
          params[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
        }
        done(null, params);
      },
    );

    scope.post(OAUTH_PATHS.register, async (request, reply) => {
      try {
        await throttle(request, 'register');
        return reply
          .status(201)
          .header('cache-control', 'no-store')
          .send(await register(deps, request.body));
      } catch (error) {
        return sendOAuthFailure(reply, error, 'invalid_client_metadata');
      }
    });

    scope.post(OAUTH_PATHS.token, async (request, reply) => {
      try {
        await throttle(request, 'token');
        const params = paramsOf(request.body);
        const client = await authenticateClient(deps, request, params);
        const answer = await exchange(deps, client, params);
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
      } catch (error) {
        return sendOAuthFailure(reply, error, 'invalid_request');
      }
    });

    scope.post(OAUTH_PATHS.revoke, async (request, reply) => {
      try {
        await throttle(request, 'token');
        const params = paramsOf(request.body);
        const client = await authenticateClient(deps, request, params);
        const token = required(params, 'token');
        // RFC 7009 §2.2: an unknown or already revoked token is answered like a revoked one.
        await deps.oauth.revokeRefreshTokenFamily(token, client.clientId);
        return reply.header('cache-control', 'no-store').send({});
      } catch (error) {
        return sendOAuthFailure(reply, error, 'invalid_request');
      }
    });
  });

  app.get(OAUTH_PATHS.authorize, async (request, reply) => {
    let params: Params;
    try {
      params = paramsOf(request.query);
    } catch (error) {
      return errorPage(pages, reply, (error as Error).message);
    }
    const clientId = params.client_id;
    if (clientId === undefined || clientId === '') {
      return errorPage(pages, reply, 'The request names no client_id.');
    }
    let client: OAuthClientRecord;
    try {
      client = await deps.clients.resolve(clientId);
    } catch (error) {
      const failure = asOAuthFailure(error, 'invalid_client');
      if (failure === undefined) {
        throw error;
      }
      return errorPage(pages, reply, failure.message);
    }
    const redirectUri =
      params.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
    if (redirectUri === undefined) {
      return errorPage(
        pages,
        reply,
        `${client.clientName} registered several redirect URIs; the request must name one.`,
      );
    }
    if (!client.redirectUris.includes(redirectUri)) {
      return errorPage(
        pages,
        reply,
        `The redirect URI ${redirectUri.slice(0, 300)} is not one that ${client.clientName} registered, so Calgate will not send anything there.`,
      );
    }
    const state = params.state;
    try {
      if (params.response_type !== 'code') {
        throw new OAuthFailure(
          'unsupported_response_type',
          `response_type must be code, not ${params.response_type ?? '(none)'}.`,
        );
      }
      const challenge = required(params, 'code_challenge', ' (PKCE with S256)');
      if (params.code_challenge_method !== 'S256') {
        throw new OAuthFailure(
          'invalid_request',
          `code_challenge_method must be S256, not ${params.code_challenge_method ?? '(none: plain)'}.`,
        );
      }
      if (!CHALLENGE.test(challenge)) {
        throw new OAuthFailure('invalid_request', 'code_challenge must be 43 base64url characters (S256).');
      }
      const resource = params.resource ?? deps.mcpUrl;
      if (resource !== deps.mcpUrl) {
        throw new OAuthFailure(
          'invalid_target',
          `resource must be this server's MCP URL, ${deps.mcpUrl}, not ${resource.slice(0, 300)}.`,
        );
      }
      const sealed = await deps.requests.seal({
        clientId: client.clientId,
        redirectUri,
        codeChallenge: challenge,
        resource,
        scopes: requestedScopes(params.scope),
        state,
      });
      return reply
        .status(302)
        .header('cache-control', 'no-store')
        .header('location', `${OAUTH_PATHS.consent}?request=${encodeURIComponent(sealed)}`)
        .send();
    } catch (error) {
      if (!(error instanceof OAuthFailure)) {
        throw error;
      }
      return reply
        .status(302)
        .header('cache-control', 'no-store')
        .header(
          'location',
          redirectWith(redirectUri, deps.publicUrl, {
            error: error.error,
            error_description: error.message,
            state,
          }),
        )
        .send();
    }
  });
}

/** RFC 7591 dynamic registration: the metadata Calgate uses is checked, the rest is kept as given. */
async function register(deps: AuthorizationServerDeps, body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthFailure('invalid_client_metadata', 'Send the client metadata as a JSON object.');
  }
  const metadata = body as Record<string, unknown>;
  const redirectUris = metadata.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.some((uri) => typeof uri !== 'string')) {
    throw new OAuthFailure('invalid_redirect_uri', 'redirect_uris must be a list of URLs.');
  }
  const allowedValues: [string, readonly string[]][] = [
    ['grant_types', GRANT_TYPES],
    ['response_types', ['code']],
  ];
  for (const [field, allowed] of allowedValues) {
    const given = metadata[field];
    if (given === undefined) {
      continue;
    }
    if (!Array.isArray(given) || given.some((item) => !allowed.includes(item as string))) {
      throw new OAuthFailure('invalid_client_metadata', `${field} may hold only ${allowed.join(' and ')}.`);
    }
  }
  const name =
    typeof metadata.client_name === 'string' && metadata.client_name.trim() !== ''
      ? metadata.client_name
      : hostOf(redirectUris[0] as string | undefined);
  const { client_secret: _secret, ...kept } = metadata;
  const { client, clientSecret } = await deps.oauth.registerClient({
    clientName: name,
    redirectUris: redirectUris as string[],
    tokenEndpointAuthMethod: (metadata.token_endpoint_auth_method ?? 'none') as TokenEndpointAuthMethod,
    metadata: kept,
  });
  return {
    ...kept,
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    grant_types: GRANT_TYPES,
    response_types: ['code'],
  };
}

function hostOf(uri: string | undefined): string {
  try {
    return new URL(uri ?? '').host || 'Unnamed app';
  } catch {
    return 'Unnamed app';
  }
}

/** The calling client, authenticated as it registered (public clients only name themselves). */
async function authenticateClient(
  deps: AuthorizationServerDeps,
  request: FastifyRequest,
  params: Params,
): Promise<OAuthClientRecord> {
  const basic = basicCredentials(request.headers.authorization);
  if (basic !== undefined && params.client_id !== undefined && params.client_id !== basic.id) {
    throw new OAuthFailure('invalid_request', 'client_id differs from the one in the Authorization header.');
  }
  const clientId = basic?.id ?? params.client_id;
  if (clientId === undefined || clientId === '') {
    throw new OAuthFailure(
      'invalid_client',
      'Name the client: client_id (or HTTP Basic client credentials).',
    );
  }
  let client: OAuthClientRecord;
  try {
    client = await deps.clients.resolve(clientId);
  } catch (error) {
    const failure = asOAuthFailure(error, 'invalid_client');
    throw failure === undefined ? error : new OAuthFailure('invalid_client', failure.message);
  }
  if (client.tokenEndpointAuthMethod === 'none') {
    return client;
  }
  const secret = basic?.secret ?? params.client_secret;
  if (secret === undefined || !(await deps.oauth.verifyClientSecret(client.clientId, secret))) {
    throw new OAuthFailure('invalid_client', 'Client authentication failed.');
  }
  return client;
}

/** The token endpoint's grants: a code (with its PKCE verifier) or a refresh token, each once. */
async function exchange(deps: AuthorizationServerDeps, client: OAuthClientRecord, params: Params) {
  const resource = params.resource ?? deps.mcpUrl;
  if (resource !== deps.mcpUrl) {
    throw new OAuthFailure(
      'invalid_target',
      `resource must be this server's MCP URL, ${deps.mcpUrl}, not ${resource.slice(0, 300)}.`,
    );
  }
  const grantType = required(params, 'grant_type');
  if (grantType === 'authorization_code') {
    const code = required(params, 'code');
    const redirectUri = required(params, 'redirect_uri');
    const codeVerifier = required(params, 'code_verifier', ' (PKCE)');
    const granted = await deps.oauth
      .consumeCode(code, { clientId: client.clientId, redirectUri, codeVerifier, resource })
      .catch((error: unknown) => {
        // A replay revoked the code's connection; its access tokens are JWTs that only the
        // connection's cached lookup still lets through.
        const tenantId = error instanceof CalgateError ? error.context.revokedTenantId : undefined;
        if (typeof tenantId === 'string') {
          deps.invalidateKeys(tenantId);
        }
        throw error;
      });
    const refreshToken = await deps.oauth.issueRefreshToken({
      tenantId: granted.tenantId,
      keyId: granted.keyId,
      clientId: client.clientId,
      resource,
    });
    return answer(deps, { ...granted, clientId: client.clientId }, refreshToken);
  }
  if (grantType === 'refresh_token') {
    const rotated = await deps.oauth.rotateRefreshToken(required(params, 'refresh_token'), {
      clientId: client.clientId,
      resource,
    });
    const access = await loadKeyAccessById(deps.db, rotated.tenantId, rotated.keyId);
    if (access === null || access.revokedAt !== null) {
      throw new OAuthFailure('invalid_grant', 'The connection of this refresh token is revoked.');
    }
    return answer(
      deps,
      { tenantId: rotated.tenantId, keyId: rotated.keyId, clientId: client.clientId, scope: scopeOf(access) },
      rotated.newToken,
    );
  }
  throw new OAuthFailure(
    'unsupported_grant_type',
    `grant_type must be authorization_code or refresh_token, not ${grantType.slice(0, 100)}.`,
  );
}

async function answer(
  deps: AuthorizationServerDeps,
  claims: { tenantId: string; keyId: string; clientId: string; scope: string },
  refreshToken: string,
) {
  return {
    access_token: await deps.tokens.issue(claims),
    token_type: 'Bearer',
    expires_in: deps.tokens.ttlSeconds,
    refresh_token: refreshToken,
    scope: claims.scope,
  };
}
