/**
 * Authorization codes, access tokens and refresh tokens. Token strings look like Google's
 * (`4/…` codes, `ya29.…` access tokens, `1//…` refresh tokens) but carry no meaning: every
 * lookup goes through this store.
 */
import { randomBytes } from 'node:crypto';

export type PrincipalKind = 'user' | 'service';

export interface Grant {
  /** The account the token acts for (a user, or a service account's own email). */
  email: string;
  kind: PrincipalKind;
  clientId: string;
  scopes: string[];
}

export interface AccessTokenRecord extends Grant {
  token: string;
  issuedAt: number;
  expiresAt: number;
  refreshToken?: string;
  revoked: boolean;
}

export interface RefreshTokenRecord extends Grant {
  token: string;
  issuedAt: number;
  /** Set by the admin API to simulate Google expiring an unused or testing-mode token. */
  expiresAt?: number;
  revoked: boolean;
}

export interface AuthCodeRecord {
  code: string;
  clientId: string;
  redirectUri: string;
  email: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: 'S256' | 'plain';
  offline: boolean;
  forceConsent: boolean;
  nonce?: string;
  expiresAt: number;
  used: boolean;
}

/** Google's access tokens live one hour; `expires_in` is reported as 3599. */
export const ACCESS_TOKEN_TTL_S = 3599;
const CODE_TTL_MS = 10 * 60_000;

const random = (bytes: number) => randomBytes(bytes).toString('base64url');

export class TokenStore {
  readonly access = new Map<string, AccessTokenRecord>();
  readonly refresh = new Map<string, RefreshTokenRecord>();
  readonly codes = new Map<string, AuthCodeRecord>();
  /** `clientId email` pairs that already received a refresh token (Google sends one once). */
  readonly offlineGranted = new Set<string>();
  /**
   * Scopes each account granted each client (`clientId email`), as Google remembers them until
   * the grant is revoked: what `include_granted_scopes=true` adds to a new consent.
   */
  readonly granted = new Map<string, Set<string>>();

  /** Records what an account approved on the consent page. */
  recordGrant(clientId: string, email: string, scopes: readonly string[]): void {
    const key = `${clientId} ${email}`;
    const set = this.granted.get(key) ?? new Set<string>();
    for (const scope of scopes) {
      set.add(scope);
    }
    this.granted.set(key, set);
  }

  grantedScopes(clientId: string, email: string): string[] {
    return [...(this.granted.get(`${clientId} ${email}`) ?? [])];
  }

  issueAccess(
    grant: Grant,
    now: number,
    refreshToken?: string,
    ttlS = ACCESS_TOKEN_TTL_S,
  ): AccessTokenRecord {
    const record: AccessTokenRecord = {
      ...grant,
      scopes: [...grant.scopes],
      token: `ya29.${random(48)}`,
      issuedAt: now,
      expiresAt: now + (ttlS + 1) * 1000,
      revoked: false,
    };
    if (refreshToken !== undefined) {
      record.refreshToken = refreshToken;
    }
    this.access.set(record.token, record);
    return record;
  }

  issueRefresh(grant: Grant, now: number): RefreshTokenRecord {
    const record: RefreshTokenRecord = {
      ...grant,
      scopes: [...grant.scopes],
      token: `1//${random(64)}`,
      issuedAt: now,
      revoked: false,
    };
    this.refresh.set(record.token, record);
    this.offlineGranted.add(`${grant.clientId} ${grant.email}`);
    return record;
  }

  issueCode(fields: Omit<AuthCodeRecord, 'code' | 'expiresAt' | 'used'>, now: number): AuthCodeRecord {
    const record: AuthCodeRecord = {
      ...fields,
      code: `4/${random(40)}`,
      expiresAt: now + CODE_TTL_MS,
      used: false,
    };
    this.codes.set(record.code, record);
    return record;
  }

  /**
   * Revokes a token as Google's revoke endpoint does: a refresh token takes its access tokens
   * with it, and an access token minted from a refresh token takes that refresh token too.
   */
  revoke(token: string): boolean {
    const refresh = this.refresh.get(token);
    if (refresh) {
      this.revokeRefresh(refresh);
      return true;
    }
    const access = this.access.get(token);
    if (access && !access.revoked) {
      access.revoked = true;
      const parent = access.refreshToken === undefined ? undefined : this.refresh.get(access.refreshToken);
      if (parent) {
        this.revokeRefresh(parent);
      }
      return true;
    }
    return false;
  }

  /** Revoking a refresh token revokes the whole grant, so a later consent starts from nothing. */
  revokeRefresh(refresh: RefreshTokenRecord): void {
    refresh.revoked = true;
    this.granted.delete(`${refresh.clientId} ${refresh.email}`);
    for (const access of this.access.values()) {
      if (access.refreshToken === refresh.token) {
        access.revoked = true;
      }
    }
  }

  /** Every token of an account (and client, when given): the admin's "revoke access". */
  revokeAll(email: string, clientId?: string): number {
    for (const key of [...this.granted.keys()]) {
      if (clientId === undefined ? key.endsWith(` ${email}`) : key === `${clientId} ${email}`) {
        this.granted.delete(key);
      }
    }
    let count = 0;
    for (const record of [...this.refresh.values(), ...this.access.values()]) {
      if (
        record.email === email &&
        (clientId === undefined || record.clientId === clientId) &&
        !record.revoked
      ) {
        record.revoked = true;
        count += 1;
      }
    }
    return count;
  }

  /** Makes matching access tokens expire now, so the next call answers 401. */
  expireAccess(now: number, match: { email?: string; token?: string } = {}): number {
    let count = 0;
    for (const record of this.access.values()) {
      if (
        (match.email === undefined || record.email === match.email) &&
        (match.token === undefined || record.token === match.token)
      ) {
        record.expiresAt = Math.min(record.expiresAt, now);
        count += 1;
      }
    }
    return count;
  }

  /** Makes matching refresh tokens expire, so refreshing answers `invalid_grant`. */
  expireRefresh(now: number, match: { email?: string; token?: string } = {}): number {
    let count = 0;
    for (const record of this.refresh.values()) {
      if (
        (match.email === undefined || record.email === match.email) &&
        (match.token === undefined || record.token === match.token)
      ) {
        record.expiresAt = now;
        count += 1;
      }
    }
    return count;
  }

  clear(): void {
    this.access.clear();
    this.refresh.clear();
    this.codes.clear();
    this.offlineGranted.clear();
    this.granted.clear();
  }
}
