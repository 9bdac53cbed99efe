/**
 * The HTML pages a browser lands on during the Google connection flow (start refused, callback
 * results and errors) and when an app's OAuth request to Calgate cannot be trusted. They use the dashboard's own stylesheet, read from the built index.html,
 * so they look like the dashboard under its strict CSP (no inline styles or scripts), and always
 * lead back to the Accounts page.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyReply } from 'fastify';

const CSP =
  "default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Finds the dashboard's hashed stylesheet once; pages render unstyled (still valid) without a build. */
export class ResultPages {
  readonly #dashboardDir: string;
  #stylesheet: Promise<string | null> | undefined;

  constructor(dashboardDir: string) {
    this.#dashboardDir = dashboardDir;
  }

  #styles(): Promise<string | null> {
    this.#stylesheet ??= readFile(join(this.#dashboardDir, 'index.html'), 'utf8').then(
      (index) => /<link rel="stylesheet" href="(\/assets\/[\w.-]+\.css)"/.exec(index)?.[1] ?? null,
      () => null,
    );
    return this.#stylesheet;
  }

  /** `body` is trusted HTML built by the caller with escapeHtml around every value. */
  async send(reply: FastifyReply, status: number, page: ResultPage): Promise<FastifyReply> {
    const html = await this.render(status, page);
    return ResultPages.headers(reply.status(status)).send(html);
  }

  /** The page's HTML, for a caller that sends it itself (with `headers`). */
  async render(status: number, page: ResultPage): Promise<string> {
    const back = page.back ?? { href: '/accounts', label: 'Back to Accounts' };
    const href = await this.#styles();
    const link = href === null ? '' : `<link rel="stylesheet" href="${escapeHtml(href)}">`;
    const tone = page.tone ?? (status < 400 ? 'ok' : 'error');
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(page.title)} · Calgate</title>${link}</head><body><header class="top"><strong>Calgate</strong></header><main><section class="card oauth-result" data-result="${tone}"><h1>${escapeHtml(page.title)}</h1>${page.body}<p class="row"><a class="button" href="${escapeHtml(back.href)}">${escapeHtml(back.label)}</a></p></section></main></body></html>`;
  }

  /** The headers every result page is sent with (its own strict CSP: no scripts at all). */
  static headers(reply: FastifyReply): FastifyReply {
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'same-origin');
  }
}

export interface ResultPage {
  title: string;
  /** Trusted HTML: every value in it passed through escapeHtml. */
  body: string;
  tone?: 'ok' | 'error';
  back?: { href: string; label: string };
}

/** Where the Google settings are explained (docs/ ships with every install). */
export const GOOGLE_SETUP_DOCS = 'docs/accounts/google.md (“Google Cloud setup”)';

/** The body of the "not configured" page: what to set and where it is explained. */
export function notConfiguredBody(publicUrl: string): string {
  return `<p class="notice error">Connecting Google accounts is turned off on this Calgate: <code>GOOGLE_CLIENT_ID</code> and <code>GOOGLE_CLIENT_SECRET</code> are not set.</p><p>Create an OAuth client in the Google Cloud console with the redirect URI <code>${escapeHtml(publicUrl.replace(/\/+$/, ''))}/oauth/google/callback</code>, set both variables and restart Calgate. See ${escapeHtml(GOOGLE_SETUP_DOCS)} for the steps.</p>`;
}
