/**
 * The Microsoft identity platform's authorization-code flow with PKCE (S256), as the dashboard's
 * "Connect Microsoft" uses it: the authorize URL, and the code exchanged for tokens at
 * `${MICROSOFT_LOGIN_URL}/${MICROSOFT_TENANT}/oauth2/v2.0/token`. Refusals are said plainly with
 * Microsoft's own error code and the first line of its description (AADSTS texts end in trace ids);
 * codes, verifiers and tokens never enter messages.
 */
import { CalgateError } from '@calgate/core';
import {
  MICROSOFT_READ_SCOPES,
  MICROSOFT_WRITE_SCOPES,
  type MicrosoftClientConfig,
  microsoftTokenUrl,
} from '@calgate/providers';

export type MicrosoftAccessLevel = 'read' | 'write';

/** Least privilege: Calendars.Read for read-only connections, Calendars.ReadWrite to write. */
export function microsoftScopesFor(level: MicrosoftAccessLevel): readonly string[] {
  return level === 'write' ? MICROSOFT_WRITE_SCOPES : MICROSOFT_READ_SCOPES;
}

/** What a code (or refresh) exchange answered: the credentials Calgate seals. */
export interface MicrosoftTokens {
  refreshToken: string;
  accessToken: string;
  expiresAt: number;
  scope?: string;
}

/** Where the authorize and token endpoints of the configured tenant are. */
function authorizeUrl(client: Pick<MicrosoftClientConfig, 'loginUrl' | 'tenant'>): string {
  return `${client.loginUrl.replace(/\/+$/, '')}/${encodeURIComponent(client.tenant)}/oauth2/v2.0/authorize`;
}

/** Microsoft's refusal as one sentence: `invalid_grant: AADSTS70008: The provided authorization code … expired.` */
export function tokenRefusal(status: number, body: unknown): CalgateError {
  const data = (body ?? {}) as Record<string, unknown>;
  const code = typeof data.error === 'string' ? data.error : `HTTP ${status}`;
  const description =
    typeof data.error_description === 'string' ? (data.error_description.split(/\r?\n/)[0] ?? '') : '';
  const said = description === '' ? code : `${code}: ${description.replace(/\s*\.?\s*$/, '')}`;
  if (status === 429 || status >= 500) {
    return new CalgateError('upstream_unavailable', `Microsoft's sign-in service is unavailable (${said}).`, {
      retry: true,
      context: { status, reason: code },
    });
  }
  if (code === 'invalid_client' || code === 'unauthorized_client') {
    return new CalgateError(
      'unavailable',
      `Microsoft rejected Calgate's app registration (${said}); check MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET, MICROSOFT_TENANT and the redirect URI registered in Azure.`,
      { context: { status, reason: code } },
    );
  }
  return new CalgateError(
    'invalid_argument',
    `Microsoft refused the sign-in (${said}). Nothing changed; connect again.`,
    {
      context: { status, reason: code },
    },
  );
}

export class MicrosoftOAuth {
  readonly #client: MicrosoftClientConfig;
  readonly #now: () => number;

  constructor(client: MicrosoftClientConfig, now: () => number = Date.now) {
    this.#client = client;
    this.#now = now;
  }

  authorizationUrl(options: {
    redirectUri: string;
    state: string;
    codeChallenge: string;
    scopes: readonly string[];
    loginHint?: string;
  }): string {
    const url = new URL(authorizeUrl(this.#client));
    url.searchParams.set('client_id', this.#client.clientId);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('redirect_uri', options.redirectUri);
    url.searchParams.set('response_mode', 'query');
    url.searchParams.set('scope', options.scopes.join(' '));
    url.searchParams.set('state', options.state);
    url.searchParams.set('code_challenge', options.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    if (options.loginHint === undefined) {
      // Lets the person pick which account to connect rather than the one signed in.
      url.searchParams.set('prompt', 'select_account');
    } else {
      url.searchParams.set('login_hint', options.loginHint);
    }
    return url.toString();
  }

  /** Redeems an authorization code with its PKCE verifier (a code works once). */
  async exchangeCode(options: {
    code: string;
    codeVerifier: string;
    redirectUri: string;
    scopes: readonly string[];
  }): Promise<MicrosoftTokens> {
    const form = new URLSearchParams({
      client_id: this.#client.clientId,
      client_secret: this.#client.clientSecret,
      grant_type: 'authorization_code',
      code: options.code,
      redirect_uri: options.redirectUri,
      code_verifier: options.codeVerifier,
      scope: options.scopes.join(' '),
    });
    let response: Response;
    try {
      response = await fetch(microsoftTokenUrl(this.#client), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(15_000),
      });
    } catch {
      throw new CalgateError(
        'upstream_unavailable',
        "Microsoft's sign-in service could not be reached; nothing changed, try again.",
        { retry: true },
      );
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      body = {};
    }
    if (!response.ok) {
      throw tokenRefusal(response.status, body);
    }
    const answer = body as Record<string, unknown>;
    if (typeof answer.access_token !== 'string' || answer.access_token === '') {
      throw new CalgateError(
        'upstream_unavailable',
        "Microsoft's token endpoint answered without an access token; nothing changed, try again.",
      );
    }
    if (typeof answer.refresh_token !== 'string' || answer.refresh_token === '') {
      throw new CalgateError(
        'invalid_argument',
        'Microsoft answered without a refresh token (offline_access was not granted), so Calgate could not keep the account connected. Connect again and accept every permission asked.',
      );
    }
    const expiresIn = Number(answer.expires_in ?? 3600);
    return {
      refreshToken: answer.refresh_token,
      accessToken: answer.access_token,
      expiresAt: this.#now() + (Number.isFinite(expiresIn) ? expiresIn : 3600) * 1000,
      ...(typeof answer.scope === 'string' && answer.scope !== '' ? { scope: answer.scope } : {}),
    };
  }
}
