import { CalgateError } from '@calgate/core';
import type { Database } from './db.ts';
import type { SecretBinding, SecretBox } from './secret-box.ts';

/** A person's authenticator as the gateway needs it: the opened secret and its state. */
export interface TotpRecord {
  userId: string;
  tenantId: string;
  /** Base32, opened from its sealed form. */
  secret: string;
  confirmedAt: Date | null;
  /** The newest time step a code was accepted for; no code of that step or earlier counts. */
  lastUsedStep: number | null;
  recoveryCodesLeft: number;
}

interface Row {
  user_id: string;
  tenant_id: string;
  secret: Buffer;
  secret_key_id: string;
  confirmed_at: Date | null;
  last_used_step: string | null;
  recovery_codes_left: number;
}

/** The sealed secret is bound to the tenant and the user, so a row copied to another will not open. */
function bindingOf(tenantId: string, userId: string): SecretBinding {
  return { tenantId, connectionId: `totp:${userId}` };
}

/**
 * Two-step sign-in secrets in `user_totp`, one row per user. Every change that must not race
 * (confirming, spending a time step, spending a recovery code) is one conditional UPDATE, so
 * two requests with the same code cannot both succeed.
 */
export class TotpRepository {
  readonly #db: Database;
  readonly #box: SecretBox;

  constructor(db: Database, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  /** The user's authenticator (set up or in set-up), or null. */
  async get(tenantId: string, userId: string): Promise<TotpRecord | null> {
    const { rows } = await this.#db.pool.query<Row>(
      `SELECT user_id, tenant_id, secret, secret_key_id, confirmed_at, last_used_step,
              cardinality(recovery_code_hashes) AS recovery_codes_left
       FROM user_totp WHERE user_id = $1 AND tenant_id = $2`,
      [userId, tenantId],
    );
    const [row] = rows;
    if (row === undefined) {
      return null;
    }
    return {
      userId: row.user_id,
      tenantId: row.tenant_id,
      secret: this.#box.open(
        { keyId: row.secret_key_id, ciphertext: row.secret },
        bindingOf(tenantId, userId),
      ),
      confirmedAt: row.confirmed_at,
      lastUsedStep: row.last_used_step === null ? null : Number(row.last_used_step),
      recoveryCodesLeft: row.recovery_codes_left,
    };
  }

  /** True when sign-in of this user needs a second step. */
  async isEnabled(tenantId: string, userId: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      'SELECT 1 FROM user_totp WHERE user_id = $1 AND tenant_id = $2 AND confirmed_at IS NOT NULL',
      [userId, tenantId],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Stores a new, unconfirmed secret, replacing an unfinished set-up. Refused with a conflict
   * when two-step sign-in is already on: it has to be disabled first.
   */
  async begin(tenantId: string, userId: string, secret: string): Promise<void> {
    const sealed = this.#box.seal(secret, bindingOf(tenantId, userId));
    const { rowCount } = await this.#db.pool.query(
      `INSERT INTO user_totp (user_id, tenant_id, secret, secret_key_id)
       SELECT u.id, u.tenant_id, $3, $4 FROM users u WHERE u.id = $1 AND u.tenant_id = $2
       ON CONFLICT (user_id) DO UPDATE
         SET secret = EXCLUDED.secret, secret_key_id = EXCLUDED.secret_key_id,
             last_used_step = NULL, recovery_code_hashes = ARRAY[]::text[], created_at = now()
         WHERE user_totp.confirmed_at IS NULL`,
      [userId, tenantId, Buffer.from(sealed.ciphertext), sealed.keyId],
    );
    if ((rowCount ?? 0) === 0) {
      throw new CalgateError(
        'conflict',
        'Two-step sign-in is already on for this account; disable it before setting it up again.',
      );
    }
  }

  /**
   * Turns two-step sign-in on with the step of the code that proved the set-up and the hashes
   * of the recovery codes; false when there was no unfinished set-up.
   */
  async confirm(
    tenantId: string,
    userId: string,
    step: number,
    recoveryHashes: readonly string[],
  ): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      `UPDATE user_totp SET confirmed_at = now(), last_used_step = $3, recovery_code_hashes = $4
       WHERE user_id = $1 AND tenant_id = $2 AND confirmed_at IS NULL`,
      [userId, tenantId, step, recoveryHashes],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Spends a time step: true when `step` is newer than every step used before (and is now the
   * newest), false when it or a later one was already used — a replayed code.
   */
  async useStep(tenantId: string, userId: string, step: number): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      `UPDATE user_totp SET last_used_step = $3
       WHERE user_id = $1 AND tenant_id = $2 AND confirmed_at IS NOT NULL
         AND (last_used_step IS NULL OR last_used_step < $3)`,
      [userId, tenantId, step],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Spends a recovery code by its hash: true once, false when unknown or already spent. */
  async useRecoveryCode(tenantId: string, userId: string, hash: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      `UPDATE user_totp SET recovery_code_hashes = array_remove(recovery_code_hashes, $3)
       WHERE user_id = $1 AND tenant_id = $2 AND confirmed_at IS NOT NULL
         AND $3 = ANY(recovery_code_hashes)`,
      [userId, tenantId, hash],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Removes the authenticator (set up or not); false when there was none. */
  async remove(tenantId: string, userId: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query(
      'DELETE FROM user_totp WHERE user_id = $1 AND tenant_id = $2',
      [userId, tenantId],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Re-seals every secret not sealed with the active key (part of `calgate secrets reseal`,
   * the last step of a master-key rotation). Rows no configured key opens are reported by user
   * id and left as they are.
   */
  async resealAll(): Promise<{ resealed: number; unreadable: string[] }> {
    const { rows } = await this.#db.pool.query<
      Pick<Row, 'user_id' | 'tenant_id' | 'secret' | 'secret_key_id'>
    >('SELECT user_id, tenant_id, secret, secret_key_id FROM user_totp WHERE secret_key_id <> $1', [
      this.#box.activeKeyId,
    ]);
    let resealed = 0;
    const unreadable: string[] = [];
    for (const row of rows) {
      const binding = bindingOf(row.tenant_id, row.user_id);
      let secret: string;
      try {
        secret = this.#box.open({ keyId: row.secret_key_id, ciphertext: row.secret }, binding);
      } catch {
        unreadable.push(row.user_id);
        continue;
      }
      const sealed = this.#box.seal(secret, binding);
      const { rowCount } = await this.#db.pool.query(
        'UPDATE user_totp SET secret = $2, secret_key_id = $3 WHERE user_id = $1 AND secret_key_id = $4',
        [row.user_id, Buffer.from(sealed.ciphertext), sealed.keyId, row.secret_key_id],
      );
      resealed += rowCount ?? 0;
    }
    return { resealed, unreadable };
  }

  /**
   * The user's role when the users table has one (owner, admin, member, auditor), else null.
   * Read through to_jsonb so this works on databases with or without a `role` column.
   */
  async roleOf(tenantId: string, userId: string): Promise<string | null> {
    const { rows } = await this.#db.pool.query<{ role: string | null }>(
      `SELECT to_jsonb(u) ->> 'role' AS role FROM users u WHERE u.id = $1 AND u.tenant_id = $2`,
      [userId, tenantId],
    );
    return rows[0]?.role ?? null;
  }
}
