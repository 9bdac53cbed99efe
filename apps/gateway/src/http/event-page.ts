import { CalgateError } from '@calgate/core';
import type { ConnectionRepository, TenancyRepository } from '@calgate/store';
import { isTransient, type ProviderResolver } from '@calgate/tools';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml, ResultPages } from '../google/pages.ts';
import type { SessionManager } from '../session.ts';
import { ownerView } from './api/owner.ts';
import { HTTP_STATUS } from './errors.ts';
import { DEFAULT_DASHBOARD_DIR } from './static.ts';

export interface EventPageDeps {
  sessions: SessionManager;
  tenancy: TenancyRepository;
  connections: ConnectionRepository;
  providers: ProviderResolver;
  /** The built dashboard, whose stylesheet the page uses; defaults to apps/dashboard/dist. */
  dashboardDir?: string | undefined;
}

const TO_DASHBOARD = { href: '/', label: 'Open the Calgate dashboard' };

function when(value: { dateTime?: string; date?: string; timeZone?: string }): string {
  return value.dateTime ?? (value.date ? `${value.date} (all day)` : '');
}

interface Shown {
  summary: string | undefined;
  rows: [string, string][];
}

/** The event as the session's tenant sees it; a Calgate error (no such calendar or event) is thrown. */
async function load(
  deps: EventPageDeps,
  tenantId: string,
  calendarId: string,
  eventId: string,
): Promise<Shown> {
  const calendar = (await deps.tenancy.listCalendars(tenantId)).find((c) => c.id === calendarId);
  const connection = calendar ? await deps.connections.get(tenantId, calendar.connectionId) : null;
  if (calendar === undefined || connection === null) {
    throw new CalgateError('not_found', 'No such event.');
  }
  const provider = deps.providers(ownerView(calendar, connection), tenantId);
  const event = await provider.getEvent(
    { id: calendar.id, externalId: calendar.externalId, timeZone: calendar.timeZone },
    eventId,
  );
  return {
    summary: event.summary,
    rows: [
      ['Calendar', calendar.summary],
      ['Start', when(event.start)],
      ['End', when(event.end)],
      ['Location', event.location ?? ''],
      ['Description', event.description ?? ''],
    ],
  };
}

/**
 * A browser lands here, so failures are pages too (never the API's JSON): Calgate errors keep
 * their status and message; anything else is logged and shown with the request id only.
 */
function failure(pages: ResultPages, request: FastifyRequest, reply: FastifyReply, error: unknown) {
  if (error instanceof CalgateError) {
    const status = HTTP_STATUS[error.code];
    const missing = status === 404;
    return pages.send(reply, status, {
      title: missing ? 'Event not found' : 'The event could not be shown',
      body: `<p>${escapeHtml(error.message)}</p>${missing ? '<p>It may have been deleted, or it belongs to a calendar this account cannot see.</p>' : ''}`,
      back: TO_DASHBOARD,
    });
  }
  const transient = isTransient(error);
  if (!transient) {
    request.log.error({ err: error }, 'event page failed');
  }
  return pages.send(reply, transient ? 503 : 500, {
    title: 'The event could not be shown',
    body: `<p>${transient ? 'Calgate is briefly unavailable; reload in a few seconds.' : `Calgate could not load the event (request ${escapeHtml(request.id)}).`}</p>`,
    back: TO_DASHBOARD,
  });
}

/**
 * The page behind the `url` that search/fetch give for events without a Google link: the event
 * as the signed-in dashboard user's tenant sees it, in the dashboard's look. Event text is shown
 * escaped, as data.
 */
export function registerEventPage(app: FastifyInstance, deps: EventPageDeps): void {
  const pages = new ResultPages(deps.dashboardDir ?? DEFAULT_DASHBOARD_DIR);
  app.get<{ Params: { calendarId: string; eventId: string } }>(
    '/events/:calendarId/:eventId',
    async (request, reply) => {
      const session = await deps.sessions.read(request.headers.cookie);
      if (session === null) {
        return pages.send(reply, 401, {
          title: 'Sign in to see this event',
          body: '<p>Events are shown to signed-in users of the tenant whose calendar holds them. Sign in to the dashboard, then open the link again.</p>',
          back: { href: '/', label: 'Sign in' },
        });
      }
      let shown: Shown;
      try {
        shown = await load(deps, session.tenantId, request.params.calendarId, request.params.eventId);
      } catch (error) {
        return failure(pages, request, reply, error);
      }
      const list = shown.rows
        .filter(([, value]) => value !== '')
        .map(([label, value]) => `<dt>${label}</dt><dd>${escapeHtml(value)}</dd>`)
        .join('');
      return pages.send(reply, 200, {
        title: shown.summary ?? '(no title)',
        body: `<dl class="event">${list}</dl>`,
        back: TO_DASHBOARD,
      });
    },
  );
}
