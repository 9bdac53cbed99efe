/**
 * Access tokens for Graph from a connection's refresh token, at
 * `${MICROSOFT_LOGIN_URL}/${MICROSOFT_TENANT}/oauth2/v2.0/token`. A token is reused until 60 s
 * before it expires; refreshing is single-flight. Microsoft rotates refresh tokens: every refresh
 * answers a new one, which is handed to the CredentialStore (which seals it) before the access
 * token is used. `invalid_grant` (revoked, expired, consent withdrawn) marks the connection
 * needs_reauth.
 */
import { CalgateError } from '@calgate/core';
import type { CredentialStore, OAuthCredentials } from '../google/credentials.ts';
import type { AccessTokenSource, TokenClock } from '../google/token-sources.ts';
import { graphFailure, networkCode, permanentGraphError, UpstreamFailure } from './failure.ts';

/** What a read-only connection asks for, and what writing adds (least privilege). */
export const MICROSOFT_READ_SCOPES: readonly string[] = Object.freeze([
  'offline_access',
  'User.Read',
  'Calendars.Read',
]);
export const MICROSOFT_WRITE_SCOPES: readonly string[] = Object.freeze([
  'offline_access',
  'User.Read',
  'Calendars.ReadWrite',
]);

/** Refresh this long before the token's expiry, so it does not lapse in flight. */
export const EXPIRY_SKEW_MS = 60_000;

export interface MicrosoftClientConfig {
  clientId: string;
  clientSecret: string;
  /** `common`, `organizations`, `consumers`, a domain or a tenant id. */
  tenant: string;
  /** MICROSOFT_LOGIN_URL, e.g. `https://login.microsoftonline.com`. */
  loginUrl: string;
}

/** The v2.0 token endpoint of a tenant. */
export function microsoftTokenUrl(config: Pick<MicrosoftClientConfig, 'loginUrl' | 'tenant'>): string {
  return `${config.loginUrl.replace(/\/+$/, '')}/${encodeURIComponent(config.tenant)}/oauth2/v2.0/token`;
}

/** Holds one in-flight promise; callers arriving meanwhile share it. */
function singleFlight<T>(): (task: () => Promise<T>) => Promise<T> {
  let pending: Promise<T> | null = null;
  return (task) => {
    if (pending === null) {
      const running = task().finally(() => {
        pending = null;
      });
      running.catch(() => undefined);
      pending = running;
    }
    return pending;
  };
}

function joined<T>(shared: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    shared.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

export interface RefreshAnswer {
  accessToken: string;
  expiresAt: number;
  refreshToken?: string;
  scope?: string;
}

/**
 * One refresh_token grant. Refusals throw `UpstreamFailure` (the caller decides what a refusal
 * means); an answer without an access token is `upstream_unavailable`.
 */
export async function refreshAccessToken(
  config: MicrosoftClientConfig,
  credentials: OAuthCredentials,
  signal: AbortSignal,
  now: () => number,
): Promise<RefreshAnswer> {
  const form: Record<string, string> = {
    client_id: config.clientId,
    client_secret: config.clientSecret,
    grant_type: 'refresh_token',
    refresh_token: credentials.refreshToken,
  };
  if (credentials.scope) {
    // The answer's scope leaves offline_access out; without it no new refresh token comes back.
    const scopes = credentials.scope.split(/\s+/).filter(Boolean);
    form.scope = (scopes.includes('offline_access') ? scopes : [...scopes, 'offline_access']).join(' ');
  }
  let response: Response;
  try {
    response = await fetch(microsoftTokenUrl(config), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal,
    });
  } catch (error) {
    if (signal.aborted) {
      throw signal.reason;
    }
    throw new UpstreamFailure({ kind: 'network', code: networkCode(error) });
  }
  const text = await response.text();
  let data: unknown = text;
  try {
    data = text === '' ? {} : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the text goes into the message.
  }
  if (!response.ok) {
    throw new UpstreamFailure(
      graphFailure(response.status, data, response.headers.get('retry-after'), now()),
    );
  }
  const body = (data ?? {}) as Record<string, unknown>;
  if (typeof body.access_token !== 'string' || body.access_token === '') {
    throw new CalgateError(
      'upstream_unavailable',
      "Microsoft's token endpoint answered without an access token.",
      {
        retry: true,
      },
    );
  }
  const expiresIn = Number(body.expires_in ?? 3600);
  const answer: RefreshAnswer = {
    accessToken: body.access_token,
    expiresAt: now() + (Number.isFinite(expiresIn) ? expiresIn : 3600) * 1000,
  };
  if (typeof body.refresh_token === 'string' && body.refresh_token !== '') {
    answer.refreshToken = body.refresh_token;
  }
  if (typeof body.scope === 'string' && body.scope !== '') {
    answer.scope = body.scope;
  }
  return answer;
}

export class MicrosoftTokenSource implements AccessTokenSource {
  readonly #config: MicrosoftClientConfig;
  readonly #store: CredentialStore;
  readonly #clock: TokenClock;
  readonly #flight = singleFlight<string>();
  #credentials: OAuthCredentials | null = null;
  /** The access token Graph last refused: not used again even when the store still holds it. */
  #refused: string | undefined;

  constructor(config: MicrosoftClientConfig, store: CredentialStore, clock: TokenClock) {
    this.#config = config;
    this.#store = store;
    this.#clock = clock;
  }

  #usable(credentials: OAuthCredentials | null): string | undefined {
    if (credentials?.accessToken && credentials.accessToken === this.#refused) {
      return undefined;
    }
    if (credentials?.accessToken && credentials.expiresAt !== undefined) {
      return credentials.expiresAt - EXPIRY_SKEW_MS > this.#clock.now() ? credentials.accessToken : undefined;
    }
    return undefined;
  }

  token(signal: AbortSignal): Promise<string> {
    const cached = this.#usable(this.#credentials);
    if (cached !== undefined) {
      return Promise.resolve(cached);
    }
    return joined(
      this.#flight(() => this.#obtain()),
      signal,
    );
  }

  invalidate(token: string): void {
    this.#refused = token;
    if (this.#credentials?.accessToken === token) {
      const { accessToken: _dropped, expiresAt: _expiry, ...rest } = this.#credentials;
      this.#credentials = rest;
    }
  }

  async #obtain(): Promise<string> {
    // Read afresh before every refresh: another process (a gateway, the worker) sharing the
    // connection may have rotated the refresh token, retiring the one this instance held.
    this.#credentials = await this.#store.load();
    const loaded = this.#credentials;
    const usable = this.#usable(loaded);
    if (usable !== undefined) {
      return usable;
    }
    try {
      return await this.#refresh(loaded);
    } catch (error) {
      if (
        !(error instanceof CalgateError && error.code === 'needs_reauth' && error.context.rotated === true)
      ) {
        throw error;
      }
      // Refused because another process rotated the token meanwhile: use what it stored.
      const stored = await this.#store.load();
      this.#credentials = stored;
      const theirs = this.#usable(stored);
      return theirs ?? (await this.#refresh(stored, true));
    }
  }

  async #refresh(loaded: OAuthCredentials, lastTry = false): Promise<string> {
    let answer: RefreshAnswer;
    try {
      answer = await refreshAccessToken(
        this.#config,
        loaded,
        AbortSignal.timeout(this.#clock.requestTimeoutMs),
        this.#clock.now,
      );
    } catch (error) {
      if (error instanceof UpstreamFailure && error.failure.kind === 'http') {
        const failure = error.failure;
        if (failure.status === 429 || failure.status >= 500) {
          throw error;
        }
        const refusal = permanentGraphError(failure, { operation: 'oauth.token' });
        if (refusal.code === 'needs_reauth' && !lastTry) {
          const stored = await this.#store.load().catch(() => null);
          if (stored !== null && stored.refreshToken !== loaded.refreshToken) {
            throw new CalgateError(refusal.code, refusal.message, {
              context: { ...refusal.context, rotated: true },
            });
          }
        }
        if (refusal.code === 'needs_reauth') {
          // A reconnect stores new tokens, which the next call loads.
          this.#credentials = null;
          await this.#store.markNeedsReauth(
            `Microsoft answered ${failure.reason ?? failure.status} to a token refresh`,
          );
        }
        throw refusal;
      }
      if (error instanceof DOMException && error.name === 'TimeoutError') {
        throw new UpstreamFailure({ kind: 'timeout', afterMs: this.#clock.requestTimeoutMs });
      }
      throw error;
    }
    const updated: OAuthCredentials = {
      ...loaded,
      accessToken: answer.accessToken,
      expiresAt: answer.expiresAt,
      ...(answer.refreshToken === undefined ? {} : { refreshToken: answer.refreshToken }),
      ...(answer.scope === undefined ? {} : { scope: answer.scope }),
    };
    // Memory first, so this instance keeps the rotated token even if storing it fails; then
    // the store, before the token is used: the old refresh token may stop working.
    this.#credentials = updated;
    await this.#store.save(updated);
    return answer.accessToken;
  }
}
