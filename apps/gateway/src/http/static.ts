import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml, ResultPages } from '../google/pages.ts';
import { handleNotFound } from './errors.ts';
import { isLoopbackHostname } from './origins.ts';

/** Where `npm run build:dashboard` writes the dashboard. */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
};

// Paths the gateway answers itself: an unknown one there is a 404, never the dashboard.
const RESERVED = /^\/(api|oauth|assets|healthz|readyz)(\/|$)/;
// Of those, where a browser is sent (OAuth redirects): its 404 is a page, not the API's JSON.
const BROWSER_RESERVED = /^\/oauth(\/|$)/;

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built · Calgate</title></head><body><main><h1>The dashboard has not been built</h1><p>Run <code>npm run build:dashboard</code> (or <code>npm start</code>, which builds it first) and reload. The MCP endpoint at <code>/api/mcp</code> works without it.</p></main></body></html>`;

function html(reply: FastifyReply, status: number, body: string | Buffer) {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .send(body);
}

/**
 * Where a page asked for under another loopback name of this same gateway belongs: on a gateway
 * whose PUBLIC_URL is loopback, `localhost:8787` for `127.0.0.1:8787` (or `[::1]`). The dashboard
 * answers only its own origin's forms (Origin check), and OAuth providers return to PUBLIC_URL, so
 * the browser is sent there before anything is typed. Undefined when the page is already there.
 */
export function canonicalPageUrl(
  publicUrl: string,
  host: string | undefined,
  url: string,
): string | undefined {
  const own = new URL(publicUrl);
  if (host === undefined || !isLoopbackHostname(own.hostname) || /[\s/\\@?#]/.test(host)) {
    return undefined;
  }
  let asked: URL;
  try {
    asked = new URL(`${own.protocol}//${host}`);
  } catch {
    return undefined;
  }
  if (asked.host === own.host || asked.port !== own.port || !isLoopbackHostname(asked.hostname)) {
    return undefined;
  }
  return `${publicUrl.replace(/\/+$/, '')}${url}`;
}

/**
 * The built dashboard: hashed files under /assets (cached for a year), and index.html for any
 * other GET a browser makes for a page, so client-side paths survive a reload.
 */
export function registerDashboardStatic(
  app: FastifyInstance,
  dir: string = DEFAULT_DASHBOARD_DIR,
  publicUrl?: string,
): void {
  app.get<{ Params: { file: string } }>('/assets/:file', async (request, reply) => {
    const { file } = request.params;
    const type = TYPES[extname(file)];
    if (!/^[\w.-]+$/.test(file) || file.startsWith('.') || type === undefined) {
      return handleNotFound(request, reply);
    }
    let content: Buffer;
    try {
      content = await readFile(join(dir, 'assets', file));
    } catch {
      return handleNotFound(request, reply);
    }
    return reply
      .header('content-type', type)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(content);
  });

  const pages = new ResultPages(dir);
  app.get('/*', async (request: FastifyRequest, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const wantsPage = (request.headers.accept ?? '').includes('text/html');
    if (wantsPage && BROWSER_RESERVED.test(path)) {
      return pages.send(reply, 404, {
        title: 'Page not found',
        body: `<p>Calgate has no page at <code>${escapeHtml(path.slice(0, 300))}</code>. If an app sent you here, start connecting again from the app.</p>`,
        back: { href: '/', label: 'Open the Calgate dashboard' },
      });
    }
    if (RESERVED.test(path) || !wantsPage) {
      return handleNotFound(request, reply);
    }
    const canonical =
      publicUrl === undefined ? undefined : canonicalPageUrl(publicUrl, request.headers.host, request.url);
    if (canonical !== undefined) {
      return reply.redirect(canonical, 302);
    }
    try {
      return html(reply, 200, await readFile(join(dir, 'index.html')));
    } catch {
      return html(reply, 503, NOT_BUILT);
    }
  });
}
