/**
 * Single-use authorization codes (PKCE S256): issued for a connection, stored as hashes, redeemed
 * once; a replayed code revokes its connection.
 */
import type pg from 'pg';
import {
  checkCodeChallenge,
  generateCode,
  invalidGrant,
  oauthError,
  pkceMatches,
  SCOPE_MAX,
  sha256,
  URL_MAX,
} from '../oauth-validation.ts';
import { cleanText, quoted } from '../sql.ts';
import { connectionClient, revokeConnection } from './connections.ts';

const CODE_TTL_MS = 60_000;

/** Issues a single-use authorization code (PKCE S256) for a connection; only its hash is stored. */
export async function issueCode(
  pool: pg.Pool,
  input: {
    tenantId: string;
    keyId: string;
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    resource: string;
    scope: string;
    ttlMs?: number;
  },
): Promise<string> {
  const challenge = checkCodeChallenge(input.codeChallenge);
  const resource = cleanText(input.resource, 'Resource', URL_MAX);
  const scope = input.scope === '' ? '' : cleanText(input.scope, 'Scope', SCOPE_MAX);
  const found = await connectionClient(pool, input.tenantId, input.keyId, input.clientId);
  if (!found.redirectUris.includes(input.redirectUri)) {
    throw oauthError(
      'invalid_argument',
      'invalid_request',
      `Redirect URI ${quoted(input.redirectUri)} is not registered for client ${quoted(input.clientId)}.`,
    );
  }
  const code = generateCode();
  await pool.query(
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
 * refresh token of it; the refusal says so in `context.revokedKeyId` (and its tenant in
 * `revokedTenantId`), for the caller to drop that tenant's cached lookups. Each refusal is an `invalid_grant`.
 */
export async function consumeCode(
  pool: pg.Pool,
  code: string,
  check: { clientId: string; redirectUri: string; codeVerifier: string; resource: string },
): Promise<{ tenantId: string; keyId: string; scope: string }> {
  const hash = sha256(code);
  const { rows } = await pool.query<{
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
    const { rows: used } = await pool.query<{ tenant_id: string; key_id: string }>(
      'SELECT tenant_id, key_id FROM oauth_codes WHERE hash = $1',
      [hash],
    );
    const [replayed] = used;
    if (replayed === undefined) {
      throw invalidGrant('Unknown authorization code.');
    }
    await revokeConnection(pool, replayed.tenant_id, replayed.key_id);
    const refusal = invalidGrant(
      'Authorization code was already used; the connection it authorized is revoked with its access and refresh tokens. Approve the app again to reconnect.',
    );
    refusal.context.revokedKeyId = replayed.key_id;
    refusal.context.revokedTenantId = replayed.tenant_id;
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
