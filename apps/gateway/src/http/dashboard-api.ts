import { CalgateError } from '@calgate/core';
import type { HostResolver } from '@calgate/scheduler';
import type { ConnectionRepository, Database, TenancyRepository } from '@calgate/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { connectCaldav } from '../caldav/connect.ts';
import { GOOGLE_SETUP_DOCS } from '../google/pages.ts';
import type { GoogleProviders } from '../google/providers.ts';
import { connectionWritable, type GoogleConnections } from '../google/service.ts';
import { subscribeIcs } from '../ics/subscriptions.ts';
import {
  MICROSOFT_NOT_CONFIGURED,
  type MicrosoftConnections,
  microsoftSetupFix,
} from '../microsoft/connect.ts';
import type { SessionManager } from '../session.ts';
import { parse } from './api/deps.ts';
import type { DashboardGuard } from './api/guard.ts';
import { registerSchedulerRoutes, type SchedulerApiDeps } from './api/scheduler.ts';

export interface DashboardApiDeps extends SchedulerApiDeps {
  sessions: SessionManager;
  google: GoogleConnections;
  microsoft: MicrosoftConnections;
  googleProviders: GoogleProviders;
  /** Drops this gateway's cached client of a reconnected CalDAV account (its next use reads the new password). */
  forgetCaldav: (connectionId: string) => void;
  /** How a CalDAV server's host name is resolved for the outbound check; absent, the system's. */
  resolveHost?: HostResolver | undefined;
  connections: ConnectionRepository;
  tenancy: TenancyRepository;
  /** Where the mirror's sync state is read (each calendar's last sync and its error). */
  db: Database;
  /** Calgate's public URL, for the redirect URI the Google setup needs (else named as PUBLIC_URL). */
  publicUrl?: string | undefined;
  /** Session, Origin and CSRF checks shared by every /api/v1 route. */
  guard: DashboardGuard;
}

const ServiceAccountBody = z.strictObject({
  calendarId: z.string().min(1).max(1024),
  access: z.enum(['none', 'read', 'write']).default('read'),
  keyIds: z.array(z.string().max(64)).max(500).default([]),
});

const CaldavBody = z.strictObject({
  url: z.string().min(1).max(2048),
  username: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
  access: z.enum(['none', 'read', 'write']).default('read'),
  keyIds: z.array(z.string().max(64)).max(500).default([]),
});

const IcsBody = z.strictObject({
  url: z.string().min(1).max(2048),
  name: z.string().min(1).max(200),
  access: z.enum(['none', 'read']).default('read'),
  keyIds: z.array(z.string().max(64)).max(500).default([]),
});

/** Each mirrored calendar's last sync and, when it failed, why (a feed answering 404, …). */
async function syncStates(
  db: Database,
  tenantId: string,
): Promise<Map<string, { syncedAt: string | null; syncError: string | null }>> {
  const { rows } = await db.pool.query<{ calendar_id: string; synced_at: Date | null; error: string | null }>(
    `SELECT calendar_id, synced_at, CASE WHEN status = 'error' THEN error END AS error
     FROM mirror_sync_state WHERE tenant_id = $1`,
    [tenantId],
  );
  return new Map(
    rows.map((row) => [
      row.calendar_id,
      { syncedAt: row.synced_at?.toISOString() ?? null, syncError: row.error },
    ]),
  );
}

/**
 * REST endpoints of the dashboard under /api/v1: signed-in sessions only, scoped to the session's
 * tenant (another tenant's ids answer 404), and state-changing requests only from Calgate's own
 * origin with the session's CSRF token.
 */
export function registerDashboardApi(app: FastifyInstance, deps: DashboardApiDeps): void {
  const session = (request: FastifyRequest) => deps.guard.session(request);

  app.get('/api/v1/connections', async (request) => {
    const { tenantId } = await session(request);
    const [connections, calendars, states] = await Promise.all([
      deps.connections.list(tenantId),
      deps.tenancy.listCalendars(tenantId),
      syncStates(deps.db, tenantId),
    ]);
    return {
      connections: connections.map((connection) => ({
        ...connection,
        // Read-only connections show a badge and "Allow writing" on the Accounts page.
        writable: connection.provider !== 'ics' && connectionWritable(connection),
        calendars: calendars
          .filter((calendar) => calendar.connectionId === connection.id)
          .map(({ id, summary, externalId, timeZone, primary, enabled, accessRole }) => ({
            id,
            summary,
            externalId,
            timeZone,
            primary,
            enabled,
            accessRole,
            syncedAt: states.get(id)?.syncedAt ?? null,
            syncError: states.get(id)?.syncError ?? null,
          })),
      })),
    };
  });

  /** What the Accounts page offers: Connect Google only when an OAuth client is configured. */
  app.get('/api/v1/google/status', async (request) => {
    await session(request);
    const configured = deps.google.configured();
    return {
      configured,
      serviceAccount: deps.googleProviders.setup.serviceAccount !== undefined,
      ...(configured
        ? {}
        : {
            reason:
              'Connecting Google accounts is turned off on this Calgate: GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are not set.',
            fix: `Create an OAuth client with the redirect URI ${(deps.publicUrl ?? 'PUBLIC_URL').replace(/\/+$/, '')}/oauth/google/callback, set both variables and restart Calgate. See ${GOOGLE_SETUP_DOCS}.`,
          }),
    };
  });

  /** What the Accounts page offers: Connect Microsoft only when an app registration is configured. */
  app.get('/api/v1/microsoft/status', async (request) => {
    await session(request);
    const configured = deps.microsoft.configured();
    return {
      configured,
      ...(configured ? {} : { reason: MICROSOFT_NOT_CONFIGURED, fix: microsoftSetupFix(deps.publicUrl) }),
    };
  });

  app.delete<{ Params: { id: string } }>('/api/v1/connections/:id', async (request) => {
    const { tenantId } = await session(request);
    const connection = await deps.connections.get(tenantId, request.params.id);
    const result =
      connection?.provider === 'microsoft'
        ? await deps.microsoft.disconnect(tenantId, request.params.id)
        : await deps.google.disconnect(tenantId, request.params.id);
    return { id: request.params.id, removed: true, tokenRevoked: result.revoked };
  });

  app.get('/api/v1/google/service-account', async (request) => {
    await session(request);
    const key = deps.googleProviders.setup.serviceAccount;
    if (key === undefined) {
      throw new CalgateError('unavailable', 'No Google service account is configured on this Calgate.');
    }
    return {
      email: key.client_email,
      instructions: `Share the calendar with ${key.client_email} in Google Calendar (Settings → Share with specific people), then add it by its calendar id.`,
    };
  });

  app.post('/api/v1/connections/service-account', async (request) => {
    const { tenantId } = await session(request);
    const body = parse(ServiceAccountBody, request.body);
    return deps.google.connectServiceAccountCalendar(tenantId, body.calendarId, {
      access: body.access,
      keyIds: body.keyIds,
    });
  });

  // A CalDAV account (iCloud, Fastmail, Nextcloud, any server), as `calgate connect caldav`.
  app.post('/api/v1/connections/caldav', async (request) => {
    const { tenantId } = await session(request);
    const body = parse(CaldavBody, request.body);
    return connectCaldav(
      {
        connections: deps.connections,
        tenancy: deps.tenancy,
        google: deps.google,
        allowPrivate: deps.allowPrivateTargets,
        forget: deps.forgetCaldav,
        resolve: deps.resolveHost,
      },
      tenantId,
      { url: body.url.trim(), username: body.username, password: body.password },
      { access: body.access, keyIds: body.keyIds },
    );
  });

  // A subscribed calendar feed (.ics, webcal), as `calgate connect ics`: read-only.
  app.post('/api/v1/connections/ics', async (request) => {
    const { tenantId } = await session(request);
    const body = parse(IcsBody, request.body);
    return subscribeIcs(
      {
        connections: deps.connections,
        tenancy: deps.tenancy,
        google: deps.google,
        allowPrivate: deps.allowPrivateTargets,
        db: deps.db,
        keys: deps.keys,
      },
      tenantId,
      { url: body.url, name: body.name },
      { access: body.access, keyIds: body.keyIds },
    );
  });

  registerSchedulerRoutes(app, deps);
}
