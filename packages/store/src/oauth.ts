import { randomBytes, randomUUID } from 'node:crypto';
import { CalgateError, newId } from '@calgate/core';
import type pg from 'pg';
import { HIJACK_POLICIES, type HijackPolicy, validateToolsets } from './api-keys.ts';
import type { Database } from './db.ts';
import {
  CLIENT_NAME_MAX,
  checkCodeChallenge,
  checkMetadataDocumentUrl,
  checkRedirectUris,
  generateClientSecret,
  generateCode,
  generateRefreshToken,
  invalidGrant,
  oauthError,
  pkceMatches,
  SCOPE_MAX,
  sameHash,
  sha256,
  URL_MAX,
} from './oauth-validation.ts';
import { cleanText, FOREIGN_KEY_VIOLATION, ms, pgCode, quoted } from './sql.ts';

export type OAuthClientKind = 'registered' | 'metadata_document';
export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
const AUTH_METHODS: readonly string[] = ['none', 'client_secret_basic', 'client_secret_post'];
const CODE_TTL_MS = 60_000;
const REFRESH_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const METADATA_MAX = 16_384;

/** A client as stored; its secret (if any) is never part of it. */
export interface OAuthClientRecord {
  id: string;
  clientId: string;
  kind: OAuthClientKind;
  clientName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  metadata: Record<string, unknown>;
  createdAt: Date;
  refreshedAt: Date;
}

/** An OAuth connection: an api_keys row of kind 'oauth', as the dashboard lists it. */
export interface OAuthConnection {
  keyId: string;
  tenantId: string;
  name: string;
  clientId: string;
  clientName: string;
  userId: string | null;
  toolsets: string[];
  /** What risky actions need after the app's agent was shown suspicious content. */
  hijackPolicy: HijackPolicy;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewConnection {
  tenantId: string;
  userId: string;
  /** The client's OAuth client_id. */
  clientId: string;
  name: string;
  toolsets: readonly string[];
  calendars: readonly { calendarId: string; read: boolean; write: boolean }[];
  /** Chosen at consent; absent: 'ask' for a new connection, unchanged for one approved again. */
  hijackPolicy?: HijackPolicy | undefined;
}

/** The policy as given, or invalid_argument naming the valid ones. */
function checkedPolicy(policy: string): HijackPolicy {
  if (!(HIJACK_POLICIES as readonly string[]).includes(policy)) {
    throw new CalgateError(
      'invalid_argument',
      `Unknown hijack policy '${policy}'; use one of ${HIJACK_POLICIES.join(', ')}.`,
    );
  }
  return policy as HijackPolicy;
}

interface ClientRow {
  id: string;
  client_id: string;
  kind: OAuthClientKind;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  metadata: Record<string, unknown>;
  created_at: number;
  refreshed_at: number;
}

const CLIENT_COLUMNS = `id, client_id, kind, client_name, redirect_uris, token_endpoint_auth_method, metadata, ${ms('created_at')}, ${ms('refreshed_at')}`;

function client(row: ClientRow): OAuthClientRecord {
  return {
    id: row.id,
    clientId: row.client_id,
    kind: row.kind,
    clientName: row.client_name,
    redirectUris: row.redirect_uris,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    metadata: row.metadata,
    createdAt: new Date(row.created_at),
    refreshedAt: new Date(row.refreshed_at),
  };
}

const clientNotFound = (clientId: string) =>
  oauthError('not_found', 'invalid_client', `No OAuth client ${quoted(clientId)}.`);
const connectionNotFound = (keyId: string) =>
  new CalgateError('not_found', `No OAuth connection ${keyId} in this tenant.`);

function checkMetadata(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw oauthError('invalid_argument', 'invalid_client_metadata', 'Client metadata must be a JSON object.');
  }
  if (JSON.stringify(value).length > METADATA_MAX) {
    throw oauthError(
      'invalid_argument',
      'invalid_client_metadata',
      `Client metadata is larger than ${METADATA_MAX.toLocaleString('en')} characters.`,
    );
  }
  return value as Record<string, unknown>;
}

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
  async registerClient(input: {
    clientName: string;
    redirectUris: readonly string[];
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    metadata?: Record<string, unknown>;
  }): Promise<{ client: OAuthClientRecord; clientSecret?: string }> {
    const name = cleanText(input.clientName, 'Client name', CLIENT_NAME_MAX);
    const redirectUris = checkRedirectUris(input.redirectUris, this.#allowHttp);
    const method = input.tokenEndpointAuthMethod ?? 'none';
    if (!AUTH_METHODS.includes(method)) {
      throw oauthError(
        'invalid_argument',
        'invalid_client_metadata',
        `Token endpoint auth method ${quoted(String(method))} is not supported: use none, client_secret_basic or client_secret_post.`,
      );
    }
    const metadata = checkMetadata(input.metadata ?? {});
    const secret = method === 'none' ? undefined : generateClientSecret();
    const id = newId('ocl');
    const { rows } = await this.#pool.query<ClientRow>(
      `INSERT INTO oauth_clients (id, client_id, kind, client_name, redirect_uris, token_endpoint_auth_method, client_secret_hash, metadata)
       VALUES ($1, $1, 'registered', $2, $3, $4, $5, $6) RETURNING ${CLIENT_COLUMNS}`,
      [id, name, redirectUris, method, secret === undefined ? null : sha256(secret), metadata],
    );
    const record = client(rows[0] as ClientRow);
    return secret === undefined ? { client: record } : { client: record, clientSecret: secret };
  }

  /**
   * Stores (or refreshes) a client described by the Client ID Metadata Document at `url`. The
   * document's client_id must be that URL; such clients are public (auth method none).
   */
  async saveMetadataDocumentClient(
    url: string,
    document: Record<string, unknown>,
  ): Promise<OAuthClientRecord> {
    const clientId = checkMetadataDocumentUrl(url, this.#allowHttpDocuments);
    const metadata = checkMetadata(document);
    if (metadata.client_id !== clientId) {
      throw oauthError(
        'invalid_argument',
        'invalid_client_metadata',
        `The metadata document's client_id ${quoted(String(metadata.client_id ?? '(none)'))} is not the URL it was fetched from, ${quoted(clientId)}.`,
      );
    }
    const method = metadata.token_endpoint_auth_method ?? 'none';
    if (method !== 'none') {
      throw oauthError(
        'invalid_argument',
        'invalid_client_metadata',
        `Token endpoint auth method ${quoted(String(method))} is not supported for metadata-document clients: use none.`,
      );
    }
    const redirectUris = checkRedirectUris(metadata.redirect_uris, this.#allowHttp);
    const name =
      metadata.client_name === undefined
        ? new URL(clientId).host
        : cleanText(metadata.client_name, 'Client name', CLIENT_NAME_MAX);
    const { rows } = await this.#pool.query<ClientRow>(
      `INSERT INTO oauth_clients (id, client_id, kind, client_name, redirect_uris, token_endpoint_auth_method, metadata)
       VALUES ($1, $2, 'metadata_document', $3, $4, 'none', $5)
       ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name,
         redirect_uris = EXCLUDED.redirect_uris, metadata = EXCLUDED.metadata, refreshed_at = now()
       WHERE oauth_clients.kind = 'metadata_document'
       RETURNING ${CLIENT_COLUMNS}`,
      [newId('ocl'), clientId, name, redirectUris, metadata],
    );
    const [row] = rows;
    if (row === undefined) {
      throw oauthError(
        'invalid_argument',
        'invalid_client_metadata',
        `Client id ${quoted(clientId)} is taken.`,
      );
    }
    return client(row);
  }

  async getClient(clientId: string): Promise<OAuthClientRecord | null> {
    const { rows } = await this.#pool.query<ClientRow>(
      `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1`,
      [clientId],
    );
    const [row] = rows;
    return row === undefined ? null : client(row);
  }

  /** Whether `secret` is this client's secret; false for public and unknown clients. */
  async verifyClientSecret(clientId: string, secret: string): Promise<boolean> {
    const { rows } = await this.#pool.query<{ client_secret_hash: Buffer | null }>(
      'SELECT client_secret_hash FROM oauth_clients WHERE client_id = $1',
      [clientId],
    );
    const stored = rows[0]?.client_secret_hash ?? null;
    // Hash and compare even without a stored hash, so timing does not tell which clients exist.
    const matches = sameHash(sha256(secret), stored ?? Buffer.alloc(32));
    return stored !== null && matches;
  }

  /**
   * Creates the connection a user approved for a client: an api_keys row of kind 'oauth' with
   * its toolsets and grants (write implies read), in one transaction. The same person approving
   * the same app again updates their live connection instead. Returns its key id.
   */
  async createConnection(input: NewConnection): Promise<string> {
    const name = cleanText(input.name, 'Connection name', 200);
    const toolsets = validateToolsets(input.toolsets);
    if (!toolsets.ok) {
      throw toolsets.error;
    }
    const policy = input.hijackPolicy === undefined ? undefined : checkedPolicy(input.hijackPolicy);
    const grants = new Map<string, { read: boolean; write: boolean }>();
    for (const { calendarId, read, write } of input.calendars) {
      if (grants.has(calendarId)) {
        throw new CalgateError('invalid_argument', `Calendar ${calendarId} is listed more than once.`);
      }
      grants.set(calendarId, { read: read || write, write });
    }
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const { rows: found } = await client.query<{ id: string }>(
        'SELECT id FROM oauth_clients WHERE client_id = $1',
        [input.clientId],
      );
      const oauthClient = found[0];
      if (oauthClient === undefined) {
        throw clientNotFound(input.clientId);
      }
      const ids = [...grants.keys()];
      const { rows: owned } = await client.query<{ id: string }>(
        'SELECT id FROM calendars WHERE tenant_id = $1 AND id = ANY($2::text[])',
        [input.tenantId, ids],
      );
      const missing = ids.filter((id) => !owned.some((row) => row.id === id));
      if (missing.length > 0) {
        throw new CalgateError('not_found', `No calendar ${missing.join(', ')} in this tenant.`, {
          context: { calendarIds: missing },
        });
      }
      // Approving an app again (a client that lost its tokens) updates its connection rather
      // than adding another: one row per person and app, with what they chose this time.
      const { rows: existing } = await client.query<{ id: string }>(
        `SELECT id FROM api_keys WHERE tenant_id = $1 AND user_id = $2 AND oauth_client_id = $3
           AND kind = 'oauth' AND revoked_at IS NULL
         ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
        [input.tenantId, input.userId, oauthClient.id],
      );
      const reused = existing[0]?.id;
      const keyId = reused ?? newId('key');
      if (reused === undefined) {
        await client.query(
          `INSERT INTO api_keys (id, tenant_id, name, prefix, hash, toolsets, kind, oauth_client_id, user_id, hijack_policy)
           VALUES ($1, $2, $3, 'oauth', $4, $5, 'oauth', $6, $7, $8)`,
          [
            keyId,
            input.tenantId,
            name,
            randomBytes(32),
            toolsets.value,
            oauthClient.id,
            input.userId,
            policy ?? 'ask',
          ],
        );
      } else {
        await client.query(
          `UPDATE api_keys SET name = $3, toolsets = $4, hijack_policy = COALESCE($5, hijack_policy)
           WHERE tenant_id = $1 AND id = $2`,
          [input.tenantId, keyId, name, toolsets.value, policy ?? null],
        );
        await client.query('DELETE FROM grants WHERE tenant_id = $1 AND key_id = $2', [
          input.tenantId,
          keyId,
        ]);
      }
      const granted = [...grants].filter(([, grant]) => grant.read);
      if (granted.length > 0) {
        await client.query(
          `INSERT INTO grants (tenant_id, key_id, calendar_id, can_read, can_write)
           SELECT $1, $2, g.calendar_id, true, g.can_write
           FROM unnest($3::text[], $4::boolean[]) AS g(calendar_id, can_write)`,
          [input.tenantId, keyId, granted.map(([id]) => id), granted.map(([, grant]) => grant.write)],
        );
      }
      await client.query('COMMIT');
      return keyId;
    } catch (error) {
      await client.query('ROLLBACK');
      if (pgCode(error).code === FOREIGN_KEY_VIOLATION) {
        throw new CalgateError('not_found', `No user ${input.userId} in this tenant.`);
      }
      throw error;
    } finally {
      client.release();
    }
  }

  /** The tenant's OAuth connections, oldest first, revoked ones included. */
  async listConnections(tenantId: string): Promise<OAuthConnection[]> {
    const { rows } = await this.#pool.query<{
      id: string;
      tenant_id: string;
      name: string;
      client_id: string;
      client_name: string;
      user_id: string | null;
      toolsets: string[];
      hijack_policy: HijackPolicy;
      created_at: number;
      last_used_at: number | null;
      revoked_at: number | null;
    }>(
      `SELECT k.id, k.tenant_id, k.name, o.client_id, o.client_name, k.user_id, k.toolsets, k.hijack_policy,
         ${ms('k.created_at', 'created_at')}, ${ms('k.last_used_at', 'last_used_at')}, ${ms('k.revoked_at', 'revoked_at')}
       FROM api_keys k JOIN oauth_clients o ON o.id = k.oauth_client_id
       WHERE k.tenant_id = $1 AND k.kind = 'oauth' ORDER BY k.created_at, k.id`,
      [tenantId],
    );
    const date = (value: number | null) => (value === null ? null : new Date(value));
    return rows.map((row) => ({
      keyId: row.id,
      tenantId: row.tenant_id,
      name: row.name,
      clientId: row.client_id,
      clientName: row.client_name,
      userId: row.user_id,
      toolsets: row.toolsets,
      hijackPolicy: row.hijack_policy,
      createdAt: new Date(row.created_at),
      lastUsedAt: date(row.last_used_at),
      revokedAt: date(row.revoked_at),
    }));
  }

  /**
   * Sets what a live connection's risky actions need after its agent was shown suspicious
   * content (strict, ask or off), as keys have it. not_found for no such connection of this
   * tenant, conflict for a revoked one; nothing changes then.
   */
  async setHijackPolicy(tenantId: string, keyId: string, policy: string): Promise<void> {
    const value = checkedPolicy(policy);
    const { rows } = await this.#pool.query<{ revoked: boolean }>(
      `WITH target AS (
         SELECT id, revoked_at IS NOT NULL AS revoked FROM api_keys
         WHERE tenant_id = $1 AND id = $2 AND kind = 'oauth'),
       changed AS (
         UPDATE api_keys k SET hijack_policy = $3 FROM target t
         WHERE k.tenant_id = $1 AND k.id = t.id AND NOT t.revoked)
       SELECT revoked FROM target`,
      [tenantId, keyId, value],
    );
    const found = rows[0];
    if (found === undefined) {
      throw connectionNotFound(keyId);
    }
    if (found.revoked) {
      throw new CalgateError(
        'conflict',
        `Connection ${keyId} is revoked; its settings can no longer change.`,
      );
    }
  }

  /** Revokes a connection (api_keys.revoked_at, as for keys) and every refresh token of it. */
  async revokeConnection(tenantId: string, keyId: string): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const { rowCount } = await client.query(
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
         WHERE tenant_id = $1 AND id = $2 AND kind = 'oauth'`,
        [tenantId, keyId],
      );
      if (rowCount === 0) {
        throw connectionNotFound(keyId);
      }
      await revokeRefreshTokens(client, 'tenant_id = $1 AND key_id = $2', [tenantId, keyId]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /** A live connection of this tenant for this client, or not_found; its internal client id. */
  async #connectionClient(
    tenantId: string,
    keyId: string,
    clientId: string,
  ): Promise<{ id: string; redirectUris: string[] }> {
    const { rows } = await this.#pool.query<{ id: string; redirect_uris: string[]; revoked: boolean }>(
      `SELECT o.id, o.redirect_uris, k.revoked_at IS NOT NULL AS revoked
       FROM api_keys k JOIN oauth_clients o ON o.id = k.oauth_client_id
       WHERE k.tenant_id = $1 AND k.id = $2 AND k.kind = 'oauth' AND o.client_id = $3`,
      [tenantId, keyId, clientId],
    );
    const [row] = rows;
    if (row === undefined) {
      throw new CalgateError(
        'not_found',
        `No OAuth connection ${keyId} for client ${quoted(clientId)} in this tenant.`,
      );
    }
    if (row.revoked) {
      throw new CalgateError('conflict', `OAuth connection ${keyId} is revoked.`);
    }
    return { id: row.id, redirectUris: row.redirect_uris };
  }

  /** Issues a single-use authorization code (PKCE S256) for a connection; only its hash is stored. */
  async issueCode(input: {
    tenantId: string;
    keyId: string;
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    resource: string;
    scope: string;
    ttlMs?: number;
  }): Promise<string> {
    const challenge = checkCodeChallenge(input.codeChallenge);
    const resource = cleanText(input.resource, 'Resource', URL_MAX);
    const scope = input.scope === '' ? '' : cleanText(input.scope, 'Scope', SCOPE_MAX);
    const found = await this.#connectionClient(input.tenantId, input.keyId, input.clientId);
    if (!found.redirectUris.includes(input.redirectUri)) {
      throw oauthError(
        'invalid_argument',
        'invalid_request',
        `Redirect URI ${quoted(input.redirectUri)} is not registered for client ${quoted(input.clientId)}.`,
      );
    }
    const code = generateCode();
    await this.#pool.query(
      `INSERT INTO oauth_codes (hash, tenant_id, key_id, client_id, redirect_uri, code_challenge, resource, scope, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9::float8 / 1000))`,
      [
        sha256(code),
        input.tenantId,
        input.keyId,
        found.id,
        input.redirectUri,
        challenge,
        resource,
        scope,
        input.ttlMs ?? CODE_TTL_MS,
      ],
    );
    return code;
  }

  /**
   * Redeems a code once. The first presentation burns it whatever follows. A replay means the code
   * leaked (RFC 6749 §4.1.2): it revokes the code's connection, so the access tokens issued for
   * the code stop at the next call (they are JWTs, checked against their connection), and every
   * refresh token of it; the refusal says so in `context.revokedKeyId`, for the caller to drop
   * cached lookups. Each refusal is an `invalid_grant`.
   */
  async consumeCode(
    code: string,
    check: { clientId: string; redirectUri: string; codeVerifier: string; resource: string },
  ): Promise<{ tenantId: string; keyId: string; scope: string }> {
    const hash = sha256(code);
    const { rows } = await this.#pool.query<{
      tenant_id: string;
      key_id: string;
      client_id: string;
      redirect_uri: string;
      code_challenge: string;
      resource: string;
      scope: string;
      expired: boolean;
      revoked: boolean;
    }>(
      `UPDATE oauth_codes c SET used_at = now()
       FROM oauth_clients o, api_keys k
       WHERE c.hash = $1 AND c.used_at IS NULL AND o.id = c.client_id AND k.id = c.key_id AND k.tenant_id = c.tenant_id
       RETURNING c.tenant_id, c.key_id, o.client_id, c.redirect_uri, c.code_challenge, c.resource, c.scope,
         c.expires_at <= now() AS expired, k.revoked_at IS NOT NULL AS revoked`,
      [hash],
    );
    const [row] = rows;
    if (row === undefined) {
      const { rows: used } = await this.#pool.query<{ tenant_id: string; key_id: string }>(
        'SELECT tenant_id, key_id FROM oauth_codes WHERE hash = $1',
        [hash],
      );
      const [replayed] = used;
      if (replayed === undefined) {
        throw invalidGrant('Unknown authorization code.');
      }
      await this.revokeConnection(replayed.tenant_id, replayed.key_id);
      const refusal = invalidGrant(
        'Authorization code was already used; the connection it authorized is revoked with its access and refresh tokens. Approve the app again to reconnect.',
      );
      refusal.context.revokedKeyId = replayed.key_id;
      throw refusal;
    }
    if (row.expired) {
      throw invalidGrant('Authorization code has expired.');
    }
    if (row.revoked) {
      throw invalidGrant('The connection of this authorization code is revoked.');
    }
    if (row.client_id !== check.clientId) {
      throw invalidGrant(`Authorization code was not issued to client ${quoted(check.clientId)}.`);
    }
    if (row.redirect_uri !== check.redirectUri) {
      throw invalidGrant('Redirect URI differs from the one the authorization code was issued for.');
    }
    if (row.resource !== check.resource) {
      throw invalidGrant(
        `Resource ${quoted(check.resource)} differs from the one the authorization code was issued for.`,
      );
    }
    if (!pkceMatches(check.codeVerifier, row.code_challenge)) {
      throw invalidGrant('PKCE code verifier does not match the code challenge (S256).');
    }
    return { tenantId: row.tenant_id, keyId: row.key_id, scope: row.scope };
  }

  /** Issues a refresh token for a live connection, in a new family unless one is given. */
  async issueRefreshToken(input: {
    tenantId: string;
    keyId: string;
    clientId: string;
    resource: string;
    familyId?: string;
    ttlMs?: number;
  }): Promise<string> {
    const resource = cleanText(input.resource, 'Resource', URL_MAX);
    const found = await this.#connectionClient(input.tenantId, input.keyId, input.clientId);
    const token = generateRefreshToken();
    await insertRefreshToken(this.#pool, token, {
      familyId: input.familyId ?? randomUUID(),
      tenantId: input.tenantId,
      keyId: input.keyId,
      clientId: found.id,
      resource,
      ttlMs: input.ttlMs ?? REFRESH_TTL_MS,
    });
    return token;
  }

  /**
   * Exchanges a refresh token for the next of its family, marking it used. A token used before
   * revokes its whole family (a stolen token is in two hands); each refusal is `invalid_grant`.
   */
  async rotateRefreshToken(
    token: string,
    check: { clientId: string; resource: string; ttlMs?: number },
  ): Promise<{ tenantId: string; keyId: string; newToken: string }> {
    const client = await this.#pool.connect();
    let refusal: CalgateError | null = null;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{
        family_id: string;
        tenant_id: string;
        key_id: string;
        client_pk: string;
        client_id: string;
        resource: string;
        used: boolean;
        revoked: boolean;
        expired: boolean;
        key_revoked: boolean;
      }>(
        `SELECT r.family_id, r.tenant_id, r.key_id, r.client_id AS client_pk, o.client_id, r.resource,
           r.used_at IS NOT NULL AS used, r.revoked_at IS NOT NULL AS revoked, r.expires_at <= now() AS expired,
           k.revoked_at IS NOT NULL AS key_revoked
         FROM oauth_refresh_tokens r
         JOIN oauth_clients o ON o.id = r.client_id
         JOIN api_keys k ON k.id = r.key_id AND k.tenant_id = r.tenant_id
         WHERE r.hash = $1 FOR UPDATE OF r`,
        [sha256(token)],
      );
      const [row] = rows;
      if (row === undefined) {
        refusal = invalidGrant('Unknown refresh token.');
      } else if (row.revoked || row.key_revoked) {
        refusal = invalidGrant('Refresh token is revoked.');
      } else if (row.used) {
        await revokeRefreshTokens(client, 'family_id = $1', [row.family_id]);
        refusal = invalidGrant('Refresh token was already used; every token of its family is now revoked.');
      } else if (row.expired) {
        refusal = invalidGrant('Refresh token has expired.');
      } else if (row.client_id !== check.clientId) {
        refusal = invalidGrant(`Refresh token was not issued to client ${quoted(check.clientId)}.`);
      } else if (row.resource !== check.resource) {
        refusal = invalidGrant(
          `Resource ${quoted(check.resource)} differs from the one the refresh token was issued for.`,
        );
      }
      if (refusal !== null || row === undefined) {
        await client.query('COMMIT');
        throw refusal ?? invalidGrant('Unknown refresh token.');
      }
      await client.query('UPDATE oauth_refresh_tokens SET used_at = now() WHERE hash = $1', [sha256(token)]);
      const newToken = generateRefreshToken();
      await insertRefreshToken(client, newToken, {
        familyId: row.family_id,
        tenantId: row.tenant_id,
        keyId: row.key_id,
        clientId: row.client_pk,
        resource: row.resource,
        ttlMs: check.ttlMs ?? REFRESH_TTL_MS,
      });
      await client.query('COMMIT');
      return { tenantId: row.tenant_id, keyId: row.key_id, newToken };
    } catch (error) {
      if (error !== refusal) {
        await client.query('ROLLBACK');
      }
      throw error;
    } finally {
      client.release();
    }
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
  async revokeRefreshTokenFamily(token: string, clientId: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE oauth_refresh_tokens r SET revoked_at = now()
       FROM oauth_refresh_tokens t JOIN oauth_clients o ON o.id = t.client_id
       WHERE t.hash = $1 AND o.client_id = $2 AND r.family_id = t.family_id AND r.revoked_at IS NULL`,
      [sha256(token), clientId],
    );
    return (rowCount ?? 0) > 0;
  }
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

async function insertRefreshToken(
  db: Queryable,
  token: string,
  row: {
    familyId: string;
    tenantId: string;
    keyId: string;
    clientId: string;
    resource: string;
    ttlMs: number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO oauth_refresh_tokens (hash, family_id, tenant_id, key_id, client_id, resource, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7::float8 / 1000))`,
    [sha256(token), row.familyId, row.tenantId, row.keyId, row.clientId, row.resource, row.ttlMs],
  );
}

async function revokeRefreshTokens(db: Queryable, where: string, values: unknown[]): Promise<void> {
  await db.query(
    `UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE ${where} AND revoked_at IS NULL`,
    values,
  );
}
