import type { Prisma } from './db.ts';
import type { Prisma as PrismaTypes } from './generated/prisma/client.ts';

/** What the audit page, its REST route and its CSV export filter on. */
export interface AuditFilter {
  /** A key id, a connected app's key id, or a user id (the person behind a dashboard action). */
  actor?: string;
  /** Tool names and dashboard action names; any of them. */
  tools?: readonly string[];
  outcome?: 'ok' | 'error' | 'denied';
  /** Rows recorded at or after this instant. */
  from?: Date;
  /** Rows recorded strictly before this instant. */
  to?: Date;
}

export interface AuditPage extends AuditFilter {
  /** Rows older than this row id (the cursor of the previous page). */
  before?: bigint;
  limit: number;
}

/** One audit row as the dashboard reads it. */
export type AuditRow = Awaited<ReturnType<typeof queryAuditRows>>[number];

function whereOf(
  tenantId: string,
  filter: AuditFilter & { before?: bigint },
): PrismaTypes.AuditEntryWhereInput {
  const createdAt: PrismaTypes.DateTimeFilter = {
    ...(filter.from === undefined ? {} : { gte: filter.from }),
    ...(filter.to === undefined ? {} : { lt: filter.to }),
  };
  return {
    tenantId,
    ...(filter.actor === undefined ? {} : { OR: [{ keyId: filter.actor }, { actorUserId: filter.actor }] }),
    ...(filter.tools === undefined || filter.tools.length === 0 ? {} : { tool: { in: [...filter.tools] } }),
    ...(filter.outcome === undefined ? {} : { outcome: filter.outcome }),
    ...(filter.from === undefined && filter.to === undefined ? {} : { createdAt }),
    ...(filter.before === undefined ? {} : { id: { lt: filter.before } }),
  };
}

/** A tenant's audit rows (tool calls and dashboard actions), newest first, one page past `before`. */
export function queryAuditRows(prisma: Prisma, tenantId: string, page: AuditPage) {
  return prisma.auditEntry.findMany({
    where: whereOf(tenantId, page),
    orderBy: { id: 'desc' },
    take: page.limit,
  });
}

/** One row of the tenant's audit log, or null (also for another tenant's row). */
export function getAuditRow(prisma: Prisma, tenantId: string, id: bigint) {
  return prisma.auditEntry.findFirst({ where: { tenantId, id } });
}

/**
 * Every matching row, newest first, fetched a page at a time so an export of a long log never
 * holds it all in memory.
 */
export async function* streamAuditRows(
  prisma: Prisma,
  tenantId: string,
  filter: AuditFilter,
  pageSize = 500,
): AsyncGenerator<AuditRow> {
  let before: bigint | undefined;
  for (;;) {
    const rows = await queryAuditRows(prisma, tenantId, {
      ...filter,
      limit: pageSize,
      ...(before === undefined ? {} : { before }),
    });
    yield* rows;
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) {
      return;
    }
    before = last.id;
  }
}

/** The names (tools and actions) and actors that occur in a tenant's audit log, for filter lists. */
export async function auditFacets(
  prisma: Prisma,
  tenantId: string,
): Promise<{ tools: string[]; keyIds: string[]; userIds: string[] }> {
  const [tools, keys, users] = await Promise.all([
    prisma.auditEntry.findMany({ where: { tenantId }, distinct: ['tool'], select: { tool: true } }),
    prisma.auditEntry.findMany({
      where: { tenantId, keyId: { not: null } },
      distinct: ['keyId'],
      select: { keyId: true },
    }),
    prisma.auditEntry.findMany({
      where: { tenantId, actorUserId: { not: null } },
      distinct: ['actorUserId'],
      select: { actorUserId: true },
    }),
  ]);
  return {
    tools: tools.map((row) => row.tool).sort(),
    keyIds: keys.flatMap((row) => (row.keyId === null ? [] : [row.keyId])),
    userIds: users.flatMap((row) => (row.actorUserId === null ? [] : [row.actorUserId])),
  };
}

/** The people of a tenant, to name actors (a removed person keeps their id in old rows). */
export function tenantPeople(prisma: Prisma, tenantId: string) {
  return prisma.user.findMany({
    where: { tenantId },
    select: { id: true, email: true },
    orderBy: { email: 'asc' },
  });
}
