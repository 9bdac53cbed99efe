/** `/__admin/...`: the admin API over HTTP, for out-of-process use (CLI, benchmarks, demos). */
import { faultAdminRoutes } from '@calgate/emulator-kit';
import type { MicrosoftEmulatorAdmin, RequestLogEntry } from './admin.ts';
import { GraphError } from './errors.ts';
import type { ErrorFields, FaultMatch } from './faults.ts';
import { json, noContent, type Reply, type RequestContext, type Route } from './http.ts';
import type { MicrosoftSeed, SeedCalendar, SeedEvent } from './seed.ts';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function guarded(
  handler: (ctx: RequestContext) => Reply | Promise<Reply>,
): (ctx: RequestContext) => Promise<Reply> {
  return async (ctx) => {
    try {
      return await handler(ctx);
    } catch (error) {
      if (error instanceof GraphError) {
        throw error;
      }
      throw new GraphError(400, 'BadRequest', error instanceof Error ? error.message : String(error));
    }
  };
}

export function adminRoutes(admin: MicrosoftEmulatorAdmin): Route[] {
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
      admin.seed(ctx.body as MicrosoftSeed);
      return noContent();
    }),
    route('POST', '/reset', 'reset', (ctx) => {
      admin.reset(Object.keys(ctx.body).length > 0 ? (ctx.body as MicrosoftSeed) : undefined);
      return noContent();
    }),
    route('POST', '/users/:email/calendars', 'addCalendar', (ctx) =>
      json(admin.addCalendar(ctx.params.email ?? '', ctx.body as unknown as SeedCalendar)),
    ),
    route('GET', '/users/:email/calendars', 'calendars', (ctx) =>
      json({ items: admin.calendars(ctx.params.email ?? '') }),
    ),
    route('POST', '/calendars/:calendarId/events', 'addEvent', (ctx) =>
      json(admin.addEvent(ctx.params.calendarId ?? '', ctx.body as unknown as SeedEvent)),
    ),
    route('GET', '/calendars/:calendarId/events', 'events', (ctx) =>
      json({ items: admin.events(ctx.params.calendarId ?? '') }),
    ),
    route('POST', '/calendars/:calendarId/cancel-occurrence', 'cancelOccurrence', (ctx) => {
      admin.cancelOccurrence(ctx.params.calendarId ?? '', str(ctx.body.id) ?? '');
      return noContent();
    }),
    route('POST', '/tokens', 'issueTokens', (ctx) =>
      json(
        admin.issueTokens({
          email: str(ctx.body.email) ?? '',
          ...(Array.isArray(ctx.body.scopes) ? { scopes: ctx.body.scopes.map(String) } : {}),
          ...(str(ctx.body.clientId) ? { clientId: str(ctx.body.clientId) } : {}),
          offline: ctx.body.offline !== false,
        }),
      ),
    ),
    route('POST', '/tokens/expire', 'expireTokens', (ctx) =>
      json({ expired: admin.expireAccessTokens(match(ctx.body)) }),
    ),
    route('POST', '/tokens/revoke', 'revokeTokens', (ctx) =>
      json({ revoked: admin.revokeRefreshTokens(match(ctx.body)) }),
    ),
    route('POST', '/delta-tokens/expire', 'expireDeltaTokens', () => {
      admin.expireDeltaTokens();
      return noContent();
    }),
    route('POST', '/throttle', 'throttle', (ctx) => {
      admin.setThrottle(ctx.body as Record<string, number>);
      return noContent();
    }),
    route('POST', '/paging', 'paging', (ctx) => {
      admin.setPaging({ shortPages: ctx.body.shortPages === true });
      return noContent();
    }),
    route('GET', '/subscriptions', 'subscriptions', () => json({ items: admin.subscriptions() })),
    route('GET', '/notifications', 'notifications', () => json({ items: admin.notifications() })),
    route('POST', '/notifications/pause', 'pauseNotifications', (ctx) => {
      admin.pauseNotifications(ctx.body.paused !== false);
      return noContent();
    }),
    route('POST', '/clock/advance', 'advanceClock', (ctx) => {
      admin.advanceClock(Number(ctx.body.ms ?? 0));
      return noContent();
    }),
    ...faultAdminRoutes<FaultMatch, ErrorFields, RequestLogEntry, RequestContext>(admin).map((r) => ({
      ...r,
      handler: guarded(r.handler),
    })),
  ];
}
