import type { Prisma } from './db.ts';

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
