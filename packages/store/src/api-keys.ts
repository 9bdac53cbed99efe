import { createHash, randomBytes } from 'node:crypto';
import { newId } from '@calgate/core';
import type { Prisma } from './db.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_CHARS = 32;
export const API_KEY_PREFIX = 'cg_live_';
/** `cg_live_` and 32 base62 characters: about 190 bits of randomness. */
export const API_KEY_PATTERN = /^cg_live_[A-Za-z0-9]{32}$/;

/** A new key secret, uniformly random over base62 (bytes ≥ 248 are rejected, not folded). */
export function generateApiKeySecret(): string {
  let body = '';
  while (body.length < SECRET_CHARS) {
    for (const byte of randomBytes(SECRET_CHARS)) {
      if (byte < 248 && body.length < SECRET_CHARS) {
        body += ALPHABET[byte % 62];
      }
    }
  }
  return `${API_KEY_PREFIX}${body}`;
}

export function hashApiKey(secret: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(secret, 'utf8').digest());
}

/** What is shown of a key after creation: enough to recognise it, never enough to use it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, API_KEY_PREFIX.length + 4);
}

export interface ApiKeySummary {
  id: string;
  tenantId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const SUMMARY = {
  id: true,
  tenantId: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const;

export class ApiKeyRepository {
  readonly #prisma: Prisma;

  constructor(prisma: Prisma) {
    this.#prisma = prisma;
  }

  /** Creates a key and returns its secret, which is stored only as a SHA-256 hash. */
  async create(
    tenantId: string,
    input: { name: string; expiresAt?: Date | null },
  ): Promise<{ key: ApiKeySummary; secret: string }> {
    const secret = generateApiKeySecret();
    const key = await this.#prisma.apiKey.create({
      data: {
        id: newId('key'),
        tenantId,
        name: input.name,
        prefix: displayPrefix(secret),
        hash: hashApiKey(secret),
        expiresAt: input.expiresAt ?? null,
      },
      select: SUMMARY,
    });
    return { key, secret };
  }

  list(tenantId: string): Promise<ApiKeySummary[]> {
    return this.#prisma.apiKey.findMany({
      where: { tenantId },
      orderBy: { createdAt: 'asc' },
      select: SUMMARY,
    });
  }

  get(tenantId: string, keyId: string): Promise<ApiKeySummary | null> {
    return this.#prisma.apiKey.findFirst({ where: { id: keyId, tenantId }, select: SUMMARY });
  }

  /** Revokes a key of this tenant; false when no such key exists (or it belongs to another tenant). */
  async revoke(tenantId: string, keyId: string, at = new Date()): Promise<boolean> {
    const { count } = await this.#prisma.apiKey.updateMany({
      where: { id: keyId, tenantId, revokedAt: null },
      data: { revokedAt: at },
    });
    if (count > 0) {
      return true;
    }
    return (await this.get(tenantId, keyId)) !== null;
  }

  /** Records use; called in batches so the hot path does not write per request. */
  async touch(keyIds: readonly string[], at = new Date()): Promise<void> {
    if (keyIds.length === 0) {
      return;
    }
    await this.#prisma.apiKey.updateMany({ where: { id: { in: [...keyIds] } }, data: { lastUsedAt: at } });
  }
}
