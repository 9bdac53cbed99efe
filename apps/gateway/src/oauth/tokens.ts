import { randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

/** The scopes Calgate's tokens carry: what the person allowed, on top of per-calendar grants. */
export const SCOPES = ['calendars:read', 'calendars:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** Access tokens live at most this long; a client refreshes for more. */
export const MAX_ACCESS_TOKEN_TTL_SECONDS = 3600;

const ACCESS_TYPE = 'at+jwt';
const REQUEST_TYPE = 'calgate-authz-request+jwt';
const ALGORITHM = 'HS256';

/** Who an access token speaks for: a connection (an api_keys row of kind 'oauth'). */
export interface AccessTokenClaims {
  tenantId: string;
  keyId: string;
  clientId: string;
  scope: string;
}

export type TokenCheck =
  | { ok: true; claims: AccessTokenClaims }
  | { ok: false; reason: 'token_invalid' | 'token_expired' };

/** Three base64url segments: the shape of a JWS in compact form. */
export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
}

/**
 * Access tokens for /api/mcp: JWTs (RFC 9068 shape) signed with a key derived from
 * ENCRYPTION_KEY, so every gateway of an install verifies them without a database round trip,
 * and bound to one audience: the MCP URL. A token minted for another resource (or by another
 * install) fails verification. They say who the caller is, not what it may do: every call still
 * loads the connection's grants, so a revoked connection stops within the key cache's lifetime
 * even while its tokens have not expired.
 */
export class AccessTokens {
  readonly #key: Uint8Array;
  readonly #issuer: string;
  readonly #audience: string;
  readonly #ttlSeconds: number;
  readonly #now: () => number;

  constructor(options: {
    key: Uint8Array;
    issuer: string;
    audience: string;
    ttlSeconds?: number;
    now?: () => number;
  }) {
    this.#key = options.key;
    this.#issuer = options.issuer;
    this.#audience = options.audience;
    this.#ttlSeconds = Math.min(
      options.ttlSeconds ?? MAX_ACCESS_TOKEN_TTL_SECONDS,
      MAX_ACCESS_TOKEN_TTL_SECONDS,
    );
    this.#now = options.now ?? Date.now;
  }

  get ttlSeconds(): number {
    return this.#ttlSeconds;
  }

  get audience(): string {
    return this.#audience;
  }

  async issue(claims: AccessTokenClaims): Promise<string> {
    const now = Math.floor(this.#now() / 1000);
    return new SignJWT({ tid: claims.tenantId, client_id: claims.clientId, scope: claims.scope })
      .setProtectedHeader({ alg: ALGORITHM, typ: ACCESS_TYPE })
      .setIssuer(this.#issuer)
      .setAudience(this.#audience)
      .setSubject(claims.keyId)
      .setIssuedAt(now)
      .setExpirationTime(now + this.#ttlSeconds)
      .setJti(randomUUID())
      .sign(this.#key);
  }

  async verify(token: string): Promise<TokenCheck> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: [ALGORITHM],
        typ: ACCESS_TYPE,
        issuer: this.#issuer,
        audience: this.#audience,
        currentDate: new Date(this.#now()),
        requiredClaims: ['sub', 'exp', 'tid', 'client_id'],
      });
      const { sub, tid, client_id: clientId, scope } = payload;
      if (typeof sub !== 'string' || typeof tid !== 'string' || typeof clientId !== 'string') {
        return { ok: false, reason: 'token_invalid' };
      }
      return {
        ok: true,
        claims: { tenantId: tid, keyId: sub, clientId, scope: typeof scope === 'string' ? scope : '' },
      };
    } catch (error) {
      return { ok: false, reason: error instanceof errors.JWTExpired ? 'token_expired' : 'token_invalid' };
    }
  }
}

/** An authorization request that passed /oauth/authorize's checks, waiting for consent. */
export interface PendingAuthorization {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  /** The scopes the client asked for (all of SCOPES when it named none). */
  scopes: Scope[];
  state: string | undefined;
}

/**
 * Pending authorization requests travel to the consent page and back as a signed, short-lived
 * token rather than a row: any gateway can answer the consent page, nothing needs cleaning up,
 * and a request cannot be altered on the way (its redirect URI was checked against the client).
 */
export class AuthorizationRequests {
  readonly #key: Uint8Array;
  readonly #issuer: string;
  readonly #ttlSeconds: number;
  readonly #now: () => number;

  constructor(options: { key: Uint8Array; issuer: string; ttlSeconds?: number; now?: () => number }) {
    this.#key = options.key;
    this.#issuer = options.issuer;
    this.#ttlSeconds = options.ttlSeconds ?? 600;
    this.#now = options.now ?? Date.now;
  }

  async seal(request: PendingAuthorization): Promise<string> {
    const now = Math.floor(this.#now() / 1000);
    return new SignJWT({ req: request })
      .setProtectedHeader({ alg: ALGORITHM, typ: REQUEST_TYPE })
      .setIssuer(this.#issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + this.#ttlSeconds)
      .sign(this.#key);
  }

  /** The request, or why it cannot be used: 'expired' or 'invalid'. */
  async open(token: string): Promise<PendingAuthorization | 'expired' | 'invalid'> {
    if (token.length > 8192 || !looksLikeJwt(token)) {
      return 'invalid';
    }
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: [ALGORITHM],
        typ: REQUEST_TYPE,
        issuer: this.#issuer,
        currentDate: new Date(this.#now()),
      });
      return payload.req as PendingAuthorization;
    } catch (error) {
      return error instanceof errors.JWTExpired ? 'expired' : 'invalid';
    }
  }
}
