import { randomBytes } from 'node:crypto';
import { SecretBox } from '@calgate/store';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, ORIGIN, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery';

function cookieOf(headers: Headers): string {
  return (headers.get('set-cookie') ?? '').split(';')[0] as string;
}

describe('accounts on a fresh install', () => {
  const encryptionKey = randomBytes(32);
  let gw: TestGateway;
  let owner: Browser;
  let email: string;

  beforeAll(async () => {
    gw = await startTestGateway({ ENCRYPTION_KEY: encryptionKey.toString('base64') });
    email = uniqueEmail('owner');
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.error', () => {
    it('names what is wrong with a sign-up', async () => {
      const short = await call(gw, 'POST', '/api/v1/auth/signup', { body: { email, password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.body.error.message).toContain('password: use a password of at least 12 characters');
      const bad = await call(gw, 'POST', '/api/v1/auth/signup', {
        body: { email: 'nope', password: PASSWORD },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('email: enter a valid email address');
      const extra = await call(gw, 'POST', '/api/v1/auth/signup', {
        body: { email, password: PASSWORD, role: 'admin' },
      });
      expect(extra.status).toBe(400);
      expect(extra.body.error.message).toContain('role');
    });
  });

  describe('.happy', () => {
    it('the first sign-up creates the tenant, stores an argon2id hash and signs in', async () => {
      const response = await call(gw, 'POST', '/api/v1/auth/signup', {
        body: { email: `  ${email.toUpperCase()} `, password: PASSWORD },
      });
      expect(response.status).toBe(201);
      expect(response.body.user.email).toBe(email);
      expect(response.body.tenant.name).toBe('My Calgate');
      const setCookie = response.headers.get('set-cookie') ?? '';
      expect(setCookie).toContain('HttpOnly');
      expect(setCookie).toContain('SameSite=Lax');
      expect(setCookie).not.toContain('Secure');
      owner = {
        cookie: cookieOf(response.headers),
        csrf: response.body.csrfToken,
        tenantId: response.body.tenant.id,
        userId: response.body.user.id,
      };
      const { rows } = await gw.db.pool.query('SELECT password_hash FROM users WHERE email = $1', [email]);
      expect(rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      const me = await call(gw, 'GET', '/api/v1/auth/me', { as: owner });
      expect(me.body).toEqual({
        user: { id: owner.userId, email, role: 'owner' },
        tenant: { id: owner.tenantId, name: 'My Calgate', timeZone: null },
      });
    });

    it('signs in with the right password, returns a CSRF token for that session, and signs out', async () => {
      const response = await call(gw, 'POST', '/api/v1/auth/signin', {
        body: { email: email.toUpperCase(), password: PASSWORD },
      });
      expect(response.status).toBe(200);
      expect(response.body.tenant).toEqual({ id: owner.tenantId, name: 'My Calgate' });
      const session: Browser = {
        ...owner,
        cookie: cookieOf(response.headers),
        csrf: response.body.csrfToken,
      };
      const csrf = await call(gw, 'GET', '/api/v1/auth/csrf', { as: session });
      expect(csrf.body.csrfToken).toBe(session.csrf);
      expect(session.csrf).not.toBe(owner.csrf);
      const out = await call(gw, 'POST', '/api/v1/auth/signout', { as: session });
      expect(out.status).toBe(200);
      expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    });
  });

  describe('.security', () => {
    it('refuses later sign-ups without an invitation', async () => {
      const response = await call(gw, 'POST', '/api/v1/auth/signup', {
        body: { email: uniqueEmail('late'), password: PASSWORD, tenantName: 'Mine' },
      });
      expect(response.status).toBe(403);
      expect(response.body.error.message).toContain('invitation');
      expect(response.headers.get('set-cookie')).toBeNull();
    });

    it('answers a wrong password and an unknown email alike', async () => {
      const wrong = await call(gw, 'POST', '/api/v1/auth/signin', {
        body: { email, password: 'wrong password!' },
      });
      const unknown = await call(gw, 'POST', '/api/v1/auth/signin', {
        body: { email: uniqueEmail('nobody'), password: PASSWORD },
      });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body.error.message).toBe(unknown.body.error.message);
    });

    it('rate-limits sign-in per email and address with Retry-After', async () => {
      const target = uniqueEmail('target');
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 6; attempt++) {
        const response = await call(gw, 'POST', '/api/v1/auth/signin', {
          body: { email: target, password: 'wrong password!' },
        });
        statuses.push(response.status);
        if (response.status === 429) {
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        }
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      const other = await call(gw, 'POST', '/api/v1/auth/signin', { body: { email, password: PASSWORD } });
      expect(other.status).toBe(200);
    });

    it('refuses sign-in and sign-up from another origin', async () => {
      const signin = await call(gw, 'POST', '/api/v1/auth/signin', {
        body: { email, password: PASSWORD },
        headers: { origin: 'https://evil.test' },
      });
      expect(signin.status).toBe(403);
      expect(signin.headers.get('set-cookie')).toBeNull();
    });

    it('answers 401 to a missing, forged or expired session, and to any self-made token', async () => {
      expect((await call(gw, 'GET', '/api/v1/auth/me')).status).toBe(401);
      const forged = await new SignJWT({ tid: owner.tenantId })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(owner.userId)
        .setAudience('calgate-dashboard')
        .setExpirationTime('1h')
        .sign(randomBytes(32));
      expect(
        (await call(gw, 'GET', '/api/v1/auth/me', { headers: { cookie: `calgate_session=${forged}` } }))
          .status,
      ).toBe(401);
      const sessionKey = new SecretBox([new Uint8Array(encryptionKey)]).deriveKey('session');
      const expired = await new SignJWT({ tid: owner.tenantId })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(owner.userId)
        .setAudience('calgate-dashboard')
        .setIssuedAt(Math.floor(Date.now() / 1000) - 13 * 3600)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
        .sign(sessionKey);
      const valid = await new SignJWT({ tid: owner.tenantId })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(owner.userId)
        .setAudience('calgate-dashboard')
        .setExpirationTime('1h')
        .sign(sessionKey);
      expect(
        (await call(gw, 'GET', '/api/v1/auth/me', { headers: { cookie: `calgate_session=${expired}` } }))
          .status,
      ).toBe(401);
      // Sessions exist only as rows on the server: no signed token, whatever its key, is one.
      expect(
        (await call(gw, 'GET', '/api/v1/auth/me', { headers: { cookie: `calgate_session=${valid}` } }))
          .status,
      ).toBe(401);
    });

    it('needs the session-bound CSRF token and an allowed Origin to sign out', async () => {
      const noToken = await call(gw, 'POST', '/api/v1/auth/signout', {
        as: owner,
        headers: { 'x-calgate-csrf': 'guess' },
      });
      expect(noToken.status).toBe(403);
      expect(noToken.body.error.message).toContain('x-calgate-csrf');
      const foreign = await call(gw, 'POST', '/api/v1/auth/signout', {
        as: owner,
        headers: { origin: 'https://evil.test' },
      });
      expect(foreign.status).toBe(403);
      expect(foreign.headers.get('set-cookie')).toBeNull();
      expect(ORIGIN).toBe('http://calgate.test');
    });
  });
});

describe('accounts when the embedded first run already made a tenant', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('the first sign-up adopts that tenant and names it', async () => {
    const { tenantId } = await gw.seedTenant('Embedded');
    const response = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: uniqueEmail(), password: PASSWORD, tenantName: 'Acme' },
    });
    expect(response.status).toBe(201);
    expect(response.body.tenant).toEqual({ id: tenantId, name: 'Acme' });
    const tenants = await gw.db.pool.query('SELECT count(*)::int AS n FROM tenants');
    expect(tenants.rows[0].n).toBe(1);
  });

  it('two simultaneous first sign-ups leave one owner', async () => {
    const other = await startTestGateway();
    try {
      const answers = await Promise.all(
        [0, 1, 2].map(() =>
          call(other, 'POST', '/api/v1/auth/signup', { body: { email: uniqueEmail(), password: PASSWORD } }),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 403, 403]);
      const users = await other.db.pool.query('SELECT count(*)::int AS n FROM users');
      expect(users.rows[0].n).toBe(1);
    } finally {
      await other.stop();
    }
  });
});
