/**
 * The token endpoint (`/token`, as OAuth2Client and gtoken call it): authorization_code with
 * PKCE (S256 and plain) and redirect_uri checks, refresh_token, and the jwt-bearer grant for
 * service accounts. Errors are RFC 6749 bodies with Google's descriptions.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { OAuthError } from '../errors.ts';
import { json, type Reply, type RequestContext, type Route } from '../http.ts';
import type { EmulatorState, OAuthClientRecord } from '../state.ts';
import { type IdTokenSigner, verifyAssertion } from './jwt.ts';
import { ACCESS_TOKEN_TTL_S, type Grant, type TokenStore } from './tokens.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

const field = (ctx: RequestContext, name: string): string | undefined => {
  const v = ctx.body[name] ?? ctx.query.get(name) ?? undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
};

const missing = (name: string) =>
  new OAuthError(400, 'invalid_request', `Missing required parameter: ${name}`);

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** client_secret_post or client_secret_basic, as OAuth2Client's clientAuthentication allows. */
function authenticateClient(state: EmulatorState, ctx: RequestContext): OAuthClientRecord {
  let clientId = field(ctx, 'client_id');
  let secret = field(ctx, 'client_secret');
  const basic = /^Basic\s+(\S+)$/i.exec(String(ctx.headers.authorization ?? ''));
  if (basic) {
    const [id, ...rest] = Buffer.from(basic[1] as string, 'base64')
      .toString('utf8')
      .split(':');
    clientId = decodeURIComponent(id ?? '');
    secret = decodeURIComponent(rest.join(':'));
  }
  const client = clientId ? state.clients.get(clientId) : undefined;
  if (!client) {
    throw new OAuthError(401, 'invalid_client', 'The OAuth client was not found.');
  }
  if (secret === undefined || !sameString(secret, client.clientSecret)) {
    throw new OAuthError(401, 'invalid_client', 'Unauthorized');
  }
  return client;
}

function pkceMatches(verifier: string, challenge: string, method: 'S256' | 'plain'): boolean {
  const computed = method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  return sameString(computed, challenge);
}

export interface TokenDeps {
  state: EmulatorState;
  tokens: TokenStore;
  signer: IdTokenSigner;
}

async function authorizationCode(deps: TokenDeps, ctx: RequestContext): Promise<Reply> {
  const { state, tokens } = deps;
  const client = authenticateClient(state, ctx);
  const code = field(ctx, 'code');
  if (code === undefined) {
    throw missing('code');
  }
  const record = tokens.codes.get(code);
  if (!record) {
    throw new OAuthError(400, 'invalid_grant', 'Malformed auth code.');
  }
  if (record.used || record.expiresAt <= state.now() || record.clientId !== client.clientId) {
    throw new OAuthError(400, 'invalid_grant', 'Bad Request');
  }
  if (field(ctx, 'redirect_uri') !== record.redirectUri) {
    throw new OAuthError(400, 'redirect_uri_mismatch', 'Bad Request');
  }
  if (record.codeChallenge !== undefined) {
    const verifier = field(ctx, 'code_verifier');
    if (verifier === undefined) {
      throw new OAuthError(400, 'invalid_grant', 'Missing code verifier.');
    }
    if (!pkceMatches(verifier, record.codeChallenge, record.codeChallengeMethod ?? 'plain')) {
      throw new OAuthError(400, 'invalid_grant', 'Invalid code verifier.');
    }
  }
  record.used = true;
  const grant: Grant = {
    email: record.email,
    kind: 'user',
    clientId: client.clientId,
    scopes: record.scopes,
  };
  const firstOffline = !tokens.offlineGranted.has(`${client.clientId} ${record.email}`);
  const refresh =
    record.offline && (record.forceConsent || firstOffline)
      ? tokens.issueRefresh(grant, state.now())
      : undefined;
  const access = tokens.issueAccess(grant, state.now(), refresh?.token);
  const body: Record<string, unknown> = {
    access_token: access.token,
    expires_in: ACCESS_TOKEN_TTL_S,
    ...(refresh ? { refresh_token: refresh.token } : {}),
    scope: record.scopes.join(' '),
    token_type: 'Bearer',
  };
  const account = state.accounts.get(record.email);
  if (account && record.scopes.includes('openid')) {
    const withEmail = record.scopes.includes('https://www.googleapis.com/auth/userinfo.email');
    body.id_token = await deps.signer.sign(account, client.clientId, state.now(), record.nonce, withEmail);
  }
  return json(body, 200, { 'cache-control': 'no-store' });
}

function refreshToken(deps: TokenDeps, ctx: RequestContext): Reply {
  const { state, tokens } = deps;
  const client = authenticateClient(state, ctx);
  const token = field(ctx, 'refresh_token');
  if (token === undefined) {
    throw missing('refresh_token');
  }
  const record = tokens.refresh.get(token);
  if (!record) {
    throw new OAuthError(400, 'invalid_grant', 'Bad Request');
  }
  if (record.clientId !== client.clientId) {
    throw new OAuthError(401, 'unauthorized_client', 'Unauthorized');
  }
  if (
    record.revoked ||
    (record.expiresAt !== undefined && record.expiresAt <= state.now()) ||
    !state.accounts.has(record.email)
  ) {
    throw new OAuthError(400, 'invalid_grant', 'Token has been expired or revoked.');
  }
  const requested = field(ctx, 'scope')?.split(/\s+/);
  if (requested?.some((s) => !record.scopes.includes(s))) {
    throw new OAuthError(400, 'invalid_scope', 'Bad Request');
  }
  const access = tokens.issueAccess(
    { ...record, scopes: requested ?? record.scopes },
    state.now(),
    record.token,
  );
  return json(
    {
      access_token: access.token,
      expires_in: ACCESS_TOKEN_TTL_S,
      scope: access.scopes.join(' '),
      token_type: 'Bearer',
    },
    200,
    { 'cache-control': 'no-store' },
  );
}

async function jwtBearer(deps: TokenDeps, ctx: RequestContext): Promise<Reply> {
  const assertion = field(ctx, 'assertion');
  if (assertion === undefined) {
    throw missing('assertion');
  }
  const verified = await verifyAssertion(deps.state, assertion, `${ctx.baseUrl}/token`);
  const grant: Grant =
    verified.subject === undefined
      ? {
          email: verified.account.email,
          kind: 'service',
          clientId: verified.account.clientId,
          scopes: verified.scopes,
        }
      : {
          email: verified.subject,
          kind: 'user',
          clientId: verified.account.clientId,
          scopes: verified.scopes,
        };
  const access = deps.tokens.issueAccess(grant, deps.state.now());
  return json({ access_token: access.token, expires_in: ACCESS_TOKEN_TTL_S, token_type: 'Bearer' }, 200, {
    'cache-control': 'no-store',
  });
}

export function tokenRoutes(deps: TokenDeps): Route[] {
  const handler = async (ctx: RequestContext): Promise<Reply> => {
    const grantType = field(ctx, 'grant_type');
    if (grantType === 'authorization_code') {
      return authorizationCode(deps, ctx);
    }
    if (grantType === 'refresh_token') {
      return refreshToken(deps, ctx);
    }
    if (grantType === JWT_BEARER) {
      return jwtBearer(deps, ctx);
    }
    if (grantType === undefined) {
      throw missing('grant_type');
    }
    throw new OAuthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType}`);
  };
  return ['/token', '/oauth2/v4/token', '/o/oauth2/token'].map((pattern) => ({
    method: 'POST',
    pattern,
    op: 'oauth.token',
    handler,
  }));
}
