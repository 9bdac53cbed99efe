/**
 * The safety net under "no raw JSON where a browser lands": a GET that a browser made (it asks
 * for text/html) outside the paths meant for programs, answered with a JSON error by whatever
 * refused it (input checks before any route, the global error handler, a route's own refusal),
 * is sent as a page in the dashboard's look with the same message and request id instead.
 * Routes that render their own pages are untouched: only JSON error answers are replaced.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { escapeHtml, ResultPages } from '../google/pages.ts';

/** Where programs, not people, send GETs: their answers stay JSON or text. */
const FOR_PROGRAMS = /^\/(api|\.well-known|metrics|healthz|readyz|assets)(\/|$|\?)/;

function browserLanding(request: FastifyRequest): boolean {
  return (
    request.method === 'GET' &&
    !FOR_PROGRAMS.test(request.url) &&
    (request.headers.accept ?? '').includes('text/html')
  );
}

export function registerBrowserErrorPages(app: FastifyInstance, dashboardDir: string): void {
  const pages = new ResultPages(dashboardDir);
  app.addHook('onSend', async (request, reply, payload) => {
    if (
      reply.statusCode < 400 ||
      typeof payload !== 'string' ||
      !browserLanding(request) ||
      !String(reply.getHeader('content-type') ?? '').startsWith('application/json')
    ) {
      return payload;
    }
    const message = errorMessageOf(payload) ?? 'Calgate could not show this page.';
    ResultPages.headers(reply);
    return pages.render(reply.statusCode, {
      title: reply.statusCode >= 500 ? 'Something went wrong' : 'This link cannot be used',
      body: `<p>${escapeHtml(message)}</p><p class="muted">Request ${escapeHtml(request.id)}</p>`,
      back: { href: '/', label: 'Open the Calgate dashboard' },
    });
  });
}

/** The message of Calgate's JSON error body (`{ error: { message } }`), if that is what it is. */
function errorMessageOf(payload: string): string | undefined {
  try {
    const body = JSON.parse(payload) as { error?: { message?: unknown } };
    return typeof body.error?.message === 'string' ? body.error.message : undefined;
  } catch {
    return undefined;
  }
}
