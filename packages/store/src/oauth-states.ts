import type { Database } from './db.ts';

export type GrantAccess = 'none' | 'read' | 'write';

export interface OAuthStateRecord {
  nonce: string;
  tenantId: string;
  userId: string | null;
  codeVerifier: string;
  grantAccess: GrantAccess;
  grantKeyIds: string[];
}

/** Pending OAuth consents, each usable exactly once before it expires. */
export class OAuthStateRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(state: OAuthStateRecord, ttlMs: number): Promise<void> {
    await this.#db.prisma.oAuthState.create({
      data: { ...state, expiresAt: new Date(Date.now() + ttlMs) },
    });
  }

  /**
   * Marks the state used and returns it, atomically: a second callback with the same state, an
   * expired state or another tenant's state gets null.
   */
  async consume(nonce: string, tenantId: string): Promise<OAuthStateRecord | null> {
    const { rows } = await this.#db.pool.query<{
      nonce: string;
      tenant_id: string;
      user_id: string | null;
      code_verifier: string;
      grant_access: GrantAccess;
      grant_key_ids: string[] | null;
    }>(
      `UPDATE oauth_states SET consumed_at = now()
       WHERE nonce = $1 AND tenant_id = $2 AND consumed_at IS NULL AND expires_at > now()
       RETURNING nonce, tenant_id, user_id, code_verifier, grant_access, grant_key_ids`,
      [nonce, tenantId],
    );
    const [row] = rows;
    if (row === undefined) {
      return null;
    }
    return {
      nonce: row.nonce,
      tenantId: row.tenant_id,
      userId: row.user_id,
      codeVerifier: row.code_verifier,
      grantAccess: row.grant_access,
      grantKeyIds: row.grant_key_ids ?? [],
    };
  }

  /** Removes states that can no longer be used. */
  async prune(): Promise<number> {
    const { rowCount } = await this.#db.pool.query(
      `DELETE FROM oauth_states WHERE expires_at < now() - interval '1 day'`,
    );
    return rowCount ?? 0;
  }
}
