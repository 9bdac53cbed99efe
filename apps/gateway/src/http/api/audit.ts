import { Readable } from 'node:stream';
import { CalgateError } from '@calgate/core';
import {
  type AuditFilter,
  type AuditRow,
  auditFacets,
  csvLine,
  getAuditRow,
  queryAuditRows,
  streamAuditRows,
  tenantPeople,
} from '@calgate/store';
import { catalogue } from '@calgate/tools';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DECISION_NAMES } from '../confirmations.ts';
import { DASHBOARD_ACTIONS, FALLBACK_ACTION } from '../dashboard-audit.ts';
import { type ApiDeps, parse } from './deps.ts';

const Instant = z.iso.datetime({
  offset: true,
  message: 'use an RFC 3339 date-time, e.g. 2026-11-24T00:00:00Z',
});
const Id = z.string().min(1).max(200);

/** The filters shared by the list and the CSV export. */
const FilterFields = {
  actor: Id.optional(),
  /** Kept from before `actor` existed: a key's or connected app's id. */
  keyId: Id.optional(),
  // Repeatable (tool=a&tool=b) or a comma list (tool=a,b).
  tool: z.union([z.string().max(2000), z.array(z.string().max(2000)).max(50)]).optional(),
  outcome: z
    .enum(['ok', 'error', 'denied'], { message: "outcome must be 'ok', 'error' or 'denied'" })
    .optional(),
  from: Instant.optional(),
  to: Instant.optional(),
};

const AuditQueryString = z.strictObject({
  ...FilterFields,
  limit: z.coerce.number().int().min(1).max(200, { message: 'limit is at most 200' }).default(50),
  before: z
    .string()
    .regex(/^\d{1,18}$/, { message: 'before is the nextCursor of the previous page' })
    .optional(),
});
const CsvQueryString = z.strictObject(FilterFields);
const RowParams = z.strictObject({
  id: z.string().regex(/^\d{1,18}$/, { message: 'id is the id of an audit row' }),
});

let toolNames: ReadonlySet<string> | undefined;

/** What the tool filter accepts: the catalogue's tools and the dashboard's actions. */
function knownNames(): ReadonlySet<string> {
  toolNames ??= new Set([
    ...catalogue().entries.map((entry) => entry.definition.name),
    ...DASHBOARD_ACTIONS,
    ...DECISION_NAMES,
  ]);
  return toolNames;
}

function filterOf(query: z.infer<typeof CsvQueryString>): AuditFilter {
  if (query.actor !== undefined && query.keyId !== undefined && query.actor !== query.keyId) {
    throw new CalgateError('invalid_argument', 'actor and keyId name different actors; give one of them.');
  }
  const tools = (Array.isArray(query.tool) ? query.tool : query.tool === undefined ? [] : [query.tool])
    .flatMap((item) => item.split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const unknown = tools.filter((name) => !knownNames().has(name) && !FALLBACK_ACTION.test(name));
  if (unknown.length > 0) {
    throw new CalgateError(
      'invalid_argument',
      `tool: no tool or dashboard action named ${unknown.map((name) => `'${name.slice(0, 64)}'`).join(', ')}; GET /api/v1/audit/facets lists them.`,
    );
  }
  const from = query.from === undefined ? undefined : new Date(query.from);
  const to = query.to === undefined ? undefined : new Date(query.to);
  if (from !== undefined && to !== undefined && from >= to) {
    throw new CalgateError('invalid_argument', 'from must be before to.');
  }
  const actor = query.actor ?? query.keyId;
  return {
    ...(actor === undefined ? {} : { actor }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
  };
}

/** Who acted: an API key, a connected app (named after its OAuth client), or a person. */
interface AuditActor {
  id: string;
  name: string;
  prefix: string | null;
  kind: 'key' | 'app' | 'user';
}

/** The tenant's keys, apps and people by id, so rows name their actors as the other pages do. */
async function actorsOf(deps: ApiDeps, tenantId: string): Promise<Map<string, AuditActor>> {
  const [keys, apps, people] = await Promise.all([
    deps.keys.list(tenantId),
    deps.oauth.listConnections(tenantId),
    tenantPeople(deps.db.prisma, tenantId),
  ]);
  return new Map<string, AuditActor>([
    ...keys.map((key): [string, AuditActor] => [
      key.id,
      { id: key.id, name: key.name, prefix: key.prefix, kind: 'key' },
    ]),
    ...apps.map((item): [string, AuditActor] => [
      item.keyId,
      { id: item.keyId, name: item.clientName, prefix: null, kind: 'app' },
    ]),
    ...people.map((user): [string, AuditActor] => [
      user.id,
      { id: user.id, name: user.email, prefix: null, kind: 'user' },
    ]),
  ]);
}

/** One row as the dashboard shows it; the same fields in the list and the detail. */
function present(entry: AuditRow, actors: Map<string, AuditActor>) {
  const actorId = entry.keyId ?? entry.actorUserId;
  const known = actorId === null ? undefined : actors.get(actorId);
  // A removed key or person keeps its id in old rows.
  const actor: AuditActor | null =
    actorId === null
      ? null
      : (known ?? { id: actorId, name: actorId, prefix: null, kind: entry.keyId === null ? 'user' : 'key' });
  return {
    id: entry.id.toString(),
    kind: entry.kind === 'dashboard' ? ('dashboard' as const) : ('tool' as const),
    actor,
    /** Kept for clients from before dashboard actions: the key or app of a tool call. */
    key: entry.keyId === null ? null : (actor ?? null),
    tool: entry.tool,
    target: entry.target,
    calendarIds: entry.calendarIds,
    outcome: entry.outcome,
    errorCode: entry.errorCode,
    errorMessage: entry.errorMessage,
    latencyMs: entry.latencyMs,
    requestId: entry.requestId,
    clientName: entry.clientName,
    /** `request.ip` of the call or action: the client behind a trusted proxy, else the peer. */
    clientAddress: entry.clientAddress,
    at: entry.createdAt,
  };
}

const CSV_HEADER = [
  'id',
  'at',
  'kind',
  'actor_kind',
  'actor_id',
  'actor_name',
  'tool_or_action',
  'target',
  'calendar_ids',
  'outcome',
  'error_code',
  'error_message',
  'latency_ms',
  'request_id',
  'client_name',
  // Added after the others, so a consumer reading columns by position keeps working.
  'client_address',
];

async function* csvOf(
  rows: AsyncIterable<AuditRow>,
  actors: Map<string, AuditActor>,
): AsyncGenerator<string> {
  yield csvLine(CSV_HEADER);
  for await (const entry of rows) {
    const row = present(entry, actors);
    yield csvLine([
      row.id,
      row.at.toISOString(),
      row.kind,
      row.actor?.kind ?? null,
      row.actor?.id ?? null,
      row.actor?.name ?? null,
      row.tool,
      row.target.join(' '),
      row.calendarIds.join(' '),
      row.outcome,
      row.errorCode,
      row.errorMessage,
      row.latencyMs,
      row.requestId,
      row.clientName,
      row.clientAddress,
    ]);
  }
}

/**
 * The tenant's audit log: tool calls and dashboard actions, newest first, filterable by actor,
 * tool or action, outcome and time range, with cursor paging; one row with everything; the
 * same filters as a streamed CSV; and the actors and names the filter lists offer.
 */
export function registerAuditRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const tenantOf = async (request: FastifyRequest) => (await deps.guard.session(request)).tenantId;

  app.get('/api/v1/audit', async (request) => {
    const tenantId = await tenantOf(request);
    const query = parse(AuditQueryString, request.query);
    const [entries, actors] = await Promise.all([
      queryAuditRows(deps.db.prisma, tenantId, {
        ...filterOf(query),
        limit: query.limit,
        ...(query.before === undefined ? {} : { before: BigInt(query.before) }),
      }),
      actorsOf(deps, tenantId),
    ]);
    const last = entries.at(-1);
    return {
      entries: entries.map((entry) => present(entry, actors)),
      nextCursor: entries.length === query.limit && last !== undefined ? last.id.toString() : null,
    };
  });

  app.get('/api/v1/audit/facets', async (request) => {
    const tenantId = await tenantOf(request);
    const [facets, actors] = await Promise.all([
      auditFacets(deps.db.prisma, tenantId),
      actorsOf(deps, tenantId),
    ]);
    // Every key, app and person of the tenant, and any removed one that still has rows.
    const gone = (id: string, kind: 'key' | 'user'): AuditActor => ({ id, name: id, prefix: null, kind });
    const all = [
      ...actors.values(),
      ...facets.keyIds.filter((id) => !actors.has(id)).map((id) => gone(id, 'key')),
      ...facets.userIds.filter((id) => !actors.has(id)).map((id) => gone(id, 'user')),
    ];
    const tools = catalogue().entries.map((entry) => entry.definition.name);
    return {
      actors: {
        keys: all.filter((actor) => actor.kind === 'key'),
        apps: all.filter((actor) => actor.kind === 'app'),
        users: all.filter((actor) => actor.kind === 'user'),
      },
      tools: [...tools].sort(),
      actions: [
        ...new Set([
          ...DASHBOARD_ACTIONS,
          ...DECISION_NAMES,
          ...facets.tools.filter((name) => FALLBACK_ACTION.test(name)),
        ]),
      ].sort(),
      /** Names that occur in this tenant's log. */
      seen: facets.tools,
    };
  });

  app.get('/api/v1/audit/:id', async (request) => {
    const tenantId = await tenantOf(request);
    const { id } = parse(RowParams, request.params);
    const [entry, actors] = await Promise.all([
      getAuditRow(deps.db.prisma, tenantId, BigInt(id)),
      actorsOf(deps, tenantId),
    ]);
    if (entry === null) {
      throw new CalgateError('not_found', `No audit row ${id} in this tenant.`);
    }
    return { entry: present(entry, actors) };
  });

  app.get('/api/v1/audit.csv', async (request, reply) => {
    const tenantId = await tenantOf(request);
    const filter = filterOf(parse(CsvQueryString, request.query));
    const actors = await actorsOf(deps, tenantId);
    const stamp = new Date().toISOString().slice(0, 19).replaceAll(':', '-');
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="calgate-audit-${stamp}.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(csvOf(streamAuditRows(deps.db.prisma, tenantId, filter), actors)));
  });
}
