import { createHash, randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { Database } from './db.ts';

/** 32 random bytes, base64url: the only form a session token takes. */
export const SESSION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function generateSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The row key of a session: SHA-256 of its token, so the table never holds a usable token. */
export function hashSessionToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A live session as the gateway sees it. `id` is the hex of the token's hash, safe to log. */
export interface SessionRecord {
  id: string;
  userId: string;
  tenantId: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  /** The User-Agent header the session signed in with, when known. */
  userAgent: string | null;
  /** The client address the session signed in from, as the gateway saw it, when known. */
  ip: string | null;
}

/** Where a sign-in came from, kept with its session for the sessions list. */
export interface SessionClient {
  userAgent?: string | undefined;
  ip?: string | undefined;
}

/** A User-Agent is kept to this many characters: enough to tell browsers apart. */
const USER_AGENT_MAX = 512;

interface Row {
  id: Buffer;
  user_id: string;
  tenant_id: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  user_agent: string | null;
  ip: string | null;
}

const COLUMNS = 'id, user_id, tenant_id, created_at, last_seen_at, expires_at, user_agent, ip';

function record(row: Row): SessionRecord {
  return {
    id: row.id.toString('hex'),
    userId: row.user_id,
    tenantId: row.tenant_id,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    userAgent: row.user_agent,
    ip: row.ip,
  };
}

/** How often `last_seen_at` is written at most: a busy dashboard reads, it does not write. */
const TOUCH_INTERVAL = '1 minute';

/** At most this many expired rows are deleted by one sign-in, so a sign-in stays quick. */
const SWEEP_BATCH = 1000;

/**
 * Dashboard sessions in Postgres. Every check is one indexed query against the database clock,
 * with no cache: a revocation holds on every gateway from the next request on.
 */
export class SessionRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * A new session for a user of `tenantId` lasting `ttlMs`; returns the token for the cookie.
   * Expired sessions of anyone are swept in the same statement.
   */
  async create(
    user: { userId: string; tenantId: string },
    ttlMs: number,
    client: SessionClient = {},
  ): Promise<{ token: string; session: SessionRecord }> {
    const token = generateSessionToken();
    const { rows } = await this.#db.pool.query<Row>(
      `WITH swept AS (
         DELETE FROM sessions WHERE id IN (
           SELECT id FROM sessions WHERE expires_at <= now() ORDER BY expires_at LIMIT ${SWEEP_BATCH}
         )
       )
       INSERT INTO sessions (id, user_id, tenant_id, expires_at, user_agent, ip)
       SELECT $1, u.id, u.tenant_id, now() + make_interval(secs => $4::double precision / 1000), $5, $6
       FROM users u WHERE u.id = $2 AND u.tenant_id = $3
       RETURNING ${COLUMNS}`,
      [
        hashSessionToken(token),
        user.userId,
        user.tenantId,
        ttlMs,
        client.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
        client.ip ?? null,
      ],
    );
    const [row] = rows;
    if (row === undefined) {
      throw new CalgateError('not_found', `No user ${user.userId} in tenant ${user.tenantId}.`);
    }
    return { token, session: record(row) };
  }

  /**
   * The live session for a token, or null when the token is malformed, unknown, revoked or
   * expired, or its user has left the tenant. Notes the visit at most once a minute.
   */
  async find(token: string): Promise<SessionRecord | null> {
    if (!SESSION_TOKEN_PATTERN.test(token)) {
      return null;
    }
    const { rows } = await this.#db.pool.query<Row>(
      `WITH live AS (
         SELECT s.id, s.user_id, s.tenant_id, s.created_at, s.last_seen_at, s.expires_at,
                s.user_agent, s.ip
         FROM sessions s JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id
         WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
       ), touched AS (
         UPDATE sessions SET last_seen_at = now()
         WHERE id = (SELECT id FROM live) AND last_seen_at < now() - interval '${TOUCH_INTERVAL}'
       )
       SELECT * FROM live`,
      [hashSessionToken(token)],
    );
    const [row] = rows;
    return row === undefined ? null : record(row);
  }

  /** Ends the session of a token; false when there was no live one. */
  async revoke(token: string): Promise<boolean> {
    if (!SESSION_TOKEN_PATTERN.test(token)) {
      return false;
    }
    const { rowCount } = await this.#db.pool.query(
      'UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()',
      [hashSessionToken(token)],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Ends one live session of a user by its id (hex of the token's hash); false when the user
   * has no such live session — another person's id included.
   */
  async revokeById(tenantId: string, userId: string, id: string): Promise<boolean> {
    if (!/^[0-9a-f]{64}$/.test(id)) {
      return false;
    }
    const { rowCount } = await this.#db.pool.query(
      `UPDATE sessions SET revoked_at = now()
       WHERE id = $1 AND user_id = $2 AND tenant_id = $3 AND revoked_at IS NULL AND expires_at > now()`,
      [Buffer.from(id, 'hex'), userId, tenantId],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Ends every live session of a user, except the one whose `id` is `exceptId`; returns how many. */
  async revokeAll(tenantId: string, userId: string, options: { exceptId?: string } = {}): Promise<number> {
    const except = options.exceptId === undefined ? null : Buffer.from(options.exceptId, 'hex');
    const { rowCount } = await this.#db.pool.query(
      `UPDATE sessions SET revoked_at = now()
       WHERE user_id = $1 AND tenant_id = $2 AND revoked_at IS NULL AND expires_at > now()
         AND ($3::bytea IS NULL OR id <> $3::bytea)`,
      [userId, tenantId, except],
    );
    return rowCount ?? 0;
  }

  /** A user's live sessions, newest first. */
  async list(tenantId: string, userId: string): Promise<SessionRecord[]> {
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT ${COLUMNS} FROM sessions
       WHERE user_id = $1 AND tenant_id = $2 AND revoked_at IS NULL AND expires_at > now()
       ORDER BY created_at DESC`,
      [userId, tenantId],
    );
    return rows.map(record);
  }

  /** Deletes every expired session (revoked ones go once they would have expired). */
  async prune(): Promise<number> {
    const { rowCount } = await this.#db.pool.query('DELETE FROM sessions WHERE expires_at <= now()');
    return rowCount ?? 0;
  }
}
