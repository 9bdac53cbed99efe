/**
 * Rotating refresh tokens: issued in families, exchanged once for the next of their family (a
 * reused one revokes the whole family), revoked by family (RFC 7009) or with their connection.
 */
import { randomUUID } from 'node:crypto';
import type { CalgateError } from '@calgate/core';
import type pg from 'pg';
import { generateRefreshToken, invalidGrant, sha256, URL_MAX } from '../oauth-validation.ts';
import { cleanText, quoted } from '../sql.ts';
import { connectionClient } from './connections.ts';

const REFRESH_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Issues a refresh token for a live connection, in a new family unless one is given. */
export async function issueRefreshToken(
  pool: pg.Pool,
  input: {
    tenantId: string;
    keyId: string;
    clientId: string;
    resource: string;
    familyId?: string;
    ttlMs?: number;
  },
): Promise<string> {
  const resource = cleanText(input.resource, 'Resource', URL_MAX);
  const found = await connectionClient(pool, input.tenantId, input.keyId, input.clientId);
  const token = generateRefreshToken();
  await insertRefreshToken(pool, token, {
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
export async function rotateRefreshToken(
  pool: pg.Pool,
  token: string,
  check: { clientId: string; resource: string; ttlMs?: number },
): Promise<{ tenantId: string; keyId: string; newToken: string }> {
  const client = await pool.connect();
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
 * Revokes the family of a refresh token issued to `clientId` (RFC 7009); false when there is
 * no such token for that client, which the endpoint answers like a success.
 */
export async function revokeRefreshTokenFamily(
  pool: pg.Pool,
  token: string,
  clientId: string,
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE oauth_refresh_tokens r SET revoked_at = now()
     FROM oauth_refresh_tokens t JOIN oauth_clients o ON o.id = t.client_id
     WHERE t.hash = $1 AND o.client_id = $2 AND r.family_id = t.family_id AND r.revoked_at IS NULL`,
    [sha256(token), clientId],
  );
  return (rowCount ?? 0) > 0;
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

export async function revokeRefreshTokens(db: Queryable, where: string, values: unknown[]): Promise<void> {
  await db.query(
    `UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE ${where} AND revoked_at IS NULL`,
    values,
  );
}
