/**
 * The Microsoft identity platform's v2.0 endpoints: `/{tenant}/oauth2/v2.0/authorize` (consent
 * is assumed: it redirects at once with a code for `login_hint`, or the only user) and
 * `/{tenant}/oauth2/v2.0/token` (authorization_code with PKCE, refresh_token). Every refresh
 * returns a new refresh token and retires the one used; revoked or unknown ones get invalid_grant.
 */
import { createHash, randomBytes } from 'node:crypto';
import { identityErrors } from './errors.ts';
import { json, type Reply, type RequestContext, type Route } from './http.ts';
import type { MicrosoftState, TokenRecord, UserRecord } from './state.ts';

export const ACCESS_TOKEN_TTL_S = 3599;
const CODE_TTL_MS = 10 * 60_000;

const GRAPH_PREFIX = 'https://graph.microsoft.com/';
const OIDC = new Set(['openid', 'profile', 'email', 'offline_access']);
const ALL_SCOPES = ['Calendars.ReadWrite', 'MailboxSettings.Read', 'User.Read'];

/** Scopes as granted: Graph's prefix dropped, `.default` expanded, OIDC scopes kept apart. */
export function normalizeScopes(scope: string): string[] {
  const out = new Set<string>();
  for (const raw of scope.split(/\s+/).filter(Boolean)) {
    const s = raw.startsWith(GRAPH_PREFIX) ? raw.slice(GRAPH_PREFIX.length) : raw;
    if (s === '.default') {
      for (const d of ALL_SCOPES) {
        out.add(d);
      }
    } else {
      out.add(s);
    }
  }
  return [...out];
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A JWT-shaped opaque token: clients must not read it, but it looks like what they get. */
function accessTokenText(user: UserRecord, expiresAt: number): string {
  return `${b64({ typ: 'JWT', alg: 'RS256', kid: 'emulator' })}.${b64({
    aud: '00000003-0000-0000-c000-000000000000',
    upn: user.userPrincipalName,
    exp: Math.floor(expiresAt / 1000),
    nonce: randomBytes(8).toString('hex'),
  })}.${randomBytes(64).toString('base64url')}`;
}

export function issueTokens(
  state: MicrosoftState,
  user: UserRecord,
  clientId: string,
  scopes: string[],
): { access: TokenRecord; refresh?: TokenRecord } {
  const now = state.now();
  const mailbox = mailboxKey(user);
  const expiresAt = now + ACCESS_TOKEN_TTL_S * 1000;
  const granted = scopes.filter((s) => s !== 'offline_access');
  const access: TokenRecord = {
    token: accessTokenText(user, expiresAt),
    email: mailbox,
    clientId,
    scopes: granted,
    expiresAt,
  };
  state.access.set(access.token, access);
  if (!scopes.includes('offline_access')) {
    return { access };
  }
  const refresh: TokenRecord = {
    token: `1.A${randomBytes(180).toString('base64url')}`,
    email: mailbox,
    clientId,
    scopes,
    expiresAt: now + 90 * 86_400_000,
  };
  state.refresh.set(refresh.token, refresh);
  return { access, refresh };
}

export const mailboxKey = (user: UserRecord) => (user.mail ?? user.userPrincipalName).toLowerCase();

function tokenReply(tokens: { access: TokenRecord; refresh?: TokenRecord }): Reply {
  const scope = tokens.access.scopes;
  return json(
    {
      token_type: 'Bearer',
      scope: scope.join(' '),
      expires_in: ACCESS_TOKEN_TTL_S,
      ext_expires_in: ACCESS_TOKEN_TTL_S,
      access_token: tokens.access.token,
      ...(tokens.refresh ? { refresh_token: tokens.refresh.token } : {}),
    },
    200,
    { 'cache-control': 'no-store, no-cache', pragma: 'no-cache' },
  );
}

function checkTenant(state: MicrosoftState, tenant: string): void {
  if (!['common', 'organizations', 'consumers', state.tenantId].includes(tenant) && !tenant.includes('.')) {
    throw identityErrors.tenant(tenant);
  }
}

function checkClient(state: MicrosoftState, ctx: RequestContext, clientId: string) {
  const client = state.clients.get(clientId);
  if (!client) {
    throw identityErrors.unknownClient(clientId);
  }
  let secret = typeof ctx.body.client_secret === 'string' ? ctx.body.client_secret : undefined;
  const basic = /^Basic\s+(\S+)$/i.exec(String(ctx.headers.authorization ?? ''));
  if (basic) {
    const [, pass] = Buffer.from(basic[1] as string, 'base64')
      .toString('utf8')
      .split(':');
    secret = decodeURIComponent(pass ?? '');
  }
  if (client.clientSecret !== undefined && secret !== client.clientSecret) {
    throw identityErrors.badSecret(clientId);
  }
  return client;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export function identityRoutes(state: MicrosoftState): Route[] {
  const base = '/:tenant/oauth2/v2.0';
  return [
    {
      method: 'GET',
      pattern: `${base}/authorize`,
      op: 'oauth.authorize',
      handler(ctx) {
        checkTenant(state, ctx.params.tenant ?? '');
        const q = ctx.query;
        const clientId = q.get('client_id') ?? '';
        const client = state.clients.get(clientId);
        if (!client) {
          throw identityErrors.unknownClient(clientId);
        }
        const redirectUri = q.get('redirect_uri') ?? '';
        if (!URL.canParse(redirectUri)) {
          throw identityErrors.missing('redirect_uri');
        }
        if (client.redirectUris.length > 0 && !client.redirectUris.includes(redirectUri)) {
          throw identityErrors.redirectMismatch();
        }
        const hint = q.get('login_hint');
        const users = [...state.users.values()];
        const user = hint ? state.user(hint) : users.length === 1 ? users[0] : undefined;
        const target = new URL(redirectUri);
        if (!user) {
          target.searchParams.set('error', 'login_required');
          target.searchParams.set(
            'error_description',
            'AADSTS50058: A silent sign-in request was sent but no user is signed in.',
          );
        } else {
          const code = `0.A${randomBytes(120).toString('base64url')}`;
          state.codes.set(code, {
            code,
            clientId,
            email: mailboxKey(user),
            scopes: normalizeScopes(q.get('scope') ?? ''),
            redirectUri,
            ...(q.get('code_challenge') ? { challenge: q.get('code_challenge') as string } : {}),
            challengeMethod: q.get('code_challenge_method') ?? 'plain',
            expiresAt: state.now() + CODE_TTL_MS,
            used: false,
          });
          target.searchParams.set('code', code);
        }
        const st = q.get('state');
        if (st !== null) {
          target.searchParams.set('state', st);
        }
        return { status: 302, headers: { location: target.toString() } };
      },
    },
    {
      method: 'POST',
      pattern: `${base}/token`,
      op: 'oauth.token',
      handler(ctx) {
        checkTenant(state, ctx.params.tenant ?? '');
        const b = ctx.body;
        const str = (name: string) => (typeof b[name] === 'string' ? (b[name] as string) : undefined);
        const clientId = str('client_id');
        if (clientId === undefined) {
          throw identityErrors.missing('client_id');
        }
        const grantType = str('grant_type');
        if (grantType === undefined) {
          throw identityErrors.missing('grant_type');
        }
        checkClient(state, ctx, clientId);
        if (grantType === 'authorization_code') {
          const code = state.codes.get(str('code') ?? '');
          if (!code || code.clientId !== clientId || code.expiresAt <= state.now()) {
            throw identityErrors.badCode();
          }
          if (code.used) {
            throw identityErrors.codeRedeemed();
          }
          if ((str('redirect_uri') ?? '') !== code.redirectUri) {
            throw identityErrors.redirectMismatch();
          }
          if (code.challenge !== undefined) {
            const verifier = str('code_verifier') ?? '';
            const expected = code.challengeMethod === 'S256' ? s256(verifier) : verifier;
            if (verifier === '' || expected !== code.challenge) {
              throw identityErrors.pkce();
            }
          }
          code.used = true;
          const user = state.user(code.email);
          if (!user) {
            throw identityErrors.badCode();
          }
          return tokenReply(issueTokens(state, user, clientId, code.scopes));
        }
        if (grantType === 'refresh_token') {
          const given = str('refresh_token');
          if (given === undefined) {
            throw identityErrors.missing('refresh_token');
          }
          const record = state.refresh.get(given);
          const user = record ? state.user(record.email) : undefined;
          if (!record || !user || record.clientId !== clientId || record.expiresAt <= state.now()) {
            throw identityErrors.refreshInvalid();
          }
          // Rotation: the one used is retired, a new one comes back.
          state.refresh.delete(given);
          const asked = str('scope');
          const scopes = asked
            ? normalizeScopes(`${asked} offline_access`).filter(
                (s) => record.scopes.includes(s) || OIDC.has(s),
              )
            : record.scopes;
          return tokenReply(
            issueTokens(
              state,
              user,
              clientId,
              scopes.includes('offline_access') ? scopes : [...scopes, 'offline_access'],
            ),
          );
        }
        throw identityErrors.grantType(grantType);
      },
    },
  ];
}
