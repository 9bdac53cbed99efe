/**
 * Access tokens for API calls, one source per provider instance. A token is reused until 60 s
 * before it expires; getting a new one is single-flight, so concurrent calls on one connection
 * refresh once. OAuth refreshes are persisted through the CredentialStore; a service account
 * signs an RS256 JWT-bearer assertion with its key.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import { SignJWT } from 'jose';
import type {
  CredentialStore,
  GoogleAuth,
  GoogleClientConfig,
  OAuthCredentials,
  ServiceAccountKey,
} from './credentials.ts';
import { type GoogleEndpoints, resolveOAuthUrls, SERVICE_ACCOUNT_SCOPES } from './endpoints.ts';
import { UpstreamFailure } from './failure.ts';
import { requestToken, tokenRefusal } from './token-endpoint.ts';

/** Refresh this long before Google's expiry, so a token does not lapse in flight. */
export const EXPIRY_SKEW_MS = 60_000;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface AccessTokenSource {
  token(signal: AbortSignal): Promise<string>;
  /** Forget `token` (Google answered 401 with it) so that the next call gets a new one. */
  invalidate(token: string): void;
}

export interface TokenClock {
  now: () => number;
  /** Bound on one token-endpoint request. */
  requestTimeoutMs: number;
}

/**
 * The token source for a connection's auth: an OAuth account's (refreshed and stored back, a
 * refused refresh marking the account needs_reauth) or a service account's (JWT bearer). The
 * provider and the mirror's sync jobs both get their tokens here, so they behave alike.
 */
export function accessTokenSource(auth: GoogleAuth, clock: TokenClock): AccessTokenSource {
  return auth.kind === 'oauth'
    ? new OAuthTokenSource(auth.client, auth.credentials, clock)
    : new ServiceAccountTokenSource(auth.key, auth.endpoints, clock);
}

/** Waits for a shared promise, but lets this caller stop waiting when its own attempt ends. */
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

/** Holds one in-flight promise; callers arriving meanwhile share it. */
class SingleFlight<T> {
  #pending: Promise<T> | null = null;

  run(task: () => Promise<T>): Promise<T> {
    if (this.#pending === null) {
      const pending = task().finally(() => {
        this.#pending = null;
      });
      // A caller that stopped waiting must not leave the rejection unhandled.
      pending.catch(() => undefined);
      this.#pending = pending;
    }
    return this.#pending;
  }
}

export class OAuthTokenSource implements AccessTokenSource {
  readonly #client: GoogleClientConfig;
  readonly #store: CredentialStore;
  readonly #clock: TokenClock;
  readonly #flight = new SingleFlight<string>();
  #credentials: OAuthCredentials | null = null;

  constructor(client: GoogleClientConfig, store: CredentialStore, clock: TokenClock) {
    this.#client = client;
    this.#store = store;
    this.#clock = clock;
  }

  #usable(credentials: OAuthCredentials | null): string | undefined {
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
      this.#flight.run(() => this.#obtain()),
      signal,
    );
  }

  invalidate(token: string): void {
    if (this.#credentials?.accessToken === token) {
      const { accessToken: _dropped, expiresAt: _expiry, ...rest } = this.#credentials;
      this.#credentials = rest;
    }
  }

  async #obtain(): Promise<string> {
    if (this.#credentials === null) {
      this.#credentials = await this.#store.load();
    }
    const loaded = this.#credentials;
    const usable = this.#usable(loaded);
    if (usable !== undefined) {
      return usable;
    }
    let answer: Awaited<ReturnType<typeof requestToken>>;
    try {
      answer = await requestToken(
        resolveOAuthUrls(this.#client.endpoints).token,
        {
          grant_type: 'refresh_token',
          refresh_token: loaded.refreshToken,
          client_id: this.#client.clientId,
          client_secret: this.#client.clientSecret,
        },
        AbortSignal.timeout(this.#clock.requestTimeoutMs),
        this.#clock.now,
      );
    } catch (error) {
      if (error instanceof UpstreamFailure && error.failure.kind === 'http' && error.failure.status < 500) {
        if (error.failure.status === 429) {
          throw error;
        }
        const refusal = tokenRefusal(error, 'oauth');
        if (refusal.code === 'needs_reauth') {
          // Drop what we hold: a reconnect stores new tokens, which the next call loads.
          this.#credentials = null;
          await this.#store.markNeedsReauth(
            `Google answered ${String(refusal.context.reason)} to a token refresh`,
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
    // Memory first: if persisting fails, this instance still uses the fresh token.
    this.#credentials = updated;
    await this.#store.save(updated);
    return answer.accessToken;
  }
}

export class ServiceAccountTokenSource implements AccessTokenSource {
  readonly #key: ServiceAccountKey;
  readonly #tokenUrl: string;
  readonly #clock: TokenClock;
  readonly #flight = new SingleFlight<string>();
  #signingKey: KeyObject | null = null;
  #cached: { token: string; expiresAt: number } | null = null;

  constructor(key: ServiceAccountKey, endpoints: GoogleEndpoints, clock: TokenClock) {
    this.#key = key;
    this.#tokenUrl = resolveOAuthUrls(endpoints).token;
    this.#clock = clock;
  }

  token(signal: AbortSignal): Promise<string> {
    const cached = this.#cached;
    if (cached && cached.expiresAt - EXPIRY_SKEW_MS > this.#clock.now()) {
      return Promise.resolve(cached.token);
    }
    return joined(
      this.#flight.run(() => this.#obtain()),
      signal,
    );
  }

  invalidate(token: string): void {
    if (this.#cached?.token === token) {
      this.#cached = null;
    }
  }

  #privateKey(): KeyObject {
    if (this.#signingKey === null) {
      try {
        this.#signingKey = createPrivateKey(this.#key.private_key);
      } catch {
        throw new CalgateError(
          'invalid_argument',
          "The service account's private_key is not a readable PEM key.",
        );
      }
    }
    return this.#signingKey;
  }

  async #obtain(): Promise<string> {
    const iat = Math.floor(this.#clock.now() / 1000);
    const assertion = await new SignJWT({ scope: SERVICE_ACCOUNT_SCOPES.join(' ') })
      .setProtectedHeader({
        alg: 'RS256',
        typ: 'JWT',
        ...(this.#key.private_key_id ? { kid: this.#key.private_key_id } : {}),
      })
      .setIssuer(this.#key.client_email)
      .setAudience(this.#tokenUrl)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(this.#privateKey());
    try {
      const answer = await requestToken(
        this.#tokenUrl,
        { grant_type: JWT_BEARER, assertion },
        AbortSignal.timeout(this.#clock.requestTimeoutMs),
        this.#clock.now,
      );
      this.#cached = { token: answer.accessToken, expiresAt: answer.expiresAt };
      return answer.accessToken;
    } catch (error) {
      if (error instanceof UpstreamFailure && error.failure.kind === 'http' && error.failure.status < 500) {
        if (error.failure.status === 429) {
          throw error;
        }
        throw tokenRefusal(error, 'service_account');
      }
      if (error instanceof DOMException && error.name === 'TimeoutError') {
        throw new UpstreamFailure({ kind: 'timeout', afterMs: this.#clock.requestTimeoutMs });
      }
      throw error;
    }
  }
}
