import { CalgateError } from '@calgate/core';
import { HIJACK_POLICIES, type OAuthConnection } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';

const AppParams = z.strictObject({ id: z.string().min(1).max(64) });

const AppSettings = z.strictObject({
  hijackPolicy: z.enum(HIJACK_POLICIES, { message: `use one of ${HIJACK_POLICIES.join(', ')}` }),
});

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
    hijackPolicy: app.hijackPolicy,
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
 * 'oauth'), live and revoked, their hijack policy (as keys have it) and their revocation. Keys
 * are listed apart, in keys.ts.
 */
export function registerConnectedAppRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/connected-apps', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    return { apps: await listApps(deps, tenantId) };
  });

  app.patch('/api/v1/connected-apps/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(AppParams, request.params);
    const { hijackPolicy } = parse(AppSettings, request.body);
    try {
      await deps.oauth.setHijackPolicy(tenantId, id, hijackPolicy);
    } catch (error) {
      if (error instanceof CalgateError && error.code === 'not_found') {
        throw noSuchApp(id);
      }
      if (error instanceof CalgateError && error.code === 'conflict') {
        throw new CalgateError(
          'conflict',
          `Connected app ${id} is revoked; its settings can no longer change.`,
        );
      }
      throw error;
    }
    // The app's next call must see the new policy, not the cached key.
    deps.invalidateKeys(tenantId);
    const changed = (await listApps(deps, tenantId)).find((item) => item.id === id);
    if (changed === undefined) {
      throw noSuchApp(id);
    }
    return { app: changed };
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
    deps.invalidateKeys(tenantId);
    const revoked = (await listApps(deps, tenantId)).find((item) => item.id === id);
    if (revoked === undefined) {
      throw noSuchApp(id);
    }
    return { app: revoked };
  });
}
