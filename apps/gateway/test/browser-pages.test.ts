/**
 * No raw JSON where a browser lands: every GET route of the running app that is not meant for
 * programs answers a browser (Accept: text/html) with an HTML page in the dashboard's look (the
 * dashboard's own stylesheet), on success and on every error a link or redirect can lead to.
 * The routes come from the live app, so a new GET route fails here until it has cases below or
 * is listed as meant for programs, with the reason.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DASHBOARD_DIR } from '../src/http/static.ts';
import { type Browser, sessionFor } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';
import { registerClient } from './oauth-flow.ts';
import { routesOf } from './routes.ts';

/** GET routes that programs call, not people: they keep answering JSON or text. */
const FOR_PROGRAMS: readonly { pattern: RegExp; why: string }[] = [
  {
    pattern: /^\/api\//,
    why: 'the dashboard’s REST API, /api/mcp and /api/docs: called by scripts and MCP clients',
  },
  { pattern: /^\/\.well-known\//, why: 'OAuth discovery documents, read by MCP clients' },
  { pattern: /^\/metrics$/, why: 'Prometheus text, scraped with a token' },
  { pattern: /^\/feeds\//, why: 'secret iCalendar feed addresses, read by calendar apps' },
  { pattern: /^\/(healthz|readyz)$/, why: 'health checks of load balancers and orchestrators' },
  { pattern: /^\/assets\/:file$/, why: 'the dashboard’s scripts and stylesheet, loaded by its pages' },
  { pattern: /^\/icons\/:file$/, why: 'SVG and PNG icons MCP clients show beside Calgate (icons.test.ts)' },
];

type Who = 'signed out' | 'bogus session' | 'signed in';

interface Landing {
  path: string;
  who: Who;
  status: number;
  /** The gateway with Google OAuth configured (a client id and secret; Google is never called). */
  google?: true;
}

/** What a browser sends when following a link. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('pages a browser lands on', () => {
  let gw: TestGateway;
  let google: TestGateway;
  let stylesheet: string;
  const sessions = new Map<TestGateway, Browser>();
  let eventPath: string;
  let clientId: string;
  let landings: Record<string, Landing[]>;

  beforeAll(async () => {
    const index = await readFile(join(DEFAULT_DASHBOARD_DIR, 'index.html'), 'utf8');
    const link = /<link rel="stylesheet" href="\/assets\/[\w.-]+\.css"[^>]*>/.exec(index)?.[0];
    if (link === undefined) {
      throw new Error('the built dashboard (npm run build:dashboard) has no stylesheet link');
    }
    stylesheet = (/href="([^"]+)"/.exec(link) as RegExpExecArray)[1] as string;

    gw = await startTestGateway();
    google = await startTestGateway({
      GOOGLE_CLIENT_ID: 'calgate-test.apps.googleusercontent.com',
      GOOGLE_CLIENT_SECRET: 'not-used',
      GOOGLE_OAUTH_URL: 'http://127.0.0.1:9',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    for (const gateway of [gw, google]) {
      const { tenantId } = await gateway.seedTenant('Browser pages');
      sessions.set(gateway, await sessionFor(gateway, tenantId));
    }
    const { tenantId } = sessions.get(gw) as Browser;
    const calendarId = await gw.localCalendar(tenantId, 'Team');
    const event = await new LocalCalendarProvider(new LocalEventStore(gw.db)).insertEvent(
      { id: calendarId, externalId: calendarId, timeZone: 'Europe/Berlin' },
      {
        summary: 'Planning',
        start: { dateTime: '2026-12-01T09:00:00Z' },
        end: { dateTime: '2026-12-01T10:00:00Z' },
      },
    );
    eventPath = `/events/${calendarId}/${event.id}`;
    const registered = await registerClient(gw, {
      client_name: 'Pages app',
      redirect_uris: ['http://127.0.0.1:4999/callback'],
      token_endpoint_auth_method: 'none',
    });
    expect(registered.status).toBe(201);
    clientId = registered.body.client_id as string;

    const authorize = (params: Record<string, string>) => `/oauth/authorize?${new URLSearchParams(params)}`;
    landings = {
      // The dashboard itself: every client-side path, signed in or not (it shows its sign-in page).
      'GET /*': [
        { path: '/', who: 'signed out', status: 200 },
        { path: '/', who: 'bogus session', status: 200 },
        { path: '/', who: 'signed in', status: 200 },
        { path: '/dashboard', who: 'signed out', status: 200 },
        { path: '/dashboard/keys', who: 'signed out', status: 200 },
        { path: '/accounts', who: 'bogus session', status: 200 },
        { path: '/consent?request=not-a-sealed-request', who: 'signed out', status: 200 },
        { path: '/no/such/page', who: 'signed out', status: 200 },
        { path: '/events/only-a-calendar', who: 'signed in', status: 200 },
        // Under /oauth the gateway answers itself: an unknown path there is a 404 page.
        { path: '/oauth/no-such-step', who: 'signed out', status: 404 },
        { path: '/oauth/google/no-such-step?state=x', who: 'signed in', status: 404 },
      ],
      'GET /oauth/authorize': [
        { path: '/oauth/authorize', who: 'signed out', status: 400 },
        { path: authorize({ client_id: 'cli_nosuchclient' }), who: 'signed out', status: 400 },
        { path: authorize({ client_id: 'https://127.0.0.1:9/client.json' }), who: 'signed out', status: 400 },
        {
          path: authorize({ client_id: clientId, redirect_uri: 'https://evil.example/callback' }),
          who: 'signed in',
          status: 400,
        },
        {
          path: `/oauth/authorize?client_id=${clientId}&client_id=${clientId}`,
          who: 'signed out',
          status: 400,
        },
        // Text no database can store is refused before the route: as a page here too.
        { path: '/oauth/authorize?client_id=%00', who: 'signed out', status: 400 },
      ],
      'GET /oauth/google/start': [
        { path: '/oauth/google/start', who: 'signed out', status: 401 },
        { path: '/oauth/google/start', who: 'bogus session', status: 401 },
        { path: '/oauth/google/start?access=write', who: 'signed in', status: 503 },
        { path: '/oauth/google/start', who: 'signed out', status: 401, google: true },
        { path: '/oauth/google/start?access=everything', who: 'signed in', status: 400, google: true },
        {
          path: '/oauth/google/start?upgrade=con_nosuchaccount',
          who: 'signed in',
          status: 404,
          google: true,
        },
      ],
      'GET /oauth/google/callback': [
        { path: '/oauth/google/callback?state=x&code=y', who: 'signed in', status: 503 },
        { path: '/oauth/google/callback', who: 'signed out', status: 400, google: true },
        { path: '/oauth/google/callback?state=forged&code=y', who: 'signed in', status: 400, google: true },
        {
          path: '/oauth/google/callback?state=eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl&error=access_denied',
          who: 'bogus session',
          status: 400,
          google: true,
        },
      ],
      'GET /oauth/microsoft/start': [
        { path: '/oauth/microsoft/start', who: 'signed out', status: 401 },
        { path: '/oauth/microsoft/start', who: 'bogus session', status: 401 },
        { path: '/oauth/microsoft/start?access=write', who: 'signed in', status: 503 },
      ],
      'GET /oauth/microsoft/callback': [
        { path: '/oauth/microsoft/callback?state=x&code=y', who: 'signed in', status: 503 },
        { path: '/oauth/microsoft/callback?state=x&code=y', who: 'signed out', status: 503 },
      ],
      'GET /events/:calendarId/:eventId': [
        { path: eventPath, who: 'signed in', status: 200 },
        { path: eventPath, who: 'signed out', status: 401 },
        { path: eventPath, who: 'bogus session', status: 401 },
        { path: `/events/${calendarId}/nosuchevent0`, who: 'signed in', status: 404 },
        { path: '/events/cal_nosuchcalendar/nosuchevent0', who: 'signed in', status: 404 },
      ],
    };
  }, 120_000);

  afterAll(async () => {
    await Promise.all([gw?.stop(), google?.stop()]);
  });

  it('has cases for every GET route of the app not listed as meant for programs', () => {
    const gets = routesOf(gw.app.printRoutes({ commonPrefix: false }))
      .filter((route) => route.method === 'GET')
      // printRoutes shows the catch-all `/*` as `*`.
      .map((route) => `GET ${route.url === '*' ? '/*' : route.url}`);
    expect(gets.length).toBeGreaterThan(10);
    const forBrowsers = gets.filter(
      (name) => !FOR_PROGRAMS.some(({ pattern }) => pattern.test(name.slice(4))),
    );
    expect(forBrowsers.sort()).toEqual(Object.keys(landings).sort());
    // Every exclusion still matches a route: a stale one would hide nothing but mislead.
    for (const { pattern } of FOR_PROGRAMS) {
      expect(
        gets.some((name) => pattern.test(name.slice(4))),
        String(pattern),
      ).toBe(true);
    }
  });

  it('answers each with an HTML page using the dashboard’s stylesheet, never JSON', async () => {
    const failures: string[] = [];
    for (const [route, cases] of Object.entries(landings)) {
      for (const landing of cases) {
        const gateway = landing.google ? google : gw;
        const real = (sessions.get(gateway) as Browser).cookie;
        const cookie =
          landing.who === 'signed in'
            ? real
            : landing.who === 'bogus session'
              ? `${real.split('=')[0]}=bogus.session.value`
              : undefined;
        const response = await fetch(`${gateway.url}${landing.path}`, {
          headers: { accept: BROWSER_ACCEPT, ...(cookie === undefined ? {} : { cookie }) },
          redirect: 'manual',
        });
        const body = await response.text();
        const label = `${route}: ${landing.who} ${landing.path}${landing.google ? ' (Google configured)' : ''} → ${response.status} ${response.headers.get('content-type')}`;
        const isJson = (() => {
          try {
            JSON.parse(body);
            return true;
          } catch {
            return false;
          }
        })();
        if (
          response.status !== landing.status ||
          !(response.headers.get('content-type') ?? '').startsWith('text/html') ||
          !/^<!doctype html>/i.test(body) ||
          !body.includes(`<link rel="stylesheet" href="${stylesheet}"`) ||
          isJson
        ) {
          failures.push(`${label} (expected ${landing.status}): ${body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('shows the event itself in the page, with the dashboard’s header', async () => {
    const response = await fetch(`${gw.url}${eventPath}`, {
      headers: { accept: BROWSER_ACCEPT, cookie: (sessions.get(gw) as Browser).cookie },
    });
    const html = await response.text();
    expect(html).toContain('<h1>Planning</h1>');
    expect(html).toContain('<dt>Calendar</dt><dd>Team</dd>');
    expect(html).toContain('<dt>Start</dt><dd>2026-12-01T10:00:00+01:00</dd>');
    expect(html).toContain('<header class="top">');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'none'");
  });
});
