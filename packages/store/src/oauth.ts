import type pg from 'pg';
import type { Database } from './db.ts';
import {
  getClient,
  type OAuthClientRecord,
  registerClient,
  saveMetadataDocumentClient,
  type TokenEndpointAuthMethod,
  verifyClientSecret,
} from './oauth/clients.ts';
import { consumeCode, issueCode } from './oauth/codes.ts';
import {
  createConnection,
  listConnections,
  type NewConnection,
  type OAuthConnection,
  revokeConnection,
  setHijackPolicy,
} from './oauth/connections.ts';
import { issueRefreshToken, revokeRefreshTokenFamily, rotateRefreshToken } from './oauth/refresh-tokens.ts';

export type { OAuthClientKind, OAuthClientRecord, TokenEndpointAuthMethod } from './oauth/clients.ts';
export type { NewConnection, OAuthConnection } from './oauth/connections.ts';

/**
 * Storage of Calgate's OAuth 2.1 authorization server: clients (dynamically registered or
 * described by a Client ID Metadata Document), connections (api_keys rows of kind 'oauth', so
 * grants, audit and revocation work as for keys), single-use PKCE codes and rotating refresh
 * tokens. Codes, refresh tokens and client secrets are stored only as SHA-256 hashes. Failures
 * of the token endpoint carry the OAuth error name in `context.oauthError`.
 */
export class OAuthRepository {
  readonly #pool: pg.Pool;
  readonly #allowHttp: boolean;
  readonly #allowHttpDocuments: boolean;

  /**
   * `allowHttpRedirects`: accept http redirect URIs on any host (development only);
   * `allowHttpClientDocuments`: accept http client id URLs (tests and labs, with
   * OAUTH_ALLOW_PRIVATE_CLIENTS).
   */
  constructor(
    db: Database,
    options: { allowHttpRedirects?: boolean; allowHttpClientDocuments?: boolean } = {},
  ) {
    this.#pool = db.pool;
    this.#allowHttp = options.allowHttpRedirects ?? false;
    this.#allowHttpDocuments = options.allowHttpClientDocuments ?? false;
  }

  /** Dynamic registration; a secret (`ocs_…`) is returned only here, and stored hashed. */
  registerClient(input: {
    clientName: string;
    redirectUris: readonly string[];
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    metadata?: Record<string, unknown>;
  }): Promise<{ client: OAuthClientRecord; clientSecret?: string }> {
    return registerClient(this.#pool, this.#allowHttp, input);
  }

  /**
   * Stores (or refreshes) a client described by the Client ID Metadata Document at `url`. The
   * document's client_id must be that URL; such clients are public (auth method none).
   */
  saveMetadataDocumentClient(url: string, document: Record<string, unknown>): Promise<OAuthClientRecord> {
    return saveMetadataDocumentClient(
      this.#pool,
      { allowHttp: this.#allowHttp, allowHttpDocuments: this.#allowHttpDocuments },
      url,
      document,
    );
  }

  getClient(clientId: string): Promise<OAuthClientRecord | null> {
    return getClient(this.#pool, clientId);
  }

  /** Whether `secret` is this client's secret; false for public and unknown clients. */
  verifyClientSecret(clientId: string, secret: string): Promise<boolean> {
    return verifyClientSecret(this.#pool, clientId, secret);
  }

  /**
   * Creates the connection a user approved for a client: an api_keys row of kind 'oauth' with
   * its toolsets and grants (write implies read), in one transaction. The same person approving
   * the same app again updates their live connection instead. Returns its key id.
   */
  createConnection(input: NewConnection): Promise<string> {
    return createConnection(this.#pool, input);
  }

  /** The tenant's OAuth connections, oldest first, revoked ones included. */
  listConnections(tenantId: string): Promise<OAuthConnection[]> {
    return listConnections(this.#pool, tenantId);
  }

  /**
   * Sets what a live connection's risky actions need after its agent was shown suspicious
   * content (strict, ask or off), as keys have it. not_found for no such connection of this
   * tenant, conflict for a revoked one; nothing changes then.
   */
  setHijackPolicy(tenantId: string, keyId: string, policy: string): Promise<void> {
    return setHijackPolicy(this.#pool, tenantId, keyId, policy);
  }

  /** Revokes a connection (api_keys.revoked_at, as for keys) and every refresh token of it. */
  revokeConnection(tenantId: string, keyId: string): Promise<void> {
    return revokeConnection(this.#pool, tenantId, keyId);
  }

  /** Issues a single-use authorization code (PKCE S256) for a connection; only its hash is stored. */
  issueCode(input: {
    tenantId: string;
    keyId: string;
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    resource: string;
    scope: string;
    ttlMs?: number;
  }): Promise<string> {
    return issueCode(this.#pool, input);
  }

  /**
   * Redeems a code once. The first presentation burns it whatever follows. A replay means the code
   * leaked (RFC 6749 §4.1.2): it revokes the code's connection, so the access tokens issued for
   * the code stop at the next call (they are JWTs, checked against their connection), and every
   * refresh token of it; the refusal says so in `context.revokedKeyId` (and its tenant in
   * `revokedTenantId`), for the caller to drop that tenant's cached lookups. Each refusal is an
   * `invalid_grant`.
   */
  consumeCode(
    code: string,
    check: { clientId: string; redirectUri: string; codeVerifier: string; resource: string },
  ): Promise<{ tenantId: string; keyId: string; scope: string }> {
    return consumeCode(this.#pool, code, check);
  }

  /** Issues a refresh token for a live connection, in a new family unless one is given. */
  issueRefreshToken(input: {
    tenantId: string;
    keyId: string;
    clientId: string;
    resource: string;
    familyId?: string;
    ttlMs?: number;
  }): Promise<string> {
    return issueRefreshToken(this.#pool, input);
  }

  /**
   * Exchanges a refresh token for the next of its family, marking it used. A token used before
   * revokes its whole family (a stolen token is in two hands); each refusal is `invalid_grant`.
   */
  rotateRefreshToken(
    token: string,
    check: { clientId: string; resource: string; ttlMs?: number },
  ): Promise<{ tenantId: string; keyId: string; newToken: string }> {
    return rotateRefreshToken(this.#pool, token, check);
  }

  /**
   * Deletes codes and refresh tokens that expired more than a day before `now`. Used and revoked
   * ones are kept until then, so a replayed code or a reused refresh token is still recognised
   * (and revokes what it must) for as long as it could have been valid. Then the connections
   * nothing can use: approved more than a day ago, never used for a call, with no code or
   * refresh token left (a consent whose code the app never redeemed), grants and all.
   */
  async pruneExpired(now: Date): Promise<{ codes: number; refreshTokens: number; connections: number }> {
    const cutoff = new Date(now.getTime() - 24 * 60 * 60 * 1000);
    const codes = await this.#pool.query('DELETE FROM oauth_codes WHERE expires_at < $1', [cutoff]);
    const tokens = await this.#pool.query('DELETE FROM oauth_refresh_tokens WHERE expires_at < $1', [cutoff]);
    const connections = await this.#pool.query(
      `DELETE FROM api_keys k
       WHERE k.kind = 'oauth' AND k.created_at < $1 AND k.last_used_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.key_id = k.id)
         AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.key_id = k.id)`,
      [cutoff],
    );
    return {
      codes: codes.rowCount ?? 0,
      refreshTokens: tokens.rowCount ?? 0,
      connections: connections.rowCount ?? 0,
    };
  }

  /**
   * Revokes the family of a refresh token issued to `clientId` (RFC 7009); false when there is
   * no such token for that client, which the endpoint answers like a success.
   */
  revokeRefreshTokenFamily(token: string, clientId: string): Promise<boolean> {
    return revokeRefreshTokenFamily(this.#pool, token, clientId);
  }
}
