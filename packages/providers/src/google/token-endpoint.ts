/**
 * The small HTTP exchanges with Google's OAuth endpoints that Calgate makes itself: the
 * refresh_token and jwt-bearer grants and userinfo. Done with fetch rather than
 * google-auth-library so that they honour our endpoints, our timeouts and our single-flight.
 */
import { CalgateError } from '@calgate/core';
import { httpFailure, networkCode, permanentError, UpstreamFailure } from './failure.ts';

export interface TokenAnswer {
  accessToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  refreshToken?: string;
  scope?: string;
}

async function send(url: string, init: RequestInit, now: () => number): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (init.signal?.aborted) {
      throw init.signal.reason;
    }
    throw new UpstreamFailure({ kind: 'network', code: networkCode(error) });
  }
  const text = await response.text();
  let data: unknown = text;
  try {
    data = text === '' ? {} : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page): keep the text for the message.
  }
  if (!response.ok) {
    throw new UpstreamFailure(
      httpFailure(response.status, data, response.headers.get('retry-after') ?? undefined, now()),
    );
  }
  return data;
}

/** POSTs a form to the token endpoint and reads the access token out of the answer. */
export async function requestToken(
  url: string,
  form: Record<string, string>,
  signal: AbortSignal,
  now: () => number,
): Promise<TokenAnswer> {
  const data = (await send(
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal,
    },
    now,
  )) as Record<string, unknown>;
  if (typeof data.access_token !== 'string' || data.access_token === '') {
    throw new CalgateError(
      'upstream_unavailable',
      "Google's token endpoint answered without an access token.",
      {
        retry: true,
      },
    );
  }
  const expiresIn = typeof data.expires_in === 'number' ? data.expires_in : Number(data.expires_in ?? 3600);
  const answer: TokenAnswer = {
    accessToken: data.access_token,
    expiresAt: now() + (Number.isFinite(expiresIn) ? expiresIn : 3600) * 1000,
  };
  if (typeof data.refresh_token === 'string' && data.refresh_token !== '') {
    answer.refreshToken = data.refresh_token;
  }
  if (typeof data.scope === 'string') {
    answer.scope = data.scope;
  }
  return answer;
}

/** The account's email from the OpenID userinfo endpoint (needs the `email` scope). */
export async function fetchEmail(
  url: string,
  accessToken: string,
  signal: AbortSignal,
  now: () => number,
): Promise<string | undefined> {
  const data = (await send(
    url,
    { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, signal },
    now,
  )) as Record<string, unknown>;
  return typeof data.email === 'string' ? data.email : undefined;
}

/**
 * The CalgateError for a token-endpoint refusal that retrying cannot fix. `invalid_grant`
 * (revoked, expired or foreign refresh token) means the account must be connected again.
 */
export function tokenRefusal(error: UpstreamFailure, who: 'oauth' | 'service_account'): CalgateError {
  const failure = error.failure;
  const reason = failure.kind === 'http' ? failure.reason : undefined;
  const context = { operation: 'oauth.token', ...(reason === undefined ? {} : { reason }) };
  if (who === 'service_account' && (reason === 'invalid_grant' || reason === 'unauthorized_client')) {
    return new CalgateError(
      'needs_reauth',
      `Google refused the service account's key (${reason}); check that the key is current and the service account exists.`,
      { context },
    );
  }
  if (reason === 'invalid_grant' || reason === 'unauthorized_client') {
    return new CalgateError(
      'needs_reauth',
      `Google no longer accepts this account's authorization (${reason}); reconnect this account.`,
      { context },
    );
  }
  if (reason === 'invalid_client') {
    return new CalgateError(
      'unavailable',
      "Google rejected Calgate's OAuth client credentials (invalid_client); check the Google OAuth client configuration.",
      { context },
    );
  }
  return permanentError(failure, { operation: 'oauth.token' });
}

/** Revokes a refresh or access token. A token Google no longer knows counts as revoked. */
export async function revokeToken(
  url: string,
  token: string,
  signal: AbortSignal,
  now: () => number,
): Promise<void> {
  try {
    await send(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
        signal,
      },
      now,
    );
  } catch (error) {
    const failure = error instanceof UpstreamFailure ? error.failure : undefined;
    if (failure?.kind === 'http' && failure.status === 400 && failure.reason === 'invalid_token') {
      return;
    }
    throw error;
  }
}
