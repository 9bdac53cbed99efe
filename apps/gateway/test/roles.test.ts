import { randomBytes } from 'node:crypto';
import type { Role } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_ROUTES, policyFor } from '../src/http/api/roles.ts';
import { type Browser, csrfFor, ORIGIN, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'auditor'];

/**
 * Every route of the running app from `printRoutes({ commonPrefix: false })`: a tree whose lines
 * hold a path piece and its methods, indented by depth; a route is the concatenation of its
 * ancestors' pieces. Reading the live app means a route added later is covered without an edit.
 */
function routesOf(printed: string): { method: string; url: string }[] {
  const stack: string[] = [];
  const routes: { method: string; url: string }[] = [];
  for (const line of printed.split('\n')) {
    const marker = line.search(/[├└]── /);
    if (marker < 0) {
      continue;
    }
    const depth = marker / 4;
    const match = /^(.*?) \(([^)]*)\)$/.exec(line.slice(marker + 4));
    if (match === null) {
      continue;
    }
    const [, piece = '', methods = ''] = match;
    stack.length = depth;
    stack.push(piece === '(empty root node)' ? '' : piece);
    const url = stack.join('');
    for (const method of methods.split(',').map((m) => m.trim())) {
      if (method !== '-' && method !== '' && method !== 'HEAD') {
        routes.push({ method, url });
      }
    }
  }
  return routes;
}

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
