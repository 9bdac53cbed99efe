import { createHash, randomBytes } from 'node:crypto';
import { newId } from '@calgate/core';
import type { PoolClient } from 'pg';
import type { Database } from './db.ts';

/** What a person may do in their tenant; the gateway's roles.ts says which routes each reaches. */
export const ROLES = ['owner', 'admin', 'member', 'auditor'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** How long an invitation link and a password-reset link work. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const PASSWORD_RESET_TTL_MS = 60 * 60 * 1000;

/** 32 random bytes, base64url: the only form an invitation or reset token takes. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function newToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export interface MemberRecord {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
}

export interface InvitationRecord {
  id: string;
  tenantId: string;
  email: string;
  role: Role;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Why a link does not work; the gateway turns each into its own 400 message. */
export type LinkProblem = 'unknown' | 'expired' | 'used' | 'revoked';

export type LinkOutcome<T> = { ok: true; value: T } | { ok: false; problem: LinkProblem | 'email_taken' };

interface InvitationRow {
  id: string;
  tenant_id: string;
  email: string;
  role: Role;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
  tenant_name: string;
}

const INVITATION_COLUMNS =
  'i.id, i.tenant_id, i.email, i.role, i.invited_by, i.created_at, i.expires_at, i.accepted_at, i.revoked_at, t.name AS tenant_name';

function invitation(row: InvitationRow): InvitationRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    email: row.email,
    role: row.role,
    invitedBy: row.invited_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

function problemOf(row: InvitationRow | undefined, now: Date): LinkProblem | null {
  if (row === undefined) {
    return 'unknown';
  }
  if (row.revoked_at !== null) {
    return 'revoked';
  }
  if (row.accepted_at !== null) {
    return 'used';
  }
  return row.expires_at <= now ? 'expired' : null;
}

/** Serialises role changes and removals within a tenant, so two admins cannot demote the last two owners at once. */
const OWNERS_LOCK = 0x6367_6f77;

/**
 * People in tenants: roles, invitations and password-reset links. Tokens live only in the links
 * (the tables keep SHA-256 hashes) and every link is single-use, checked and spent in one
 * transaction with the row locked.
 */
export class PeopleRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** The role of a user of this tenant, or null when there is no such user. */
  async roleOf(tenantId: string, userId: string): Promise<Role | null> {
    const { rows } = await this.#db.pool.query<{ role: Role }>(
      'SELECT role FROM users WHERE id = $1 AND tenant_id = $2',
      [userId, tenantId],
    );
    return rows[0]?.role ?? null;
  }

  async listMembers(tenantId: string): Promise<MemberRecord[]> {
    const { rows } = await this.#db.pool.query<{ id: string; email: string; role: Role; created_at: Date }>(
      'SELECT id, email, role, created_at FROM users WHERE tenant_id = $1 ORDER BY created_at, email',
      [tenantId],
    );
    return rows.map((row) => ({ id: row.id, email: row.email, role: row.role, createdAt: row.created_at }));
  }

  /** Invitations that can still be accepted, newest first. */
  async pendingInvitations(tenantId: string): Promise<InvitationRecord[]> {
    const { rows } = await this.#db.pool.query<InvitationRow>(
      `SELECT ${INVITATION_COLUMNS} FROM invitations i JOIN tenants t ON t.id = i.tenant_id
       WHERE i.tenant_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
       ORDER BY i.created_at DESC`,
      [tenantId],
    );
    return rows.map(invitation);
  }

  /**
   * A new invitation and its token (for the link, never stored). `email_taken` when someone
   * already signs in with that address (emails are unique across the install).
   */
  async invite(input: {
    tenantId: string;
    email: string;
    role: Role;
    invitedBy: string | null;
  }): Promise<
    { ok: true; invitation: InvitationRecord; token: string } | { ok: false; problem: 'email_taken' }
  > {
    const taken = await this.#db.pool.query('SELECT 1 FROM users WHERE email = $1', [input.email]);
    if ((taken.rowCount ?? 0) > 0) {
      return { ok: false, problem: 'email_taken' };
    }
    const { token, hash } = newToken();
    const { rows } = await this.#db.pool.query<InvitationRow>(
      `WITH i AS (
         INSERT INTO invitations (id, tenant_id, email, role, token_hash, invited_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7::double precision / 1000))
         RETURNING *
       )
       SELECT ${INVITATION_COLUMNS} FROM i JOIN tenants t ON t.id = i.tenant_id`,
      [newId('inv'), input.tenantId, input.email, input.role, hash, input.invitedBy, INVITATION_TTL_MS],
    );
    const [row] = rows;
    if (row === undefined) {
      throw new Error(`tenant ${input.tenantId} vanished while inviting`);
    }
    return { ok: true, invitation: invitation(row), token };
  }

  /** Revokes a pending invitation of this tenant; false when there is none to revoke. */
  async revokeInvitation(tenantId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      `UPDATE invitations SET revoked_at = now()
       WHERE id = $1 AND tenant_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
      [id, tenantId],
    );
    return (rowCount ?? 0) > 0;
  }

  /** What an invitation link offers (for the accept page), without spending it. */
  async lookupInvitation(token: string): Promise<LinkOutcome<InvitationRecord & { tenantName: string }>> {
    if (!TOKEN_PATTERN.test(token)) {
      return { ok: false, problem: 'unknown' };
    }
    const { rows } = await this.#db.pool.query<InvitationRow & { now: Date }>(
      `SELECT ${INVITATION_COLUMNS}, now() AS now FROM invitations i JOIN tenants t ON t.id = i.tenant_id
       WHERE i.token_hash = $1`,
      [hashToken(token)],
    );
    const [row] = rows;
    const problem = problemOf(row, row?.now ?? new Date());
    if (problem !== null || row === undefined) {
      return { ok: false, problem: problem ?? 'unknown' };
    }
    return { ok: true, value: { ...invitation(row), tenantName: row.tenant_name } };
  }

  /** Spends an invitation: creates its user with the role and password hash, in one transaction. */
  acceptInvitation(
    token: string,
    passwordHash: string,
  ): Promise<LinkOutcome<{ userId: string; tenantId: string; email: string; role: Role }>> {
    if (!TOKEN_PATTERN.test(token)) {
      return Promise.resolve({ ok: false, problem: 'unknown' });
    }
    return this.#transaction(async (client) => {
      const { rows } = await client.query<InvitationRow & { now: Date }>(
        `SELECT ${INVITATION_COLUMNS}, now() AS now FROM invitations i JOIN tenants t ON t.id = i.tenant_id
         WHERE i.token_hash = $1 FOR UPDATE OF i`,
        [hashToken(token)],
      );
      const [row] = rows;
      const problem = problemOf(row, row?.now ?? new Date());
      if (problem !== null || row === undefined) {
        return { ok: false, problem: problem ?? 'unknown' };
      }
      const userId = newId('usr');
      const created = await client.query(
        `INSERT INTO users (id, tenant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (email) DO NOTHING`,
        [userId, row.tenant_id, row.email, passwordHash, row.role],
      );
      if ((created.rowCount ?? 0) === 0) {
        return { ok: false, problem: 'email_taken' };
      }
      await client.query('UPDATE invitations SET accepted_at = now() WHERE id = $1', [row.id]);
      return { ok: true, value: { userId, tenantId: row.tenant_id, email: row.email, role: row.role } };
    });
  }

  /**
   * Changes a member's role; `last_owner` when that would leave the tenant without an owner,
   * `not_found` when there is no such member.
   */
  setRole(tenantId: string, userId: string, role: Role): Promise<'ok' | 'not_found' | 'last_owner'> {
    return this.#transaction(async (client) => {
      const current = await this.#lockOwners(client, tenantId, userId);
      if (current === null) {
        return 'not_found';
      }
      if (current.role === 'owner' && role !== 'owner' && current.owners <= 1) {
        return 'last_owner';
      }
      await client.query('UPDATE users SET role = $1 WHERE id = $2 AND tenant_id = $3', [
        role,
        userId,
        tenantId,
      ]);
      return 'ok';
    });
  }

  /**
   * Removes a member: revokes the API keys they created and the apps they connected, then deletes
   * the user (their sessions and reset links go with it). Refuses to remove the last owner.
   */
  removeMember(
    tenantId: string,
    userId: string,
  ): Promise<{ outcome: 'not_found' } | { outcome: 'last_owner' } | { outcome: 'ok'; keysRevoked: number }> {
    return this.#transaction(async (client) => {
      const current = await this.#lockOwners(client, tenantId, userId);
      if (current === null) {
        return { outcome: 'not_found' };
      }
      if (current.role === 'owner' && current.owners <= 1) {
        return { outcome: 'last_owner' };
      }
      const revoked = await client.query(
        `UPDATE api_keys SET revoked_at = now()
         WHERE tenant_id = $1 AND (created_by = $2 OR user_id = $2) AND revoked_at IS NULL`,
        [tenantId, userId],
      );
      await client.query('DELETE FROM users WHERE id = $1 AND tenant_id = $2', [userId, tenantId]);
      return { outcome: 'ok', keysRevoked: revoked.rowCount ?? 0 };
    });
  }

  /** A one-hour reset link token for the user with this (normalised) email, or null. */
  async createPasswordReset(
    email: string,
  ): Promise<{ token: string; userId: string; tenantId: string } | null> {
    const { token, hash } = newToken();
    const { rows } = await this.#db.pool.query<{ user_id: string; tenant_id: string }>(
      `INSERT INTO password_resets (token_hash, user_id, expires_at)
       SELECT $1, u.id, now() + make_interval(secs => $3::double precision / 1000) FROM users u WHERE u.email = $2
       RETURNING user_id, (SELECT tenant_id FROM users WHERE id = user_id) AS tenant_id`,
      [hash, email, PASSWORD_RESET_TTL_MS],
    );
    const [row] = rows;
    return row === undefined ? null : { token, userId: row.user_id, tenantId: row.tenant_id };
  }

  /** Whether a reset link would work now, without spending it (so bad links cost no password hashing). */
  async checkPasswordReset(token: string): Promise<LinkProblem | null> {
    if (!TOKEN_PATTERN.test(token)) {
      return 'unknown';
    }
    const { rows } = await this.#db.pool.query<{ expired: boolean; used: boolean }>(
      'SELECT expires_at <= now() AS expired, used_at IS NOT NULL AS used FROM password_resets WHERE token_hash = $1',
      [hashToken(token)],
    );
    const [row] = rows;
    return row === undefined ? 'unknown' : row.used ? 'used' : row.expired ? 'expired' : null;
  }

  /** Spends a reset link: sets the password and ends every session of the user, in one transaction. */
  resetPassword(
    token: string,
    passwordHash: string,
  ): Promise<LinkOutcome<{ userId: string; tenantId: string }>> {
    if (!TOKEN_PATTERN.test(token)) {
      return Promise.resolve({ ok: false, problem: 'unknown' });
    }
    return this.#transaction(async (client) => {
      const { rows } = await client.query<{
        user_id: string;
        tenant_id: string;
        expires_at: Date;
        used_at: Date | null;
        now: Date;
      }>(
        `SELECT r.user_id, u.tenant_id, r.expires_at, r.used_at, now() AS now
         FROM password_resets r JOIN users u ON u.id = r.user_id WHERE r.token_hash = $1 FOR UPDATE OF r`,
        [hashToken(token)],
      );
      const [row] = rows;
      if (row === undefined) {
        return { ok: false, problem: 'unknown' };
      }
      if (row.used_at !== null) {
        return { ok: false, problem: 'used' };
      }
      if (row.expires_at <= row.now) {
        return { ok: false, problem: 'expired' };
      }
      await client.query('UPDATE password_resets SET used_at = now() WHERE token_hash = $1', [
        hashToken(token),
      ]);
      await client.query('UPDATE users SET password_hash = $1 WHERE id = $2', [passwordHash, row.user_id]);
      await client.query(
        'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()',
        [row.user_id],
      );
      return { ok: true, value: { userId: row.user_id, tenantId: row.tenant_id } };
    });
  }

  /**
   * Who created a key of this tenant and who approved it (OAuth connections); null when the key
   * does not exist in the tenant.
   */
  async keyOwnership(
    tenantId: string,
    keyId: string,
  ): Promise<{ kind: string; createdBy: string | null; userId: string | null } | null> {
    const { rows } = await this.#db.pool.query<{
      kind: string;
      created_by: string | null;
      user_id: string | null;
    }>('SELECT kind, created_by, user_id FROM api_keys WHERE id = $1 AND tenant_id = $2', [keyId, tenantId]);
    const [row] = rows;
    return row === undefined ? null : { kind: row.kind, createdBy: row.created_by, userId: row.user_id };
  }

  /** Records the dashboard user who created a key (rotation keeps the key's id, so it keeps its creator). */
  async setKeyCreator(tenantId: string, keyId: string, creator: { userId: string }): Promise<void> {
    await this.#db.pool.query('UPDATE api_keys SET created_by = $3 WHERE id = $1 AND tenant_id = $2', [
      keyId,
      tenantId,
      creator.userId,
    ]);
  }

  /** Locks the tenant's owner set; the member's role and how many owners there are, or null. */
  async #lockOwners(
    client: PoolClient,
    tenantId: string,
    userId: string,
  ): Promise<{ role: Role; owners: number } | null> {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [OWNERS_LOCK, tenantId]);
    const { rows } = await client.query<{ role: Role; owners: number }>(
      `SELECT role, (SELECT count(*)::int FROM users WHERE tenant_id = $2 AND role = 'owner') AS owners
       FROM users WHERE id = $1 AND tenant_id = $2`,
      [userId, tenantId],
    );
    return rows[0] ?? null;
  }

  async #transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#db.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
