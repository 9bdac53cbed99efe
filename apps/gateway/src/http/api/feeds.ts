import { CalgateError } from '@calgate/core';
import { exportCalendar } from '@calgate/providers';
import { type CalendarFeedRecord, CalendarFeedRepository } from '@calgate/store';
import { isTransient } from '@calgate/tools';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiDeps } from './deps.ts';
import { ownerView } from './owner.ts';

/** What the feed routes read: the tenant's calendars, their connections and providers. */
export type FeedDeps = Pick<ApiDeps, 'guard' | 'db' | 'tenancy' | 'connections' | 'providers' | 'publicUrl'>;

function feedView(feed: CalendarFeedRecord | null) {
  return feed === null
    ? null
    : { id: feed.id, createdAt: feed.createdAt.toISOString(), createdBy: feed.createdBy };
}

async function calendarOf(deps: FeedDeps, tenantId: string, calendarId: string) {
  const calendar = (await deps.tenancy.listCalendars(tenantId)).find((c) => c.id === calendarId);
  const connection = calendar ? await deps.connections.get(tenantId, calendar.connectionId) : null;
  if (calendar === undefined || connection === null) {
    throw new CalgateError('not_found', `Calendar '${calendarId}' was not found in this workspace.`);
  }
  return { calendar, connection };
}

function notFound(reply: FastifyReply) {
  return reply
    .code(404)
    .type('text/plain; charset=utf-8')
    .send('No calendar feed at this address: it was never made, or it was revoked.');
}

/**
 * Secret iCalendar feed addresses ("secret address in iCal format"): made, shown and revoked per
 * calendar under /api/v1 (making is for owners and admins, roles.ts default; audited by
 * dashboard-audit.ts), and served at `/feeds/<token>.ics` with no other authentication. The
 * token is shown once; a revoked token answers 404 from the next request on.
 */
export function registerFeedRoutes(app: FastifyInstance, deps: FeedDeps): void {
  const feeds = new CalendarFeedRepository(deps.db);
  const urlOf = (token: string) => `${deps.publicUrl}/feeds/${token}.ics`;

  app.get<{ Params: { id: string } }>('/api/v1/calendars/:id/feed', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    await calendarOf(deps, tenantId, request.params.id);
    return { feed: feedView(await feeds.live(tenantId, request.params.id)) };
  });

  app.post<{ Params: { id: string } }>('/api/v1/calendars/:id/feed', async (request) => {
    const { tenantId, userId } = await deps.guard.session(request);
    await calendarOf(deps, tenantId, request.params.id);
    const { feed, token } = await feeds.create(tenantId, request.params.id, userId);
    return { feed: { ...feedView(feed), url: urlOf(token) } };
  });

  app.delete<{ Params: { id: string } }>('/api/v1/calendars/:id/feed', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    await calendarOf(deps, tenantId, request.params.id);
    return { revoked: await feeds.revoke(tenantId, request.params.id) };
  });

  app.get<{ Params: { file: string } }>('/feeds/:file', async (request, reply) => {
    const token = request.params.file.replace(/\.ics$/, '');
    const opened = await feeds.open(token);
    if (opened === null) {
      return notFound(reply);
    }
    try {
      const { calendar, connection } = await calendarOf(deps, opened.tenantId, opened.calendarId);
      const provider = deps.providers(ownerView(calendar, connection), opened.tenantId);
      const text = await exportCalendar(
        provider,
        { id: calendar.id, externalId: calendar.externalId, timeZone: calendar.timeZone },
        { name: calendar.summary },
      );
      return reply
        .header('cache-control', 'private, max-age=300')
        .header('x-robots-tag', 'noindex')
        .type('text/calendar; charset=utf-8')
        .send(text);
    } catch (error) {
      if (error instanceof CalgateError && error.code === 'not_found') {
        return notFound(reply);
      }
      request.log.warn({ err: error, feedId: opened.id }, 'calendar feed failed');
      return reply
        .code(isTransient(error) ? 503 : 502)
        .type('text/plain; charset=utf-8')
        .send('The calendar could not be read just now; your calendar app will try again.');
    }
  });
}
