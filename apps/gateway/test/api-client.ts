import { randomBytes } from 'node:crypto';
import type { TestGateway } from './harness.ts';

export const ORIGIN = 'http://calgate.test';

/** The CSRF token the gateway binds to a session cookie, read as the dashboard reads it. */
export async function csrfFor(baseUrl: string, cookie: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/auth/csrf`, { headers: { cookie } });
  if (!response.ok) {
    throw new Error(`GET /api/v1/auth/csrf answered ${response.status}`);
  }
  return ((await response.json()) as { csrfToken: string }).csrfToken;
}

/** A signed-in dashboard user: its cookie and CSRF token. */
export interface Browser {
  cookie: string;
  csrf: string;
  tenantId: string;
  userId: string;
}

/** A unique email per run: the sign-in limiter lives in the shared Redis. */
export function uniqueEmail(name = 'ann'): string {
  return `${name}-${randomBytes(6).toString('hex')}@example.test`;
}

/** A user on a tenant (inserted directly, as an invitation would), signed in by the gateway's own sessions. */
export async function sessionFor(gw: TestGateway, tenantId: string): Promise<Browser> {
  const userId = `usr_${randomBytes(8).toString('hex')}`;
  await gw.db.pool.query('INSERT INTO users (id, tenant_id, email) VALUES ($1, $2, $3)', [
    userId,
    tenantId,
    uniqueEmail('member'),
  ]);
  const cookie = (await gw.runtime.deps.dashboard.sessions.issue({ userId, tenantId })).split(
    ';',
  )[0] as string;
  return { cookie, csrf: await csrfFor(gw.url, cookie), tenantId, userId };
}

/** Signs in through POST /api/v1/auth/signin as the dashboard does: a new session each time. */
export async function signIn(gw: TestGateway, email: string, password: string): Promise<Browser> {
  const response = await call(gw, 'POST', '/api/v1/auth/signin', { body: { email, password } });
  if (response.status !== 200) {
    throw new Error(`POST /api/v1/auth/signin answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return {
    cookie: (response.headers.get('set-cookie') ?? '').split(';')[0] as string,
    csrf: response.body.csrfToken,
    tenantId: response.body.tenant.id,
    userId: response.body.user.id,
  };
}

/** A JSON answer, read field by field by the tests. */
// biome-ignore lint/suspicious/noExplicitAny: tests assert on the shape; a typed client would only restate it
export type Body = any;

/** One /api/v1 request as the dashboard sends it (Origin and CSRF on writes unless overridden). */
export async function call(
  gw: TestGateway,
  method: string,
  path: string,
  options: { as?: Browser; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Body; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (options.as !== undefined) {
    headers.cookie = options.as.cookie;
    if (method !== 'GET') {
      headers.origin = ORIGIN;
      headers['x-calgate-csrf'] = options.as.csrf;
    }
  } else if (method !== 'GET') {
    headers.origin = ORIGIN;
  }
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...headers, ...options.headers },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text), headers: response.headers };
}
