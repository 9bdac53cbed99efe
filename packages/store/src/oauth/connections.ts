/**
 * OAuth connections, the consent a person gave an app: api_keys rows of kind 'oauth' with their
 * toolsets, grants and hijack policy, listed, changed and revoked as keys are.
 */
import { randomBytes } from 'node:crypto';
import { CalgateError, newId } from '@calgate/core';
import type pg from 'pg';
import { HIJACK_POLICIES, type HijackPolicy, validateToolsets } from '../api-keys.ts';
import { cleanText, FOREIGN_KEY_VIOLATION, ms, pgCode, quoted } from '../sql.ts';
import { clientNotFound } from './clients.ts';
import { revokeRefreshTokens } from './refresh-tokens.ts';

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

const connectionNotFound = (keyId: string) =>
  new CalgateError('not_found', `No OAuth connection ${keyId} in this tenant.`);

/**
 * Creates the connection a user approved for a client: an api_keys row of kind 'oauth' with
 * its toolsets and grants (write implies read), in one transaction. The same person approving
 * the same app again updates their live connection instead. Returns its key id.
 */
export async function createConnection(pool: pg.Pool, input: NewConnection): Promise<string> {
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
  const client = await pool.connect();
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
      await client.query('DELETE FROM grants WHERE tenant_id = $1 AND key_id = $2', [input.tenantId, keyId]);
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
export async function listConnections(pool: pg.Pool, tenantId: string): Promise<OAuthConnection[]> {
  const { rows } = await pool.query<{
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
export async function setHijackPolicy(
  pool: pg.Pool,
  tenantId: string,
  keyId: string,
  policy: string,
): Promise<void> {
  const value = checkedPolicy(policy);
  const { rows } = await pool.query<{ revoked: boolean }>(
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
    throw new CalgateError('conflict', `Connection ${keyId} is revoked; its settings can no longer change.`);
  }
}

/** Revokes a connection (api_keys.revoked_at, as for keys) and every refresh token of it. */
export async function revokeConnection(pool: pg.Pool, tenantId: string, keyId: string): Promise<void> {
  const client = await pool.connect();
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
export async function connectionClient(
  pool: pg.Pool,
  tenantId: string,
  keyId: string,
  clientId: string,
): Promise<{ id: string; redirectUris: string[] }> {
  const { rows } = await pool.query<{ id: string; redirect_uris: string[]; revoked: boolean }>(
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
