import { CalgateError } from '@calgate/core';
import { type CalendarRecord, setCalendarEnabled } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';

const Id = z.string().min(1).max(64);

const GrantBody = z.strictObject({ keyId: Id, calendarId: Id, read: z.boolean(), write: z.boolean() });

const BulkBody = z
  .strictObject({
    keyId: Id.optional(),
    calendarId: Id.optional(),
    access: z.enum(['none', 'read', 'write'], { message: "access must be 'none', 'read' or 'write'" }),
  })
  .refine((body) => (body.keyId === undefined) !== (body.calendarId === undefined), {
    message:
      'give exactly one of keyId (every calendar for that key) or calendarId (every key for that calendar)',
  });

const CalendarParams = z.strictObject({ id: Id });
const CalendarPatch = z.strictObject({ enabled: z.boolean() });

function writable(calendar: CalendarRecord): boolean {
  return calendar.accessRole === 'owner' || calendar.accessRole === 'writer';
}

/**
 * The Read / Write matrix: calendars by account × live keys and connected apps (`kind`), single
 * and bulk grants, enabling.
 */
export function registerMatrixRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/matrix', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const [connections, calendars, keys, grants, apps] = await Promise.all([
      deps.connections.list(tenantId),
      deps.tenancy.listCalendars(tenantId),
      deps.keys.list(tenantId),
      deps.tenancy.listGrants(tenantId),
      deps.oauth.listConnections(tenantId),
    ]);
    const holders = [
      ...keys
        .filter((key) => key.revokedAt === null)
        .map(({ id, name, prefix }) => ({ id, name, prefix, kind: 'key' as const })),
      // Connected apps (OAuth connections) are named after their client; they have no prefix.
      ...apps
        .filter((item) => item.revokedAt === null)
        .map((item) => ({ id: item.keyId, name: item.clientName, prefix: null, kind: 'app' as const })),
    ];
    const liveIds = new Set(holders.map((holder) => holder.id));
    return {
      accounts: connections.map(({ id, provider, accountEmail, auth, status }) => ({
        connection: { id, provider, accountEmail, auth, status },
        calendars: calendars
          .filter((calendar) => calendar.connectionId === id)
          .map(({ id: calendarId, summary, enabled, accessRole }) => ({
            id: calendarId,
            summary,
            enabled,
            accessRole,
          })),
      })),
      keys: holders,
      grants: grants.filter((grant) => liveIds.has(grant.keyId)),
    };
  });

  app.put('/api/v1/grants', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const body = parse(GrantBody, request.body);
    const calendar = (await deps.tenancy.listCalendars(tenantId)).find((item) => item.id === body.calendarId);
    if (calendar !== undefined && body.write && !writable(calendar)) {
      throw new CalgateError(
        'precondition_failed',
        `Calendar ${calendar.id} is shared with the account as ${calendar.accessRole}; Calgate cannot write to it.`,
      );
    }
    const grant = await deps.tenancy.setGrant(tenantId, body.keyId, body.calendarId, body);
    deps.invalidateKeys(tenantId);
    return { keyId: body.keyId, calendarId: body.calendarId, ...grant };
  });

  app.post('/api/v1/grants/bulk', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const body = parse(BulkBody, request.body);
    const [calendars, keys, apps] = await Promise.all([
      deps.tenancy.listCalendars(tenantId),
      deps.keys.list(tenantId),
      deps.oauth.listConnections(tenantId),
    ]);
    const live = keys.filter((key) => key.revokedAt === null);
    const liveApp = apps.some((item) => item.keyId === body.keyId && item.revokedAt === null);
    if (body.keyId !== undefined && !live.some((key) => key.id === body.keyId) && !liveApp) {
      throw new CalgateError('not_found', `No API key or connected app ${body.keyId} in this tenant.`);
    }
    if (body.calendarId !== undefined && !calendars.some((calendar) => calendar.id === body.calendarId)) {
      throw new CalgateError('not_found', `No calendar ${body.calendarId} in this tenant.`);
    }
    // By calendar: API keys only. A connected app keeps the calendars its user approved, so it
    // is changed one cell at a time or all its calendars at once (by keyId), never swept in.
    const pairs = (body.keyId === undefined ? live.map((key) => key.id) : [body.keyId]).flatMap((keyId) =>
      calendars
        .filter((calendar) => body.calendarId === undefined || calendar.id === body.calendarId)
        .map((calendar) => ({ keyId, calendar })),
    );
    const grants = [];
    for (const { keyId, calendar } of pairs) {
      const grant = { read: body.access !== 'none', write: body.access === 'write' && writable(calendar) };
      grants.push({
        keyId,
        calendarId: calendar.id,
        ...(await deps.tenancy.setGrant(tenantId, keyId, calendar.id, grant)),
      });
    }
    deps.invalidateKeys(tenantId);
    return { grants };
  });

  app.patch('/api/v1/calendars/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(CalendarParams, request.params);
    const { enabled } = parse(CalendarPatch, request.body);
    if (!(await setCalendarEnabled(deps.db.prisma, tenantId, id, enabled))) {
      throw new CalgateError('not_found', `No calendar ${id} in this tenant.`);
    }
    deps.invalidateKeys(tenantId);
    return { id, enabled };
  });
}
