import { CalgateError } from '@calgate/core';
import type { OAuthConnection } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';

const AppParams = z.strictObject({ id: z.string().min(1).max(64) });

function noSuchApp(id: string): CalgateError {
  return new CalgateError('not_found', `No connected app ${id} in this tenant.`);
}

/** Emails of the people who approved connections, by user id (a removed user shows as null). */
async function emailsOf(deps: ApiDeps, tenantId: string, apps: readonly OAuthConnection[]) {
  const ids = [...new Set(apps.flatMap((app) => (app.userId === null ? [] : [app.userId])))];
  const users = await Promise.all(ids.map((id) => deps.users.get(tenantId, id)));
  return new Map(users.flatMap((user) => (user === null ? [] : [[user.id, user.email] as const])));
}

/** The tenant's connections as the Connected apps page shows them, with their calendars. */
async function listApps(deps: ApiDeps, tenantId: string) {
  const [apps, calendars, grants] = await Promise.all([
    deps.oauth.listConnections(tenantId),
    deps.tenancy.listCalendars(tenantId),
    deps.tenancy.listGrants(tenantId),
  ]);
  const emails = await emailsOf(deps, tenantId, apps);
  const grantOf = new Map(grants.map((grant) => [`${grant.keyId} ${grant.calendarId}`, grant]));
  return apps.map((app) => ({
    id: app.keyId,
    name: app.name,
    clientId: app.clientId,
    clientName: app.clientName,
    userEmail: app.userId === null ? null : (emails.get(app.userId) ?? null),
    toolsets: app.toolsets,
    createdAt: app.createdAt,
    lastUsedAt: app.lastUsedAt,
    revokedAt: app.revokedAt,
    // In the tenant's calendar order (as on the matrix), not the grants' id order.
    calendars: calendars.flatMap((calendar) => {
      const grant = grantOf.get(`${app.keyId} ${calendar.id}`);
      return grant === undefined || !grant.canRead
        ? []
        : [
            {
              calendarId: calendar.id,
              summary: calendar.summary,
              read: grant.canRead,
              write: grant.canWrite,
            },
          ];
    }),
  }));
}

/**
 * Connected apps: the OAuth connections people approved for MCP clients (api_keys rows of kind
 * 'oauth'), live and revoked, and their revocation. Keys are listed apart, in keys.ts.
 */
export function registerConnectedAppRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/connected-apps', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    return { apps: await listApps(deps, tenantId) };
  });

  app.post('/api/v1/connected-apps/:id/revoke', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(AppParams, request.params);
    try {
      await deps.oauth.revokeConnection(tenantId, id);
    } catch (error) {
      if (error instanceof CalgateError && error.code === 'not_found') {
        throw noSuchApp(id);
      }
      throw error;
    }
    // The key cache would otherwise let the app's access token work until it expires.
    deps.invalidateKeys();
    const revoked = (await listApps(deps, tenantId)).find((item) => item.id === id);
    if (revoked === undefined) {
      throw noSuchApp(id);
    }
    return { app: revoked };
  });
}
