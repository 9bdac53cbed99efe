/**
 * userinfo (`/oauth2/v2/userinfo` and OpenID's `/v1/userinfo`), tokeninfo, revoke, the id_token
 * certificates and the OpenID discovery document.
 */
import { apiErrors, OAuthError } from '../errors.ts';
import { json, type Reply, type RequestContext, type Route } from '../http.ts';
import type { EmulatorState } from '../state.ts';
import type { IdTokenSigner } from './jwt.ts';
import type { AccessTokenRecord, TokenStore } from './tokens.ts';

const EMAIL = 'https://www.googleapis.com/auth/userinfo.email';
const PROFILE = 'https://www.googleapis.com/auth/userinfo.profile';

function bearer(ctx: RequestContext): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(String(ctx.headers.authorization ?? ''));
  return (
    m?.[1] ??
    ctx.query.get('access_token') ??
    (typeof ctx.body.access_token === 'string' ? ctx.body.access_token : undefined)
  );
}

function liveToken(
  state: EmulatorState,
  tokens: TokenStore,
  token: string | undefined,
): AccessTokenRecord | null {
  const record = token === undefined ? undefined : tokens.access.get(token);
  return record && !record.revoked && record.expiresAt > state.now() ? record : null;
}

interface Identity {
  id: string;
  email: string;
  name?: string;
}

function identity(state: EmulatorState, record: AccessTokenRecord): Identity {
  const user = state.accounts.get(record.email);
  if (user) {
    return { id: user.id, email: user.email, name: user.name };
  }
  return { id: state.serviceAccounts.get(record.email)?.clientId ?? record.email, email: record.email };
}

function splitName(name: string | undefined) {
  if (name === undefined) {
    return {};
  }
  const [given, ...family] = name.split(' ');
  return { name, given_name: given, ...(family.length > 0 ? { family_name: family.join(' ') } : {}) };
}

export function infoRoutes(state: EmulatorState, tokens: TokenStore, signer: IdTokenSigner): Route[] {
  const userinfoV2 = (ctx: RequestContext): Reply => {
    const record = liveToken(state, tokens, bearer(ctx));
    const scopes = new Set(record?.scopes ?? []);
    if (!record || !(scopes.has(EMAIL) || scopes.has(PROFILE) || scopes.has('openid'))) {
      throw apiErrors.invalidCredentials();
    }
    const who = identity(state, record);
    return json({
      id: who.id,
      ...(scopes.has(EMAIL) ? { email: who.email, verified_email: true } : {}),
      ...(scopes.has(PROFILE)
        ? { ...splitName(who.name), picture: 'https://lh3.googleusercontent.com/a/default-user' }
        : {}),
    });
  };
  const userinfoOpenId = (ctx: RequestContext): Reply => {
    const record = liveToken(state, tokens, bearer(ctx));
    if (!record) {
      throw new OAuthError(401, 'invalid_request', 'Invalid Credentials');
    }
    const scopes = new Set(record.scopes);
    const who = identity(state, record);
    return json({
      sub: who.id,
      ...(scopes.has(PROFILE) ? splitName(who.name) : {}),
      ...(scopes.has(EMAIL) ? { email: who.email, email_verified: true } : {}),
    });
  };
  const tokeninfo = (ctx: RequestContext): Reply => {
    const record = liveToken(state, tokens, bearer(ctx));
    if (!record) {
      throw new OAuthError(400, 'invalid_token', 'Invalid Value');
    }
    const who = identity(state, record);
    const expiresIn = Math.max(0, Math.floor((record.expiresAt - state.now()) / 1000));
    return json({
      azp: record.clientId,
      aud: record.clientId,
      sub: who.id,
      scope: record.scopes.join(' '),
      exp: String(Math.floor(record.expiresAt / 1000)),
      expires_in: String(expiresIn),
      ...(record.scopes.includes(EMAIL) ? { email: who.email, email_verified: 'true' } : {}),
      access_type: record.refreshToken === undefined ? 'online' : 'offline',
    });
  };
  const revoke = (ctx: RequestContext): Reply => {
    const token = ctx.query.get('token') ?? (typeof ctx.body.token === 'string' ? ctx.body.token : undefined);
    if (token === undefined || !tokens.revoke(token)) {
      throw new OAuthError(400, 'invalid_token', 'Token expired or revoked');
    }
    return json({});
  };
  const certs = async (): Promise<Reply> => json(await signer.jwks());
  const discovery = (ctx: RequestContext): Reply =>
    json({
      issuer: 'https://accounts.google.com',
      authorization_endpoint: `${ctx.baseUrl}/o/oauth2/v2/auth`,
      token_endpoint: `${ctx.baseUrl}/token`,
      userinfo_endpoint: `${ctx.baseUrl}/v1/userinfo`,
      revocation_endpoint: `${ctx.baseUrl}/revoke`,
      jwks_uri: `${ctx.baseUrl}/oauth2/v3/certs`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: ['openid', 'email', 'profile'],
      code_challenge_methods_supported: ['plain', 'S256'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:jwt-bearer',
      ],
    });
  const routes: Route[] = [];
  for (const method of ['GET', 'POST']) {
    routes.push(
      { method, pattern: '/oauth2/v2/userinfo', op: 'oauth.userinfo', handler: userinfoV2 },
      { method, pattern: '/oauth2/v1/userinfo', op: 'oauth.userinfo', handler: userinfoV2 },
      { method, pattern: '/v1/userinfo', op: 'oauth.userinfo', handler: userinfoOpenId },
      { method, pattern: '/oauth2/v3/userinfo', op: 'oauth.userinfo', handler: userinfoOpenId },
      { method, pattern: '/tokeninfo', op: 'oauth.tokeninfo', handler: tokeninfo },
      { method, pattern: '/oauth2/v3/tokeninfo', op: 'oauth.tokeninfo', handler: tokeninfo },
      { method, pattern: '/revoke', op: 'oauth.revoke', handler: revoke },
      { method, pattern: '/o/oauth2/revoke', op: 'oauth.revoke', handler: revoke },
    );
  }
  routes.push(
    { method: 'GET', pattern: '/oauth2/v3/certs', op: 'oauth.certs', handler: certs },
    {
      method: 'GET',
      pattern: '/.well-known/openid-configuration',
      op: 'oauth.discovery',
      handler: discovery,
    },
  );
  return routes;
}
