import { randomBytes } from 'node:crypto';
import { CalgateError, newId } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import type { SecretBox } from '../secret-box.ts';
import { cleanText, ms, pgCode, quoted, UNIQUE_VIOLATION } from '../sql.ts';
import {
  AGENT_ID_MAX,
  type CreatedTarget,
  type NewTarget,
  TARGET_NAME_MAX,
  TARGET_URL_MAX,
  type TargetKind,
  type TargetRecord,
  TargetSecret,
} from './model.ts';

const API_KEY_MAX = 4096;

interface TargetRow {
  id: string;
  tenant_id: string;
  kind: TargetKind;
  name: string;
  url: string;
  default_agent_id: string | null;
  disabled_at: number | null;
  disabled_reason: string | null;
  created_at: number;
}

const TARGET_COLUMNS = `id, tenant_id, kind, name, url, default_agent_id, ${ms('disabled_at')}, disabled_reason, ${ms('created_at')}`;

function target(row: TargetRow): TargetRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: row.kind,
    name: row.name,
    url: row.url,
    defaultAgentId: row.default_agent_id,
    disabledAt: row.disabled_at === null ? null : new Date(row.disabled_at),
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at),
  };
}

export const targetNotFound = (id: string) =>
  new CalgateError('not_found', `No delivery target ${id} in this tenant.`);

/**
 * The tenant's delivery targets. Secrets are sealed with SecretBox to the tenant and target ids,
 * never returned by reads, and opened only by `openSecret` for delivery.
 */
export class DeliveryTargetRepository {
  readonly #pool: pg.Pool;
  readonly #box: SecretBox;

  constructor(db: Database, box: SecretBox) {
    this.#pool = db.pool;
    this.#box = box;
  }

  async create(tenantId: string, input: NewTarget): Promise<CreatedTarget> {
    const kind = cleanKind(input.kind);
    const name = cleanText(input.name, 'Target name', TARGET_NAME_MAX);
    const url = cleanUrl(input.url);
    let secret: string;
    let defaultAgentId: string | null = null;
    if (input.kind === 'letta') {
      secret = cleanApiKey(input.apiKey);
      defaultAgentId =
        input.defaultAgentId == null
          ? null
          : cleanText(input.defaultAgentId, 'Default agent id', AGENT_ID_MAX);
    } else {
      secret = `whsec_${randomBytes(32).toString('base64')}`;
    }
    const id = newId('tgt');
    const sealed = this.#box.seal(secret, { tenantId, connectionId: id });
    try {
      const { rows } = await this.#pool.query<TargetRow>(
        `INSERT INTO delivery_targets (id, tenant_id, kind, name, url, secret_key_id, sealed_secret, default_agent_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING ${TARGET_COLUMNS}`,
        [id, tenantId, kind, name, url, sealed.keyId, Buffer.from(sealed.ciphertext), defaultAgentId],
      );
      return { target: target(rows[0] as TargetRow), secret: kind === 'webhook' ? secret : null };
    } catch (error) {
      const { code, constraint } = pgCode(error);
      if (code === UNIQUE_VIOLATION && constraint === 'delivery_targets_tenant_id_name_key') {
        throw new CalgateError(
          'already_exists',
          `A delivery target named ${quoted(name)} already exists in this tenant; names are unique whatever their case.`,
        );
      }
      throw error;
    }
  }

  /** By name (case-insensitive order), disabled ones included. */
  async list(tenantId: string): Promise<TargetRecord[]> {
    const { rows } = await this.#pool.query<TargetRow>(
      `SELECT ${TARGET_COLUMNS} FROM delivery_targets WHERE tenant_id = $1 ORDER BY lower(name), id`,
      [tenantId],
    );
    return rows.map(target);
  }

  async get(tenantId: string, targetId: string): Promise<TargetRecord | null> {
    const { rows } = await this.#pool.query<TargetRow>(
      `SELECT ${TARGET_COLUMNS} FROM delivery_targets WHERE tenant_id = $1 AND id = $2`,
      [tenantId, targetId],
    );
    const [row] = rows;
    return row === undefined ? null : target(row);
  }

  /**
   * Deletes a target. Refused (`precondition_failed`, with the schedule ids) while active or
   * paused schedules deliver to it; cancelled and finished ones keep their history without it.
   */
  async delete(tenantId: string, targetId: string): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ name: string }>(
        'SELECT name FROM delivery_targets WHERE tenant_id = $1 AND id = $2 FOR UPDATE',
        [tenantId, targetId],
      );
      const [found] = rows;
      if (found === undefined) {
        throw targetNotFound(targetId);
      }
      const { rows: live } = await client.query<{ id: string }>(
        `SELECT id FROM schedules WHERE tenant_id = $1 AND target_id = $2 AND status IN ('active', 'paused')
          ORDER BY created_at, id`,
        [tenantId, targetId],
      );
      if (live.length > 0) {
        const ids = live.map((schedule) => schedule.id);
        const count = ids.length === 1 ? 'a schedule delivers' : `${ids.length} schedules deliver`;
        throw new CalgateError(
          'precondition_failed',
          `Delivery target ${quoted(found.name)} cannot be deleted while ${count} to it; cancel those schedules first.`,
          { context: { scheduleIds: ids } },
        );
      }
      await client.query('DELETE FROM delivery_targets WHERE tenant_id = $1 AND id = $2', [
        tenantId,
        targetId,
      ]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /** Stops deliveries to the target (e.g. after a 410 Gone); a second call keeps the first time and reason. */
  async disable(tenantId: string, targetId: string, reason: string): Promise<TargetRecord> {
    const why = cleanText(reason, 'Reason', 500);
    const { rows } = await this.#pool.query<TargetRow>(
      `UPDATE delivery_targets SET
          disabled_reason = CASE WHEN disabled_at IS NULL THEN $3 ELSE disabled_reason END,
          disabled_at = coalesce(disabled_at, now())
        WHERE tenant_id = $1 AND id = $2
        RETURNING ${TARGET_COLUMNS}`,
      [tenantId, targetId, why],
    );
    const [row] = rows;
    if (row === undefined) {
      throw targetNotFound(targetId);
    }
    return target(row);
  }

  async enable(tenantId: string, targetId: string): Promise<TargetRecord> {
    const { rows } = await this.#pool.query<TargetRow>(
      `UPDATE delivery_targets SET disabled_at = NULL, disabled_reason = NULL
        WHERE tenant_id = $1 AND id = $2
        RETURNING ${TARGET_COLUMNS}`,
      [tenantId, targetId],
    );
    const [row] = rows;
    if (row === undefined) {
      throw targetNotFound(targetId);
    }
    return target(row);
  }

  /** The target with its opened secret (the webhook's `whsec_` or Letta's API key), for delivery. */
  async openSecret(
    tenantId: string,
    targetId: string,
  ): Promise<{ target: TargetRecord; secret: TargetSecret }> {
    const { rows } = await this.#pool.query<TargetRow & { secret_key_id: string; sealed_secret: Buffer }>(
      `SELECT ${TARGET_COLUMNS}, secret_key_id, sealed_secret FROM delivery_targets WHERE tenant_id = $1 AND id = $2`,
      [tenantId, targetId],
    );
    const [row] = rows;
    if (row === undefined) {
      throw targetNotFound(targetId);
    }
    const plaintext = this.#box.open(
      { keyId: row.secret_key_id, ciphertext: row.sealed_secret },
      { tenantId, connectionId: targetId },
    );
    return { target: target(row), secret: new TargetSecret(plaintext) };
  }

  /**
   * Re-seals every target secret not sealed with the active master key (a key rotation's last
   * step). Secrets no configured key can open are left untouched and reported by target id.
   */
  async resealAll(): Promise<{ resealed: number; unreadable: string[] }> {
    const { rows } = await this.#pool.query<{
      id: string;
      tenant_id: string;
      secret_key_id: string;
      sealed_secret: Buffer;
    }>(
      `SELECT id, tenant_id, secret_key_id, sealed_secret FROM delivery_targets WHERE secret_key_id <> $1 ORDER BY id`,
      [this.#box.activeKeyId],
    );
    let resealed = 0;
    const unreadable: string[] = [];
    for (const row of rows) {
      const binding = { tenantId: row.tenant_id, connectionId: row.id };
      let plaintext: string;
      try {
        plaintext = this.#box.open({ keyId: row.secret_key_id, ciphertext: row.sealed_secret }, binding);
      } catch {
        unreadable.push(row.id);
        continue;
      }
      const sealed = this.#box.seal(plaintext, binding);
      await this.#pool.query(
        `UPDATE delivery_targets SET secret_key_id = $3, sealed_secret = $4
          WHERE tenant_id = $1 AND id = $2 AND secret_key_id = $5`,
        [row.tenant_id, row.id, sealed.keyId, Buffer.from(sealed.ciphertext), row.secret_key_id],
      );
      resealed += 1;
    }
    return { resealed, unreadable };
  }
}

function cleanKind(kind: unknown): TargetKind {
  if (kind !== 'webhook' && kind !== 'letta') {
    throw new CalgateError(
      'invalid_argument',
      `Target kind must be 'webhook' or 'letta', got ${typeof kind === 'string' ? quoted(kind) : typeof kind}.`,
    );
  }
  return kind;
}

/** An absolute http(s) URL without user info; the URL itself is never repeated (it may carry a token). */
function cleanUrl(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new CalgateError('invalid_argument', 'Target URL must be a non-empty string.');
  }
  const text = value.trim();
  if (text.length > TARGET_URL_MAX) {
    throw new CalgateError(
      'invalid_argument',
      `Target URL is ${text.length.toLocaleString('en')} characters long; at most ${TARGET_URL_MAX.toLocaleString('en')} are allowed.`,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CalgateError(
      'invalid_argument',
      'Target URL is not an absolute URL (e.g. https://example.com/hook).',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CalgateError(
      'invalid_argument',
      `Target URL must use http or https, not ${url.protocol.slice(0, -1)}.`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new CalgateError(
      'invalid_argument',
      'Target URL must not contain a user name or password; a Letta API key goes in apiKey, and webhooks are signed.',
    );
  }
  return text;
}

/** Checks a Letta API key without ever quoting it. */
function cleanApiKey(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new CalgateError('invalid_argument', 'A Letta target needs a non-empty API key.');
  }
  const key = value.trim();
  if (key.length > API_KEY_MAX || /[\s\p{Cc}]/u.test(key)) {
    throw new CalgateError(
      'invalid_argument',
      `The Letta API key must be at most ${API_KEY_MAX} characters without spaces or control characters.`,
    );
  }
  return key;
}
