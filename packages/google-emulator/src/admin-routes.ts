/** `/__admin/...`: the admin API over HTTP, for out-of-process use (CLI, benchmarks, demos). */
import { faultAdminRoutes } from '@calgate/emulator-kit';
import type { EmulatorAdmin } from './admin.ts';
import { GoogleApiError } from './errors.ts';
import type { FaultMatch, NotificationFault } from './faults.ts';
import { json, noContent, type Reply, type RequestContext, type Route } from './http.ts';
import type { EmulatorSeed } from './seed.ts';
import type { RequestLogEntry } from './server.ts';

type FaultErrorFields = { reason?: string; message?: string };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function guarded(handler: (ctx: RequestContext) => Reply): (ctx: RequestContext) => Reply {
  return (ctx) => {
    try {
      return handler(ctx);
    } catch (error) {
      if (error instanceof GoogleApiError) {
        throw error;
      }
      throw new GoogleApiError(400, 'invalid', error instanceof Error ? error.message : String(error));
    }
  };
}

export function adminRoutes(admin: EmulatorAdmin): Route[] {
  const route = (
    method: string,
    pattern: string,
    op: string,
    handler: (ctx: RequestContext) => Reply,
  ): Route => ({
    method,
    pattern: `/__admin${pattern}`,
    op: `admin.${op}`,
    handler: guarded(handler),
  });
  const match = (b: Record<string, unknown>) => ({
    ...(str(b.email) ? { email: str(b.email) } : {}),
    ...(str(b.token) ? { token: str(b.token) } : {}),
  });
  return [
    route('POST', '/seed', 'seed', (ctx) => {
      admin.seed(ctx.body as EmulatorSeed);
      return noContent();
    }),
    route('POST', '/reset', 'reset', (ctx) => {
      admin.reset(Object.keys(ctx.body).length > 0 ? (ctx.body as EmulatorSeed) : undefined);
      return noContent();
    }),
    route('GET', '/state', 'state', () => json(admin.snapshot())),
    route('GET', '/calendars/:calendarId/events', 'events', (ctx) =>
      json({ items: admin.events(ctx.params.calendarId ?? '') }),
    ),
    route('POST', '/tokens', 'issueTokens', (ctx) => {
      const b = ctx.body;
      return json(
        admin.issueTokens({
          email: str(b.email) ?? '',
          ...(Array.isArray(b.scopes) ? { scopes: b.scopes.map(String) } : {}),
          ...(str(b.clientId) ? { clientId: str(b.clientId) } : {}),
          offline: b.offline === true,
        }),
      );
    }),
    route('POST', '/tokens/expire', 'expireTokens', (ctx) => {
      const n =
        ctx.body.kind === 'refresh'
          ? admin.expireRefreshTokens(match(ctx.body))
          : admin.expireAccessTokens(match(ctx.body));
      return json({ expired: n });
    }),
    route('POST', '/tokens/revoke', 'revokeTokens', (ctx) =>
      json({
        revoked: admin.revokeTokens({
          ...match(ctx.body),
          ...(str(ctx.body.clientId) ? { clientId: str(ctx.body.clientId) } : {}),
        }),
      }),
    ),
    route('GET', '/service-accounts/:email/key', 'serviceAccountKey', (ctx) =>
      json(admin.serviceAccountKey(ctx.params.email ?? '')),
    ),
    route('POST', '/sync-tokens/expire', 'expireSyncTokens', (ctx) => {
      admin.expireSyncTokens(str(ctx.body.calendarId));
      return noContent();
    }),
    route('POST', '/clock/advance', 'advanceClock', (ctx) => {
      admin.advanceClock(Number(ctx.body.ms ?? 0));
      return noContent();
    }),
    route('POST', '/faults/notifications', 'notificationFault', (ctx) => {
      const action = ctx.body.action as { kind?: unknown } | undefined;
      if (action?.kind !== 'drop' && action?.kind !== 'delay') {
        throw new GoogleApiError(400, 'invalid', "action.kind must be 'drop' or 'delay'.");
      }
      admin.notificationFault(ctx.body as unknown as NotificationFault);
      return noContent();
    }),
    route('GET', '/channels', 'channels', () => json({ items: admin.channels() })),
    route('GET', '/notifications', 'notifications', () => json({ items: admin.notifications() })),
    ...faultAdminRoutes<FaultMatch, FaultErrorFields, RequestLogEntry, RequestContext>(admin).map((r) => ({
      ...r,
      handler: guarded(r.handler as (ctx: RequestContext) => Reply),
    })),
  ];
}
