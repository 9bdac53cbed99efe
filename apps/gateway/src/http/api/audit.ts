import { queryAudit } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';

const AuditQueryString = z.strictObject({
  keyId: z.string().min(1).max(64).optional(),
  tool: z.string().min(1).max(100).optional(),
  outcome: z
    .enum(['ok', 'error', 'denied'], { message: "outcome must be 'ok', 'error' or 'denied'" })
    .optional(),
  limit: z.coerce.number().int().min(1).max(200, { message: 'limit is at most 200' }).default(50),
  before: z
    .string()
    .regex(/^\d{1,18}$/, { message: 'before is the nextCursor of the previous page' })
    .optional(),
});

/** Who made a call: an API key, or a connected app (named after its OAuth client, no prefix). */
interface AuditKey {
  id: string;
  name: string;
  prefix: string | null;
  kind: 'key' | 'app';
}

/** Recent tool calls of this tenant, newest first, filterable, with cursor paging. */
export function registerAuditRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/audit', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const query = parse(AuditQueryString, request.query);
    const [entries, keys, apps] = await Promise.all([
      queryAudit(deps.db.prisma, tenantId, {
        limit: query.limit,
        ...(query.keyId === undefined ? {} : { keyId: query.keyId }),
        ...(query.tool === undefined ? {} : { tool: query.tool }),
        ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
        ...(query.before === undefined ? {} : { before: BigInt(query.before) }),
      }),
      deps.keys.list(tenantId),
      deps.oauth.listConnections(tenantId),
    ]);
    // Calls by connected apps are named after their client, as on the Connected apps page.
    const byId = new Map<string, AuditKey>([
      ...keys.map((key): [string, AuditKey] => [
        key.id,
        { id: key.id, name: key.name, prefix: key.prefix, kind: 'key' },
      ]),
      ...apps.map((item): [string, AuditKey] => [
        item.keyId,
        { id: item.keyId, name: item.clientName, prefix: null, kind: 'app' },
      ]),
    ]);
    const last = entries.at(-1);
    return {
      entries: entries.map((entry) => {
        const key = entry.keyId === null ? undefined : byId.get(entry.keyId);
        return {
          id: entry.id.toString(),
          key: key ?? null,
          tool: entry.tool,
          calendarIds: entry.calendarIds,
          outcome: entry.outcome,
          errorCode: entry.errorCode,
          latencyMs: entry.latencyMs,
          at: entry.createdAt,
        };
      }),
      nextCursor: entries.length === query.limit && last !== undefined ? last.id.toString() : null,
    };
  });
}
