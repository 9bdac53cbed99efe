import { CalgateError } from '@calgate/core';
import type { ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { connectCaldav } from '../caldav/connect.ts';
import { GOOGLE_SETUP_DOCS } from '../google/pages.ts';
import type { GoogleProviders } from '../google/providers.ts';
import { connectionWritable, type GoogleConnections } from '../google/service.ts';
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
  connections: ConnectionRepository;
  tenancy: TenancyRepository;
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

/**
 * REST endpoints of the dashboard under /api/v1: signed-in sessions only, scoped to the session's
 * tenant (another tenant's ids answer 404), and state-changing requests only from Calgate's own
 * origin with the session's CSRF token.
 */
export function registerDashboardApi(app: FastifyInstance, deps: DashboardApiDeps): void {
  const session = (request: FastifyRequest) => deps.guard.session(request);

  app.get('/api/v1/connections', async (request) => {
    const { tenantId } = await session(request);
    const [connections, calendars] = await Promise.all([
      deps.connections.list(tenantId),
      deps.tenancy.listCalendars(tenantId),
    ]);
    return {
      connections: connections.map((connection) => ({
        ...connection,
        // Read-only connections show a badge and "Allow writing" on the Accounts page.
        writable: connectionWritable(connection),
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
      },
      tenantId,
      { url: body.url.trim(), username: body.username, password: body.password },
      { access: body.access, keyIds: body.keyIds },
    );
  });

  registerSchedulerRoutes(app, deps);
}
