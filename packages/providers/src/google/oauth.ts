/**
 * The OAuth side of connecting a Google account: the consent URL (offline access, PKCE S256),
 * the code exchange that yields the refresh token and the account's email, a refresh for
 * headless connects, and revocation on disconnect.
 */
import { CalgateError } from '@calgate/core';
import { CodeChallengeMethod, type Credentials, OAuth2Client } from 'google-auth-library';
import type { GoogleClientConfig } from './credentials.ts';
import { GOOGLE_SCOPES, type OAuthUrls, resolveOAuthUrls } from './endpoints.ts';
import { failureOf, permanentError, UpstreamFailure } from './failure.ts';
import { DEFAULT_RETRY_POLICY, type RetryRuntime, realSleep, withRetry } from './retry.ts';
import { fetchEmail, requestToken, revokeToken, tokenRefusal } from './token-endpoint.ts';

export interface ExchangedCode {
  refreshToken: string;
  accessToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  scope: string;
  email: string;
}

export class GoogleOAuth {
  readonly #config: GoogleClientConfig;
  readonly #urls: OAuthUrls;
  readonly #client: OAuth2Client;
  readonly #runtime: RetryRuntime;

  constructor(config: GoogleClientConfig, options: { timeoutMs?: number } = {}) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_RETRY_POLICY.budgetMs;
    this.#config = config;
    this.#urls = resolveOAuthUrls(config.endpoints);
    this.#client = new OAuth2Client({
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: config.redirectUri,
      endpoints: {
        oauth2AuthBaseUrl: this.#urls.auth,
        oauth2TokenUrl: this.#urls.token,
        oauth2RevokeUrl: this.#urls.revoke,
      },
      transporterOptions: { timeout: timeoutMs, retry: false },
    });
    this.#runtime = {
      policy: { ...DEFAULT_RETRY_POLICY, budgetMs: timeoutMs },
      requestTimeoutMs: timeoutMs,
      now: Date.now,
      sleep: realSleep,
      random: Math.random,
    };
  }

  /**
   * Google's consent page for `scopes` (all of Calgate's by default); `state` and the PKCE
   * challenge come from the caller. include_granted_scopes makes the consent incremental: an
   * upgrade asks only for the scopes it adds, and the token covers those granted before too.
   */
  authorizationUrl(input: {
    state: string;
    codeChallenge: string;
    loginHint?: string;
    scopes?: readonly string[];
  }): string {
    return this.#client.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      include_granted_scopes: true,
      scope: [...(input.scopes ?? GOOGLE_SCOPES)],
      state: input.state,
      code_challenge: input.codeChallenge,
      code_challenge_method: CodeChallengeMethod.S256,
      ...(input.loginHint === undefined ? {} : { login_hint: input.loginHint }),
    });
  }

  /** Exchanges the callback's code (one attempt: a code works once) and reads the account's email. */
  async exchangeCode(input: { code: string; codeVerifier: string }): Promise<ExchangedCode> {
    let tokens: Credentials;
    try {
      ({ tokens } = await this.#client.getToken({ code: input.code, codeVerifier: input.codeVerifier }));
    } catch (error) {
      throw this.#exchangeError(error);
    }
    if (!tokens.access_token) {
      throw new CalgateError(
        'upstream_unavailable',
        'Google answered the code exchange without an access token.',
        {
          retry: true,
        },
      );
    }
    if (!tokens.refresh_token) {
      throw new CalgateError(
        'precondition_failed',
        'Google did not return a refresh token, so Calgate could not keep access to this account. Remove Calgate under "Third-party apps" in the Google account settings and connect again.',
        { context: { operation: 'oauth.token', missing: 'refresh_token' } },
      );
    }
    const accessToken = tokens.access_token;
    const email = await this.#email(accessToken);
    if (email === undefined) {
      throw new CalgateError(
        'precondition_failed',
        "Google did not share the account's email address; connect again and allow the email permission.",
        { context: { operation: 'oauth.userinfo' } },
      );
    }
    return {
      refreshToken: tokens.refresh_token,
      accessToken,
      expiresAt: tokens.expiry_date ?? Date.now() + 3600_000,
      scope: tokens.scope ?? '',
      email,
    };
  }

  /** A new access token for a refresh token (headless connects), with the email when the scopes allow. */
  async refresh(
    refreshToken: string,
  ): Promise<{ accessToken: string; expiresAt: number; email?: string; scope?: string }> {
    const answer = await withRetry(this.#runtime, { operation: 'oauth.token' }, ({ signal }) =>
      requestToken(
        this.#urls.token,
        {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: this.#config.clientId,
          client_secret: this.#config.clientSecret,
        },
        signal,
        this.#runtime.now,
      ).catch((error: unknown) => {
        // Refusals are final; let withRetry see only what retrying can fix.
        if (error instanceof UpstreamFailure && error.failure.kind === 'http') {
          const { status } = error.failure;
          if (status < 500 && status !== 429) {
            throw tokenRefusal(error, 'oauth');
          }
        }
        throw error;
      }),
    );
    let email: string | undefined;
    try {
      email = await this.#email(answer.accessToken);
    } catch (error) {
      // Without the email scope userinfo refuses; the token itself is still good.
      if (
        !(
          error instanceof CalgateError &&
          (error.code === 'needs_reauth' || error.code === 'permission_denied')
        )
      ) {
        throw error;
      }
    }
    return {
      accessToken: answer.accessToken,
      expiresAt: answer.expiresAt,
      ...(email ? { email } : {}),
      ...(answer.scope === undefined ? {} : { scope: answer.scope }),
    };
  }

  /** Revokes a token (Google revokes the whole grant); an already dead token is not an error. */
  async revoke(token: string): Promise<void> {
    await withRetry(this.#runtime, { operation: 'oauth.revoke' }, ({ signal }) =>
      revokeToken(this.#urls.revoke, token, signal, this.#runtime.now),
    );
  }

  #email(accessToken: string): Promise<string | undefined> {
    return withRetry(this.#runtime, { operation: 'oauth.userinfo' }, ({ signal }) =>
      fetchEmail(this.#urls.userinfo, accessToken, signal, this.#runtime.now),
    );
  }

  #exchangeError(error: unknown): Error {
    const failure = failureOf(error, Date.now());
    if (failure === null) {
      return error instanceof Error ? error : new Error(String(error));
    }
    if (failure.kind === 'http' && (failure.reason === 'invalid_grant' || failure.status === 400)) {
      return new CalgateError(
        'invalid_argument',
        `Google refused the authorization code (${failure.reason ?? failure.status}): it is invalid, expired or already used; start the connection again.`,
        { context: { operation: 'oauth.token', ...(failure.reason ? { reason: failure.reason } : {}) } },
      );
    }
    if (failure.kind === 'http' && failure.reason === 'invalid_client') {
      return tokenRefusal(new UpstreamFailure(failure), 'oauth');
    }
    return permanentError(failure, { operation: 'oauth.token' });
  }
}
