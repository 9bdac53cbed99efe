import { randomBytes } from 'node:crypto';
import type { Role } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_ROUTES, policyFor } from '../src/http/api/roles.ts';
import { type Browser, csrfFor, ORIGIN, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';
import { routesOf } from './routes.ts';

const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'auditor'];

/** One request as the dashboard sends it; the body is read as JSON only when it is JSON (CSV exports). */
async function send(gw: TestGateway, method: string, path: string, as: Browser) {
  const headers: Record<string, string> = { cookie: as.cookie };
  if (method !== 'GET') {
    Object.assign(headers, { origin: ORIGIN, 'x-calgate-csrf': as.csrf, 'content-type': 'application/json' });
  }
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers,
    ...(method === 'GET' ? {} : { body: '{}' }),
  });
  const json = (response.headers.get('content-type') ?? '').includes('json');
  const body = json ? ((await response.json()) as { error?: { message?: string } }) : null;
  if (!json) {
    await response.text();
  }
  return { status: response.status, message: body?.error?.message ?? '' };
}

/** A path for a route pattern: parameters become ids that exist nowhere. */
function pathOf(url: string): string {
  return url.replace(/:[A-Za-z]+/g, 'xyz_missing');
}

describe('role policy: every /api/v1 route for every role', () => {
  let gw: TestGateway;
  let tenantId: string;
  const users = new Map<Role, string>();

  /** A fresh session for the role's user (some routes end the caller's sessions). */
  async function as(role: Role): Promise<Browser> {
    const userId = users.get(role) as string;
    const cookie = (await gw.runtime.deps.dashboard.sessions.issue({ userId, tenantId })).split(
      ';',
    )[0] as string;
    return { cookie, csrf: await csrfFor(gw.url, cookie), tenantId, userId };
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    ({ tenantId } = await gw.seedTenant('Roles'));
    for (const role of ROLES) {
      const userId = `usr_${randomBytes(8).toString('hex')}`;
      await gw.db.pool.query('INSERT INTO users (id, tenant_id, email, role) VALUES ($1, $2, $3, $4)', [
        userId,
        tenantId,
        uniqueEmail(role),
        role,
      ]);
      users.set(role, userId);
    }
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('finds the dashboard routes in the running app', () => {
    const routes = routesOf(gw.app.printRoutes({ commonPrefix: false })).filter((r) =>
      r.url.startsWith('/api/v1/'),
    );
    const names = routes.map((r) => `${r.method} ${r.url}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'GET /api/v1/keys',
        'POST /api/v1/keys/:id/revoke',
        'PUT /api/v1/grants',
        'GET /api/v1/members',
        'DELETE /api/v1/members/:id',
        'POST /api/v1/invitations/accept',
      ]),
    );
    expect(routes.length).toBeGreaterThan(40);
  });

  it('allows or refuses each route per role as the policy says, with a specific message', async () => {
    const routes = routesOf(gw.app.printRoutes({ commonPrefix: false })).filter(
      (r) => r.url.startsWith('/api/v1/') && !PUBLIC_ROUTES.includes(`${r.method} ${r.url}`),
    );
    const failures: string[] = [];
    for (const route of routes) {
      const policy = policyFor(route.method, route.url);
      // The defaults, stated independently of the table: reads for all, writes for managers.
      if (route.method === 'GET') {
        expect(policy.roles).toEqual(ROLES);
      }
      expect(policy.roles).toContain('owner');
      expect(policy.roles).toContain('admin');
      for (const role of ROLES) {
        const answer = await send(gw, route.method, pathOf(route.url), await as(role));
        const allowed = policy.roles.includes(role);
        const label = `${role} ${route.method} ${route.url} → ${answer.status} ${JSON.stringify(answer.message)}`;
        if (allowed && answer.status === 403) {
          failures.push(`allowed but refused: ${label}`);
        }
        if (!allowed && answer.status !== 403) {
          failures.push(`refused but answered: ${label}`);
        }
        if (!allowed && answer.status === 403) {
          const { message } = answer;
          const start = role === 'auditor' ? 'Auditors have read-only access' : 'Members cannot';
          if (!message.startsWith(start)) {
            failures.push(`unclear refusal: ${label}`);
          }
        }
        if (role === 'auditor' && route.method !== 'GET' && allowed) {
          // Auditors write only their own account and sessions (and compute previews).
          expect(route.url).toMatch(
            /^\/api\/v1\/(account\/|auth\/signout$|sessions\/(revoke-all|:id\/revoke)$|rules\/preview$)/,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

/**
 * Routes that answer without a session, each for a reason; every other /api/v1 route must
 * refuse a caller with no session (or a session cookie that is not one) with 401.
 */
const PUBLIC_WITH_REASON: Record<string, string> = {
  'POST /api/v1/auth/signup': 'creates the first account (or a self-service tenant): there is no session yet',
  'GET /api/v1/auth/first-run':
    'whether the install has no owner yet, so the dashboard opens on the create-owner form (sign-up says as much)',
  'POST /api/v1/auth/signin': 'how a session is obtained',
  'POST /api/v1/auth/signin/totp':
    'the second step of signing in, bound to the first step’s token, not to a session',
  'GET /api/v1/invitations/lookup':
    'the invitation link from the e-mail, opened before the invitee has an account',
  'POST /api/v1/invitations/accept': 'the invitee sets a password and gets their first session',
  'POST /api/v1/auth/reset': 'the one-time password-reset link, used by someone who cannot sign in',
};

/**
 * Routes that need a session to act but answer without one, for a reason. Not public: with a
 * session they act through the guard like any other route.
 */
const ANSWERS_WITHOUT_SESSION: Record<string, string> = {
  'POST /api/v1/auth/signout':
    'idempotent: it clears the session cookie whether or not it names a live session, so a stale tab can always sign out',
};

describe('no session: every /api/v1 route but the public ones answers 401', () => {
  let gw: TestGateway;
  let cookieName: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    const { tenantId } = await gw.seedTenant('Signed out');
    const userId = `usr_${randomBytes(8).toString('hex')}`;
    await gw.db.pool.query('INSERT INTO users (id, tenant_id, email, role) VALUES ($1, $2, $3, $4)', [
      userId,
      tenantId,
      uniqueEmail('owner'),
      'owner',
    ]);
    cookieName = (await gw.runtime.deps.dashboard.sessions.issue({ userId, tenantId })).split(
      '=',
    )[0] as string;
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('lists the same public routes as the guard, each with a reason', () => {
    expect(Object.keys(PUBLIC_WITH_REASON).sort()).toEqual([...PUBLIC_ROUTES].sort());
    const routes = routesOf(gw.app.printRoutes({ commonPrefix: false })).map((r) => `${r.method} ${r.url}`);
    for (const route of PUBLIC_ROUTES) {
      expect(routes, route).toContain(route);
    }
  });

  it('refuses each other route without a session and with a bogus session cookie, saying to sign in', async () => {
    const routes = routesOf(gw.app.printRoutes({ commonPrefix: false })).filter(
      (r) =>
        r.url.startsWith('/api/v1/') &&
        PUBLIC_WITH_REASON[`${r.method} ${r.url}`] === undefined &&
        ANSWERS_WITHOUT_SESSION[`${r.method} ${r.url}`] === undefined,
    );
    expect(routes.length).toBeGreaterThan(40);
    const failures: string[] = [];
    for (const route of routes) {
      for (const cookie of [undefined, `${cookieName}=bogus.not-a-session`, `${cookieName}=`]) {
        // Writes carry the dashboard's Origin and a CSRF header, so only the missing session is wrong.
        const headers: Record<string, string> = cookie === undefined ? {} : { cookie };
        if (route.method !== 'GET') {
          Object.assign(headers, {
            origin: ORIGIN,
            'x-calgate-csrf': 'bogus',
            'content-type': 'application/json',
          });
        }
        const response = await fetch(`${gw.url}${pathOf(route.url)}`, {
          method: route.method,
          headers,
          ...(route.method === 'GET' ? {} : { body: '{}' }),
        });
        const text = await response.text();
        const body = (() => {
          try {
            return JSON.parse(text) as { error?: { code?: string; message?: string } };
          } catch {
            return {};
          }
        })();
        if (
          response.status !== 401 ||
          body.error?.code !== 'unauthenticated' ||
          body.error.message !== 'Sign in to the Calgate dashboard first.'
        ) {
          failures.push(
            `${route.method} ${route.url} (cookie ${cookie ?? 'none'}) → ${response.status} ${text.slice(0, 160)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('lets the public routes through to their own checks (no 401 for the missing session)', async () => {
    for (const route of PUBLIC_ROUTES) {
      const [method = '', url = ''] = route.split(' ');
      const response = await fetch(`${gw.url}${url}`, {
        method,
        headers: method === 'GET' ? {} : { origin: ORIGIN, 'content-type': 'application/json' },
        ...(method === 'GET' ? {} : { body: '{}' }),
      });
      const body = (await response.json()) as { error?: { code?: string; message?: string } };
      if (route === 'GET /api/v1/auth/first-run') {
        // Takes nothing: it answers, and only whether anyone has signed up.
        expect(response.status, route).toBe(200);
        expect(body).toEqual({ firstRun: false });
        continue;
      }
      // An empty request is refused for what it lacks, not for being signed out.
      expect(response.status, route).toBe(400);
      expect(body.error?.code, route).toBe('invalid_argument');
    }
  });

  it('signs out without a session by clearing the cookie, and reveals nothing', async () => {
    expect(Object.keys(ANSWERS_WITHOUT_SESSION)).toEqual(['POST /api/v1/auth/signout']);
    const response = await fetch(`${gw.url}/api/v1/auth/signout`, {
      method: 'POST',
      headers: {
        origin: ORIGIN,
        cookie: `${cookieName}=bogus.not-a-session`,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ signedOut: true });
    expect(response.headers.get('set-cookie')).toMatch(new RegExp(`^${cookieName}=;`));
  });
});
