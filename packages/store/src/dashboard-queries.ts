import { CalgateError, newId } from '@calgate/core';
import { type ApiKeySummary, displayPrefix, generateApiKeySecret, hashApiKey } from './api-keys.ts';
import type { Prisma } from './db.ts';

const KEY_SUMMARY = {
  id: true,
  tenantId: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const;

/**
 * Replaces a live key by a new one with the same name, expiry, grants, defaults and toolsets, and revokes the old one,
 * in one transaction. Null when the key is not this tenant's (or is an OAuth connection); a conflict when it is already revoked.
 */
export function rotateApiKey(
  prisma: Prisma,
  tenantId: string,
  keyId: string,
  at = new Date(),
): Promise<{ key: ApiKeySummary; secret: string; replaced: string } | null> {
  return prisma.$transaction(async (tx) => {
    // An OAuth connection has no secret to rotate; it is not a key here.
    const old = await tx.apiKey.findFirst({
      where: { id: keyId, tenantId, kind: 'key' },
      select: { ...KEY_SUMMARY, defaultCalendarId: true, timeZone: true, toolsets: true },
    });
    if (old === null) {
      return null;
    }
    const { count } = await tx.apiKey.updateMany({
      where: { id: keyId, tenantId, revokedAt: null },
      data: { revokedAt: at },
    });
    if (count === 0) {
      throw new CalgateError('conflict', `API key ${keyId} is already revoked; create a new key instead.`);
    }
    const secret = generateApiKeySecret();
    const key = await tx.apiKey.create({
      data: {
        id: newId('key'),
        tenantId,
        name: old.name,
        prefix: displayPrefix(secret),
        hash: hashApiKey(secret),
        expiresAt: old.expiresAt,
        defaultCalendarId: old.defaultCalendarId,
        timeZone: old.timeZone,
        toolsets: old.toolsets,
      },
      select: KEY_SUMMARY,
    });
    const grants = await tx.grant.findMany({ where: { tenantId, keyId } });
    if (grants.length > 0) {
      await tx.grant.createMany({
        data: grants.map((grant) => ({
          tenantId,
          keyId: key.id,
          calendarId: grant.calendarId,
          canRead: grant.canRead,
          canWrite: grant.canWrite,
        })),
      });
    }
    return { key, secret, replaced: keyId };
  });
}

/** Enables or disables a calendar for every key; false when it is not this tenant's. */
export async function setCalendarEnabled(
  prisma: Prisma,
  tenantId: string,
  calendarId: string,
  enabled: boolean,
): Promise<boolean> {
  const { count } = await prisma.calendar.updateMany({
    where: { id: calendarId, tenantId },
    data: { enabled },
  });
  return count > 0;
}

export interface AuditQuery {
  keyId?: string;
  tool?: string;
  outcome?: 'ok' | 'error' | 'denied';
  /** Entries older than this entry id (the cursor of the previous page). */
  before?: bigint;
  limit: number;
}

/** A tenant's audit entries, newest first, filtered, one page past `before`. */
export function queryAudit(prisma: Prisma, tenantId: string, query: AuditQuery) {
  return prisma.auditEntry.findMany({
    where: {
      tenantId,
      ...(query.keyId === undefined ? {} : { keyId: query.keyId }),
      ...(query.tool === undefined ? {} : { tool: query.tool }),
      ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
      ...(query.before === undefined ? {} : { id: { lt: query.before } }),
    },
    orderBy: { id: 'desc' },
    take: query.limit,
  });
}
