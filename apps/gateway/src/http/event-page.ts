import { CalgateError } from '@calgate/core';
import type { ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { ProviderResolver } from '@calgate/tools';
import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../session.ts';

export interface EventPageDeps {
  sessions: SessionManager;
  tenancy: TenancyRepository;
  connections: ConnectionRepository;
  providers: ProviderResolver;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function when(value: { dateTime?: string; date?: string; timeZone?: string }): string {
  return value.dateTime ?? (value.date ? `${value.date} (all day)` : '');
}

/**
 * The page behind the `url` that search/fetch give for events without a Google link: the event
 * as the signed-in dashboard user's tenant sees it. Event text is shown escaped, as data.
 */
export function registerEventPage(app: FastifyInstance, deps: EventPageDeps): void {
  app.get<{ Params: { calendarId: string; eventId: string } }>(
    '/events/:calendarId/:eventId',
    async (request, reply) => {
      const session = await deps.sessions.read(request.headers.cookie);
      if (session === null) {
        return reply
          .status(401)
          .header('content-type', 'text/html; charset=utf-8')
          .send(
            '<!doctype html><title>Sign in · Calgate</title><p>Sign in to the Calgate dashboard to see this event.</p>',
          );
      }
      const calendar = (await deps.tenancy.listCalendars(session.tenantId)).find(
        (c) => c.id === request.params.calendarId,
      );
      const connection = calendar
        ? await deps.connections.get(session.tenantId, calendar.connectionId)
        : null;
      if (calendar === undefined || connection === null) {
        throw new CalgateError('not_found', 'No such event.');
      }
      const provider = deps.providers(
        {
          id: calendar.id,
          externalId: calendar.externalId,
          summary: calendar.summary,
          timeZone: calendar.timeZone,
          primary: calendar.primary,
          enabled: calendar.enabled,
          accessRole: calendar.accessRole,
          connectionId: calendar.connectionId,
          provider: connection.provider,
          auth: connection.auth,
          accountEmail: connection.accountEmail,
          connectionStatus: connection.status,
          canRead: true,
          canWrite: false,
        },
        session.tenantId,
      );
      const event = await provider.getEvent(
        { id: calendar.id, externalId: calendar.externalId, timeZone: calendar.timeZone },
        request.params.eventId,
      );
      const rows: [string, string][] = [
        ['Calendar', calendar.summary],
        ['Start', when(event.start)],
        ['End', when(event.end)],
        ['Location', event.location ?? ''],
        ['Description', event.description ?? ''],
      ];
      const title = escapeHtml(event.summary ?? '(no title)');
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · Calgate</title></head><body><main><h1>${title}</h1><dl>${rows
            .filter(([, value]) => value !== '')
            .map(([label, value]) => `<dt>${label}</dt><dd>${escapeHtml(value)}</dd>`)
            .join('')}</dl></main></body></html>`,
        );
    },
  );
}
