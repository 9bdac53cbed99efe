import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { redisUrl } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords.ts';
import { type Browser, call, ORIGIN, sessionFor, signIn, uniqueEmail } from './api-client.ts';
import { type GatewayProcess, spawnGatewayProcess, startTestGateway, type TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'staple of a new password';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

function tokenOf(browser: Browser): string {
  return browser.cookie.slice('calgate_session='.length);
}

/** Sends a request with a header value fetch refuses to send (a raw NUL), over a plain socket. */
function rawStatus(baseUrl: string, request: string): Promise<number> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += String(chunk);
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (match !== null) {
        resolve(Number(match[1]));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`no status line in ${JSON.stringify(answer)}`)));
  });
}

describe('server-side dashboard sessions', () => {
  let gw: TestGateway;
  let owner: { email: string; tenantId: string };
  let globex: Awaited<ReturnType<TestGateway['seedTenant']>>;

  /** A user of the owner's tenant with a password (inserted, as an invitation would). */
  async function member(password = PASSWORD): Promise<string> {
    const email = uniqueEmail('member');
    await gw.db.pool.query(
      'INSERT INTO users (id, tenant_id, email, password_hash) VALUES ($1, $2, $3, $4)',
      [`usr_${randomBytes(8).toString('hex')}`, owner.tenantId, email, await hashPassword(password)],
    );
    return email;
  }

  async function works(browser: Browser): Promise<boolean> {
    const { status } = await call(gw, 'GET', '/api/v1/keys', { as: browser });
    expect([200, 401]).toContain(status);
    return status === 200;
  }

  beforeAll(async () => {
    gw = await startTestGateway({ ENCRYPTION_KEY });
    const email = uniqueEmail('owner');
    const signup = await call(gw, 'POST', '/api/v1/auth/signup', { body: { email, password: PASSWORD } });
    expect(signup.status).toBe(201);
    owner = { email, tenantId: signup.body.tenant.id };
    globex = await gw.seedTenant('Globex');
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('keeps only the hash of the random token, for the configured lifetime', async () => {
      const ann = await signIn(gw, await member(), PASSWORD);
      expect(tokenOf(ann)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const { rows } = await gw.db.pool.query(
        `SELECT id, user_id, tenant_id, revoked_at,
                extract(epoch FROM expires_at - created_at)::int AS lifetime
         FROM sessions WHERE user_id = $1`,
        [ann.userId],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        user_id: ann.userId,
        tenant_id: owner.tenantId,
        revoked_at: null,
        lifetime: 12 * 3600,
      });
      expect(Buffer.from(rows[0].id)).toEqual(createHash('sha256').update(tokenOf(ann)).digest());
      const dump = await gw.db.pool.query('SELECT row_to_json(s)::text AS row FROM sessions s');
      expect(dump.rows.map((row) => row.row).join()).not.toContain(tokenOf(ann));
    });

    it('signing out ends the session at once: the old cookie can neither read nor create keys', async () => {
      const ann = await signIn(gw, await member(), PASSWORD);
      expect(await works(ann)).toBe(true);
      const out = await call(gw, 'POST', '/api/v1/auth/signout', { as: ann });
      expect(out.status).toBe(200);
      expect(out.headers.get('set-cookie')).toContain('Max-Age=0');

      const list = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(list.status).toBe(401);
      expect(list.body.error.code).toBe('unauthenticated');
      const create = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'after sign-out' } });
      expect(create.status).toBe(401);
      expect((await call(gw, 'GET', '/api/v1/auth/me', { as: ann })).status).toBe(401);
      expect((await call(gw, 'GET', '/api/v1/auth/csrf', { as: ann })).status).toBe(401);
      const { rows } = await gw.db.pool.query(
        `SELECT count(*)::int AS n FROM api_keys WHERE name = 'after sign-out'`,
      );
      expect(rows[0].n).toBe(0);
      const revoked = await gw.db.pool.query('SELECT revoked_at FROM sessions WHERE user_id = $1', [
        ann.userId,
      ]);
      expect(revoked.rows[0].revoked_at).toBeInstanceOf(Date);
    });

    it('signing out on one gateway ends the session on another gateway process at once', async () => {
      const other: GatewayProcess = await spawnGatewayProcess({
        DATABASE_URL: gw.db.url,
        REDIS_URL: redisUrl(),
        ENCRYPTION_KEY,
      });
      try {
        const ann = await signIn(gw, await member(), PASSWORD);
        const there = (method: string, path: string, body?: unknown) =>
          fetch(`${other.url}${path}`, {
            method,
            headers: {
              cookie: ann.cookie,
              ...(method === 'GET' ? {} : { origin: ORIGIN, 'x-calgate-csrf': ann.csrf }),
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
        expect((await there('GET', '/api/v1/keys')).status).toBe(200);
        expect((await there('POST', '/api/v1/keys', { name: 'before sign-out' })).status).toBe(201);
        expect((await call(gw, 'POST', '/api/v1/auth/signout', { as: ann })).status).toBe(200);
        expect((await there('GET', '/api/v1/keys')).status).toBe(401);
        expect((await there('POST', '/api/v1/keys', { name: 'after sign-out' })).status).toBe(401);
      } finally {
        await other.stop();
      }
    });

    it('signing out everywhere ends every session of the user and no one else’s', async () => {
      const email = await member();
      const laptop = await signIn(gw, email, PASSWORD);
      const phone = await signIn(gw, email, PASSWORD);
      const colleague = await signIn(gw, await member(), PASSWORD);
      const listed = await call(gw, 'GET', '/api/v1/sessions', { as: laptop });
      expect(listed.status).toBe(200);
      expect(listed.body.sessions).toHaveLength(2);
      expect(listed.body.sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
      expect(Object.keys(listed.body.sessions[0]).sort()).toEqual([
        'client',
        'createdAt',
        'current',
        'expiresAt',
        'id',
        'ip',
        'lastSeenAt',
      ]);

      const everywhere = await call(gw, 'POST', '/api/v1/sessions/revoke-all', { as: laptop });
      expect(everywhere.status).toBe(200);
      expect(everywhere.body).toEqual({ revoked: 2 });
      expect(everywhere.headers.get('set-cookie')).toContain('Max-Age=0');
      expect(await works(laptop)).toBe(false);
      expect(await works(phone)).toBe(false);
      expect(
        (await call(gw, 'POST', '/api/v1/keys', { as: phone, body: { name: 'from the phone' } })).status,
      ).toBe(401);
      expect(await works(colleague)).toBe(true);
      // A new sign-in works again.
      expect(await works(await signIn(gw, email, PASSWORD))).toBe(true);
    });

    it('lists where each session signed in from: browser and system from the User-Agent, and the address', async () => {
      const email = await member();
      const firefox = await call(gw, 'POST', '/api/v1/auth/signin', {
        body: { email, password: PASSWORD },
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' },
      });
      expect(firefox.status).toBe(200);
      const safari = await call(gw, 'POST', '/api/v1/auth/signin', {
        body: { email, password: PASSWORD },
        headers: {
          'user-agent':
            'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
        },
      });
      expect(safari.status).toBe(200);
      const as: Browser = {
        cookie: (safari.headers.get('set-cookie') ?? '').split(';')[0] as string,
        csrf: safari.body.csrfToken,
        tenantId: owner.tenantId,
        userId: safari.body.user.id,
      };
      const { body } = await call(gw, 'GET', '/api/v1/sessions', { as });
      expect(body.sessions).toHaveLength(2);
      expect(body.sessions.map((s: { client: string }) => s.client).sort()).toEqual([
        'Firefox 133 on Linux',
        'Safari 18 on iOS',
      ]);
      for (const session of body.sessions) {
        expect(session.id).toMatch(/^[0-9a-f]{64}$/);
        expect(session.ip).toBe('127.0.0.1');
      }
      const current = body.sessions.find((s: { current: boolean }) => s.current);
      expect(current.client).toBe('Safari 18 on iOS');
      const stored = await gw.db.pool.query('SELECT user_agent, ip FROM sessions WHERE user_id = $1', [
        as.userId,
      ]);
      expect(stored.rows.map((row) => row.user_agent).join()).toContain('Firefox/133.0');
    });

    it('ends one session by id: the other stays, and ending the current one clears the cookie', async () => {
      const email = await member();
      const laptop = await signIn(gw, email, PASSWORD);
      const phone = await signIn(gw, email, PASSWORD);
      const listed = await call(gw, 'GET', '/api/v1/sessions', { as: laptop });
      const phoneId = listed.body.sessions.find((s: { current: boolean }) => !s.current).id;
      const laptopId = listed.body.sessions.find((s: { current: boolean }) => s.current).id;

      const one = await call(gw, 'POST', `/api/v1/sessions/${phoneId}/revoke`, { as: laptop });
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ revoked: true, current: false });
      expect(one.headers.get('set-cookie')).toBeNull();
      expect(await works(phone)).toBe(false);
      expect(await works(laptop)).toBe(true);
      const after = await call(gw, 'GET', '/api/v1/sessions', { as: laptop });
      expect(after.body.sessions.map((s: { id: string }) => s.id)).toEqual([laptopId]);

      const again = await call(gw, 'POST', `/api/v1/sessions/${phoneId}/revoke`, { as: laptop });
      expect(again.status).toBe(404);

      const self = await call(gw, 'POST', `/api/v1/sessions/${laptopId}/revoke`, { as: laptop });
      expect(self.status).toBe(200);
      expect(self.body).toEqual({ revoked: true, current: true });
      expect(self.headers.get('set-cookie')).toContain('Max-Age=0');
      expect(await works(laptop)).toBe(false);
    });

    it('changing the password ends the other sessions and keeps this one', async () => {
      const email = await member();
      const here = await signIn(gw, email, PASSWORD);
      const elsewhere = await signIn(gw, email, PASSWORD);
      const changed = await call(gw, 'POST', '/api/v1/account/password', {
        as: here,
        body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toEqual({ changed: true, otherSessionsSignedOut: 1 });
      expect(await works(elsewhere)).toBe(false);
      expect(await works(here)).toBe(true);
      expect(
        (await call(gw, 'POST', '/api/v1/keys', { as: here, body: { name: 'after the change' } })).status,
      ).toBe(201);
      const old = await call(gw, 'POST', '/api/v1/auth/signin', { body: { email, password: PASSWORD } });
      expect(old.status).toBe(401);
      expect(await works(await signIn(gw, email, NEW_PASSWORD))).toBe(true);
    });

    it('sweeps expired sessions when someone signs in', async () => {
      const ann = await signIn(gw, await member(), PASSWORD);
      await gw.db.pool.query(
        `UPDATE sessions SET created_at = now() - interval '13 hours', expires_at = now() - interval '1 hour'
         WHERE user_id = $1`,
        [ann.userId],
      );
      expect(await works(ann)).toBe(false);
      await signIn(gw, await member(), PASSWORD);
      const { rows } = await gw.db.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [
        ann.userId,
      ]);
      expect(rows[0].n).toBe(0);
    });
  });

  describe('.error', () => {
    it('a wrong current password, a short or unchanged new one change nothing', async () => {
      const email = await member();
      const here = await signIn(gw, email, PASSWORD);
      const elsewhere = await signIn(gw, email, PASSWORD);
      const attempts = [
        {
          body: { currentPassword: 'not the password', newPassword: NEW_PASSWORD },
          message: 'currentPassword: this is not your current password',
        },
        {
          body: { currentPassword: PASSWORD, newPassword: 'short' },
          message: 'newPassword: use a password of at least 12 characters',
        },
        {
          body: { currentPassword: PASSWORD, newPassword: PASSWORD },
          message: 'newPassword: choose a password other than the current one',
        },
        { body: { newPassword: NEW_PASSWORD }, message: 'currentPassword' },
      ];
      for (const { body, message } of attempts) {
        const answer = await call(gw, 'POST', '/api/v1/account/password', { as: here, body });
        expect(answer.status).toBe(400);
        expect(answer.body.error.message).toContain(message);
      }
      expect(await works(elsewhere)).toBe(true);
      expect(await works(here)).toBe(true);
      expect(await works(await signIn(gw, email, PASSWORD))).toBe(true);
    });

    it('an account without a password has none to change', async () => {
      const invited = await sessionFor(gw, owner.tenantId);
      const answer = await call(gw, 'POST', '/api/v1/account/password', {
        as: invited,
        body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      });
      expect(answer.status).toBe(412);
      expect(answer.body.error.message).toContain('no password');
    });
  });

  describe('.security', () => {
    it('signing out everywhere and changing the password need the Origin and the CSRF token', async () => {
      const email = await member();
      const ann = await signIn(gw, email, PASSWORD);
      for (const path of ['/api/v1/sessions/revoke-all', '/api/v1/account/password']) {
        const body = { currentPassword: PASSWORD, newPassword: NEW_PASSWORD };
        const noToken = await call(gw, 'POST', path, {
          as: ann,
          body,
          headers: { 'x-calgate-csrf': 'guess' },
        });
        expect(noToken.status).toBe(403);
        const foreign = await call(gw, 'POST', path, {
          as: ann,
          body,
          headers: { origin: 'https://evil.test' },
        });
        expect(foreign.status).toBe(403);
        expect(foreign.headers.get('set-cookie')).toBeNull();
      }
      expect(await works(ann)).toBe(true);
      expect(await works(await signIn(gw, email, PASSWORD))).toBe(true);
    });

    it('another person’s session id is unknown (404) and stays signed in; a malformed id is a 400', async () => {
      const ann = await signIn(gw, await member(), PASSWORD);
      const bob = await signIn(gw, await member(), PASSWORD);
      const bobId = createHash('sha256').update(tokenOf(bob)).digest('hex');
      const foreign = await call(gw, 'POST', `/api/v1/sessions/${bobId}/revoke`, { as: ann });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
      expect(await works(bob)).toBe(true);
      expect(await works(ann)).toBe(true);
      expect((await call(gw, 'POST', '/api/v1/sessions/nothex/revoke', { as: ann })).status).toBe(400);
      const noCsrf = await call(gw, 'POST', `/api/v1/sessions/${bobId}/revoke`, {
        as: bob,
        headers: { 'x-calgate-csrf': 'wrong' },
      });
      expect(noCsrf.status).toBe(403);
      expect(await works(bob)).toBe(true);
    });

    it('a session of one tenant never reaches another tenant’s resources', async () => {
      const ann = await signIn(gw, await member(), PASSWORD);
      const keys = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(keys.body.keys.map((key: { id: string }) => key.id)).not.toContain(globex.keyId);
      for (const [method, path, body] of [
        ['POST', `/api/v1/keys/${globex.keyId}/revoke`, undefined],
        ['POST', `/api/v1/keys/${globex.keyId}/rotate`, undefined],
        ['PATCH', `/api/v1/keys/${globex.keyId}`, { timeZone: 'Europe/Paris' }],
      ] as const) {
        expect((await call(gw, method, path, { as: ann, body })).status).toBe(404);
      }
      await gw.db.pool.query(
        `INSERT INTO audit_log (tenant_id, key_id, tool, calendar_ids, outcome, latency_ms)
         VALUES ($1, $2, 'list_calendars', '{}', 'ok', 3)`,
        [globex.tenantId, globex.keyId],
      );
      const audit = await call(gw, 'GET', `/api/v1/audit?keyId=${globex.keyId}`, { as: ann });
      expect(audit.status).toBe(200);
      expect(audit.body.entries).toEqual([]);
      const { rows } = await gw.db.pool.query('SELECT revoked_at, time_zone FROM api_keys WHERE id = $1', [
        globex.keyId,
      ]);
      expect(rows[0]).toEqual({ revoked_at: null, time_zone: null });

      // A session row whose tenant is not its user's (written behind Calgate's back) is refused.
      const token = randomBytes(32).toString('base64url');
      await gw.db.pool.query(
        `INSERT INTO sessions (id, user_id, tenant_id, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')`,
        [createHash('sha256').update(token).digest(), ann.userId, globex.tenantId],
      );
      const forged = await call(gw, 'GET', '/api/v1/keys', {
        headers: { cookie: `calgate_session=${token}` },
      });
      expect(forged.status).toBe(401);
      // And the gateway will not start one for a user outside the tenant.
      await expect(
        gw.runtime.deps.dashboard.sessions.issue({ userId: ann.userId, tenantId: globex.tenantId }),
      ).rejects.toThrow(/No user/);
    });

    it('a malformed or unknown session cookie is no session on every dashboard route, never a 500', async () => {
      const ann = await signIn(gw, await member(), PASSWORD);
      const values = [
        '%',
        '%E0%A4%A',
        '%00',
        'not a token at all!',
        tokenOf(ann).slice(1),
        `${tokenOf(ann)}A`,
        `${tokenOf(ann)}%`,
        randomBytes(32).toString('base64url'),
        randomBytes(32).toString('base64'),
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3IifQ.c2lnbmF0dXJl',
        'x'.repeat(10 * 1024),
        '',
      ];
      for (const value of values) {
        const cookie = `theme=dark; calgate_session=${value}`;
        const label = `calgate_session=${value.slice(0, 50)}`;
        for (const [method, path] of [
          ['GET', '/api/v1/keys'],
          ['POST', '/api/v1/keys'],
          ['GET', '/api/v1/auth/me'],
          ['GET', '/api/v1/auth/csrf'],
          ['GET', '/api/v1/sessions'],
          ['POST', '/api/v1/sessions/revoke-all'],
          ['GET', '/api/v1/connections'],
        ] as const) {
          const answer = await call(gw, method, path, {
            headers: { cookie, ...(method === 'POST' ? { 'x-calgate-csrf': ann.csrf } : {}) },
            ...(method === 'POST' ? { body: { name: 'by a broken cookie' } } : {}),
          });
          expect(answer.status, `${method} ${path} with ${label}`).toBe(401);
          expect(answer.body.error.code).toBe('unauthenticated');
        }
        const signout = await call(gw, 'POST', '/api/v1/auth/signout', { headers: { cookie } });
        expect(signout.status, `sign-out with ${label}`).toBe(200);
        for (const page of ['/', '/keys']) {
          const response = await fetch(`${gw.url}${page}`, { headers: { cookie, accept: 'text/html' } });
          expect(response.status, `GET ${page} with ${label}`).toBe(200);
          expect(await response.text()).toContain('<div id="app">');
        }
        const event = await fetch(`${gw.url}/events/cal_x/evt_x`, { headers: { cookie } });
        expect(event.status, `event page with ${label}`).toBe(401);
        const oauth = await fetch(`${gw.url}/oauth/google/start?access=read`, { headers: { cookie } });
        expect(oauth.status, `OAuth start with ${label}`).toBe(401);
      }
      const { rows } = await gw.db.pool.query(
        `SELECT count(*)::int AS n FROM api_keys WHERE name = 'by a broken cookie'`,
      );
      expect(rows[0].n).toBe(0);
      // The real session was never touched by any of this.
      expect(await works(ann)).toBe(true);
      expect(gw.logs.join('')).not.toContain('request failed');
    });

    it('a raw NUL byte in the cookie is refused by the HTTP parser, before any route, with 400', async () => {
      for (const path of ['/api/v1/keys', '/', '/keys']) {
        const status = await rawStatus(
          gw.url,
          `GET ${path} HTTP/1.1\r\nHost: calgate.test\r\nAccept: text/html\r\nCookie: calgate_session=ab\0cd\r\nConnection: close\r\n\r\n`,
        );
        expect(status, path).toBe(400);
      }
    });
  });
});
