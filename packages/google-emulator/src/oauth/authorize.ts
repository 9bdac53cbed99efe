/**
 * The authorization endpoint (`/o/oauth2/v2/auth`, what OAuth2Client.generateAuthUrl builds):
 * checks the client and redirect URI, shows a consent page with the seeded accounts, and on
 * approval redirects back with a code (PKCE challenge, offline access and nonce remembered).
 */
import { html, type Reply, type RequestContext, type Route, redirect } from '../http.ts';
import type { EmulatorState, OAuthClientRecord } from '../state.ts';
import { CONSENT_PATH, consentPage, errorPage } from './consent-page.ts';
import type { TokenStore } from './tokens.ts';

const PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'access_type',
  'prompt',
  'code_challenge',
  'code_challenge_method',
  'login_hint',
  'nonce',
  'include_granted_scopes',
];

const SCOPE_ALIASES: Record<string, string> = {
  email: 'https://www.googleapis.com/auth/userinfo.email',
  profile: 'https://www.googleapis.com/auth/userinfo.profile',
};

export function normalizeScopes(scope: string): string[] {
  return [
    ...new Set(
      scope
        .split(/[\s+]+/)
        .filter(Boolean)
        .map((s) => SCOPE_ALIASES[s] ?? s),
    ),
  ];
}

type Checked = { client: OAuthClientRecord; params: Record<string, string> } | { reply: Reply };

function check(state: EmulatorState, source: (name: string) => string | undefined): Checked {
  const params: Record<string, string> = {};
  for (const name of PARAMS) {
    const value = source(name);
    if (value !== undefined && value !== '') {
      params[name] = value;
    }
  }
  const client = params.client_id ? state.clients.get(params.client_id) : undefined;
  if (!client) {
    return { reply: html(errorPage(401, 'invalid_client', 'The OAuth client was not found.'), 401) };
  }
  if (!params.redirect_uri || !client.redirectUris.includes(params.redirect_uri)) {
    return {
      reply: html(
        errorPage(
          400,
          'redirect_uri_mismatch',
          `You can't sign in because this app sent an invalid request.`,
        ),
        400,
      ),
    };
  }
  if (!params.scope) {
    return { reply: html(errorPage(400, 'invalid_request', 'Missing required parameter: scope'), 400) };
  }
  if (params.response_type !== 'code') {
    return { reply: redirectWith(params.redirect_uri, { error: 'unsupported_response_type' }, params.state) };
  }
  const method = params.code_challenge_method;
  if (
    method !== undefined &&
    (params.code_challenge === undefined || (method !== 'S256' && method !== 'plain'))
  ) {
    return { reply: html(errorPage(400, 'invalid_request', 'Invalid code_challenge_method.'), 400) };
  }
  if (params.code_challenge !== undefined && !/^[A-Za-z0-9._~-]{43,128}$/.test(params.code_challenge)) {
    return { reply: html(errorPage(400, 'invalid_request', 'Invalid code_challenge.'), 400) };
  }
  return { client, params };
}

function redirectWith(redirectUri: string, values: Record<string, string>, state: string | undefined): Reply {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) {
    url.searchParams.set(k, v);
  }
  if (state !== undefined) {
    url.searchParams.set('state', state);
  }
  return redirect(url.toString());
}

export function authorizeRoutes(state: EmulatorState, tokens: TokenStore): Route[] {
  const show = (ctx: RequestContext): Reply => {
    const checked = check(state, (n) => ctx.query.get(n) ?? undefined);
    if ('reply' in checked) {
      return checked.reply;
    }
    const scopes = normalizeScopes(checked.params.scope ?? '');
    const hint = checked.params.login_hint;
    const already =
      hint !== undefined && checked.params.include_granted_scopes === 'true'
        ? tokens.grantedScopes(checked.client.clientId, hint)
        : [];
    return html(consentPage(checked.client, [...state.accounts.values()], checked.params, scopes, already));
  };
  const decide = (ctx: RequestContext): Reply => {
    const field = (n: string) => (typeof ctx.body[n] === 'string' ? (ctx.body[n] as string) : undefined);
    const checked = check(state, field);
    if ('reply' in checked) {
      return checked.reply;
    }
    const { client, params } = checked;
    const redirectUri = params.redirect_uri as string;
    const account = state.accounts.get(field('account') ?? '');
    if (field('decision') !== 'approve' || !account) {
      return redirectWith(redirectUri, { error: 'access_denied' }, params.state);
    }
    const requested = normalizeScopes(params.scope ?? '');
    tokens.recordGrant(client.clientId, account.email, requested);
    // Incremental authorization: the new token also covers what the account granted before.
    const scopes =
      params.include_granted_scopes === 'true'
        ? tokens.grantedScopes(client.clientId, account.email)
        : requested;
    const record = tokens.issueCode(
      {
        clientId: client.clientId,
        redirectUri,
        email: account.email,
        scopes,
        offline: params.access_type === 'offline',
        forceConsent: (params.prompt ?? '').split(/\s+/).includes('consent'),
        ...(params.code_challenge === undefined
          ? {}
          : {
              codeChallenge: params.code_challenge,
              codeChallengeMethod: params.code_challenge_method === 'S256' ? 'S256' : 'plain',
            }),
        ...(params.nonce === undefined ? {} : { nonce: params.nonce }),
      },
      state.now(),
    );
    return redirectWith(
      redirectUri,
      { code: record.code, scope: scopes.join(' '), authuser: '0', prompt: 'consent' },
      params.state,
    );
  };
  return [
    { method: 'GET', pattern: '/o/oauth2/v2/auth', op: 'oauth.authorize', handler: show },
    { method: 'GET', pattern: '/o/oauth2/auth', op: 'oauth.authorize', handler: show },
    { method: 'POST', pattern: CONSENT_PATH, op: 'oauth.consent', handler: decide },
  ];
}
