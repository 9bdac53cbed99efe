import { randomBytes } from 'node:crypto';
import { SecretBox, TotpRepository } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/auth/passwords.ts';
import {
  base32Decode,
  base32Encode,
  hotp,
  matchTotp,
  otpauthUri,
  TOTP_STEP_SECONDS,
  totpCode,
  totpStep,
} from '../src/auth/totp.ts';
import { type Browser, call, signIn, uniqueEmail } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery';
const ENCRYPTION_KEY = randomBytes(32);

/** The code an authenticator shows `offset` steps from now (the gateway accepts ±1). */
function codeAt(secret: string, offset = 0): string {
  return totpCode(secret, Date.now() + offset * TOTP_STEP_SECONDS * 1000);
}

describe('RFC 6238 time-based one-time passwords', () => {
  // RFC 6238 Appendix B: the seeds are ASCII, T0 = 0, X = 30, 8 digits.
  const SHA1_SEED = Buffer.from('12345678901234567890', 'ascii');
  const SHA1_VECTORS: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];

  it.each(SHA1_VECTORS)('SHA-1 at T = %i s gives %s', (seconds, expected) => {
    expect(hotp(SHA1_SEED, totpStep(seconds * 1000), 8, 'sha1')).toBe(expected);
  });

  it('the SHA-256 and SHA-512 vectors at T = 59 s hold too (same truncation)', () => {
    expect(hotp(Buffer.from('12345678901234567890123456789012'), 1, 8, 'sha256')).toBe('46119246');
    expect(
      hotp(Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'), 1, 8, 'sha512'),
    ).toBe('90693936');
  });

  it('six digits are the last six of the RFC value, as authenticator apps show them', () => {
    const secret = base32Encode(SHA1_SEED);
    expect(secret).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(totpCode(secret, 59_000)).toBe('287082');
    expect(totpCode(secret, 1111111109_000)).toBe('081804');
    expect(base32Decode('gezd gnbv gy3t qojq gezd gnbv gy3t qojq')).toEqual(SHA1_SEED);
    expect(base32Decode('not base32!')).toBeNull();
  });

  it('accepts one step either side, nothing further, and no step at or before the last used one', () => {
    const secret = base32Encode(SHA1_SEED);
    const now = 1111111111_000; // step 37037037
    const step = totpStep(now);
    expect(matchTotp(secret, totpCode(secret, now), now)).toBe(step);
    expect(matchTotp(secret, totpCode(secret, now - 30_000), now)).toBe(step - 1);
    expect(matchTotp(secret, totpCode(secret, now + 30_000), now)).toBe(step + 1);
    expect(matchTotp(secret, totpCode(secret, now - 60_000), now)).toBeNull();
    expect(matchTotp(secret, totpCode(secret, now + 60_000), now)).toBeNull();
    expect(matchTotp(secret, totpCode(secret, now), now, step)).toBeNull();
    expect(matchTotp(secret, totpCode(secret, now + 30_000), now, step)).toBe(step + 1);
    expect(matchTotp(secret, '12345', now)).toBeNull();
    expect(matchTotp(secret, 'abcdef', now)).toBeNull();
  });

  it('builds the otpauth URI authenticator apps read', () => {
    const uri = new URL(otpauthUri('JBSWY3DPEHPK3PXP', 'ann+x@example.com'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Calgate:ann+x@example.com');
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: 'JBSWY3DPEHPK3PXP',
      issuer: 'Calgate',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });
});

describe('two-step sign-in through the REST API', () => {
  let gw: TestGateway;
  let tenantId: string;

  /** A user of the tenant with a password and a role, signed in. */
  async function person(
    role: 'owner' | 'admin' | 'member' | 'auditor',
  ): Promise<{ email: string; as: Browser }> {
    const email = uniqueEmail(role);
    await gw.db.pool.query(
      'INSERT INTO users (id, tenant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)',
      [`usr_${randomBytes(8).toString('hex')}`, tenantId, email, await hashPassword(PASSWORD), role],
    );
    return { email, as: await signIn(gw, email, PASSWORD) };
  }

  /** Sets up and confirms two-step sign-in; returns the secret and the recovery codes. */
  async function enable(as: Browser): Promise<{ secret: string; recoveryCodes: string[] }> {
    const setup = await call(gw, 'POST', '/api/v1/account/totp/setup', { as });
    expect(setup.status).toBe(200);
    const confirm = await call(gw, 'POST', '/api/v1/account/totp/confirm', {
      as,
      body: { code: codeAt(setup.body.secret) },
    });
    expect(confirm.status).toBe(200);
    return { secret: setup.body.secret, recoveryCodes: confirm.body.recoveryCodes };
  }

  async function challengeFor(email: string): Promise<string> {
    const answer = await call(gw, 'POST', '/api/v1/auth/signin', { body: { email, password: PASSWORD } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ totpRequired: true, challenge: expect.any(String) });
    expect(answer.headers.get('set-cookie')).toBeNull();
    return answer.body.challenge;
  }

  beforeAll(async () => {
    gw = await startTestGateway({ ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64') });
    const signup = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: uniqueEmail('founder'), password: PASSWORD },
    });
    expect(signup.status).toBe(201);
    tenantId = signup.body.tenant.id;
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('set up → confirm → sign-in needs a code → wrong refused → right signs in → reuse refused → recovery once → disable', async () => {
      const { email, as } = await person('owner');
      expect((await call(gw, 'GET', '/api/v1/account/totp', { as })).body).toEqual({
        enabled: false,
        allowed: true,
        recoveryCodesLeft: 0,
      });

      const setup = await call(gw, 'POST', '/api/v1/account/totp/setup', { as });
      expect(setup.status).toBe(200);
      expect(setup.body.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(setup.body.otpauthUri).toBe(
        `otpauth://totp/Calgate:${encodeURIComponent(email)}?secret=${setup.body.secret}&issuer=Calgate&algorithm=SHA1&digits=6&period=30`,
      );
      const secret: string = setup.body.secret;

      // Not active before it is confirmed: the password alone still signs in.
      expect((await signIn(gw, email, PASSWORD)).cookie).toMatch(/^calgate_session=/);
      const { rows } = await gw.db.pool.query(
        'SELECT secret, secret_key_id, confirmed_at FROM user_totp WHERE user_id = $1',
        [as.userId],
      );
      expect(rows[0].confirmed_at).toBeNull();
      expect(Buffer.from(rows[0].secret).toString('latin1')).not.toContain(secret);

      const wrongConfirm = await call(gw, 'POST', '/api/v1/account/totp/confirm', {
        as,
        body: { code: codeAt(secret, 3) },
      });
      expect(wrongConfirm.status).toBe(400);
      const confirm = await call(gw, 'POST', '/api/v1/account/totp/confirm', {
        as,
        body: { code: codeAt(secret) },
      });
      expect(confirm.status).toBe(200);
      const recoveryCodes: string[] = confirm.body.recoveryCodes;
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      for (const code of recoveryCodes) {
        expect(code).toMatch(/^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
      }
      const stored = await gw.db.pool.query(
        'SELECT recovery_code_hashes::text AS hashes FROM user_totp WHERE user_id = $1',
        [as.userId],
      );
      for (const code of recoveryCodes) {
        expect(stored.rows[0].hashes).not.toContain(code.replace(/-/g, ''));
      }
      expect((await call(gw, 'GET', '/api/v1/account/totp', { as })).body).toMatchObject({
        enabled: true,
        recoveryCodesLeft: 10,
      });

      // The password now earns only a challenge; no session until a code.
      const sessionsBefore = await gw.db.pool.query(
        'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
        [as.userId],
      );
      const challenge = await challengeFor(email);
      const sessionsAfter = await gw.db.pool.query(
        'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
        [as.userId],
      );
      expect(sessionsAfter.rows[0].n).toBe(sessionsBefore.rows[0].n);

      const wrong = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
        body: { challenge, code: codeAt(secret, 5) },
      });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('set-cookie')).toBeNull();

      // The confirming code spent the current step; the next step's code is still in the window.
      const next = codeAt(secret, 1);
      const right = await call(gw, 'POST', '/api/v1/auth/signin/totp', { body: { challenge, code: next } });
      expect(right.status).toBe(200);
      expect(right.body).toMatchObject({ user: { id: as.userId, email }, tenant: { id: tenantId } });
      const cookie = (right.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const signedIn: Browser = { cookie, csrf: right.body.csrfToken, tenantId, userId: as.userId };
      expect((await call(gw, 'GET', '/api/v1/auth/me', { as: signedIn })).status).toBe(200);
      expect((await call(gw, 'POST', '/api/v1/sessions/revoke-all', { as: signedIn })).status).toBe(200);

      // A challenge lasts five minutes whatever happens to it; it is the code that is spent.
      const replay = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
        body: { challenge, code: next },
      });
      expect(replay.status).toBe(401);
      expect(replay.body.error.message).toContain('already used');

      const [firstRecovery] = recoveryCodes as [string];
      const recovered = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
        body: { challenge, code: firstRecovery.toLowerCase().replace(/-/g, ' ') },
      });
      expect(recovered.status).toBe(200);
      expect(recovered.body.recoveryCodesLeft).toBe(9);
      const again = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
        body: { challenge, code: firstRecovery },
      });
      expect(again.status).toBe(401);

      const me: Browser = {
        cookie: (recovered.headers.get('set-cookie') ?? '').split(';')[0] as string,
        csrf: recovered.body.csrfToken,
        tenantId,
        userId: as.userId,
      };
      const badPassword = await call(gw, 'POST', '/api/v1/account/totp/disable', {
        as: me,
        body: { password: 'not the password', code: recoveryCodes[1] },
      });
      expect(badPassword.status).toBe(400);
      const disabled = await call(gw, 'POST', '/api/v1/account/totp/disable', {
        as: me,
        body: { password: PASSWORD, code: recoveryCodes[2] },
      });
      expect(disabled.status).toBe(200);
      expect(disabled.body).toEqual({ enabled: false });
      expect(
        (await gw.db.pool.query('SELECT 1 FROM user_totp WHERE user_id = $1', [as.userId])).rowCount,
      ).toBe(0);
      expect((await signIn(gw, email, PASSWORD)).userId).toBe(as.userId);
    });

    it('an admin may turn it on as well', async () => {
      const { as } = await person('admin');
      const { recoveryCodes } = await enable(as);
      expect(recoveryCodes).toHaveLength(10);
    });

    it('secrets are bound to their user and re-sealed with a new master key', async () => {
      const { as } = await person('owner');
      const { secret } = await enable(as);
      const stored = (await gw.db.pool.query('SELECT secret FROM user_totp WHERE user_id = $1', [as.userId]))
        .rows[0].secret;
      const other = await person('owner');
      await enable(other.as);
      // A secret copied onto another user's row does not open there.
      await gw.db.pool.query('UPDATE user_totp SET secret = $2 WHERE user_id = $1', [
        other.as.userId,
        stored,
      ]);
      const current = new TotpRepository(gw.db, new SecretBox([ENCRYPTION_KEY]));
      await expect(current.get(tenantId, other.as.userId)).rejects.toThrow(/could not be decrypted/);
      await current.remove(tenantId, other.as.userId);

      const newKey = randomBytes(32);
      const report = await new TotpRepository(gw.db, new SecretBox([newKey, ENCRYPTION_KEY])).resealAll();
      expect(report.resealed).toBeGreaterThanOrEqual(1);
      expect(report.unreadable).toEqual([]);
      const reopened = await new TotpRepository(gw.db, new SecretBox([newKey])).get(tenantId, as.userId);
      expect(reopened?.secret).toBe(secret);
    });
  });

  describe('.error', () => {
    it('confirming without a set-up, or setting up twice once on, is refused', async () => {
      const { as } = await person('owner');
      const lone = await call(gw, 'POST', '/api/v1/account/totp/confirm', { as, body: { code: '123456' } });
      expect(lone.status).toBe(412);
      await enable(as);
      const twice = await call(gw, 'POST', '/api/v1/account/totp/setup', { as });
      expect(twice.status).toBe(409);
    });

    it('a forged or altered challenge signs no one in', async () => {
      const { email, as } = await person('owner');
      const { secret } = await enable(as);
      const challenge = await challengeFor(email);
      const [body, mac] = challenge.split('.') as [string, string];
      const tampered = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), e: Date.now() + 1e9 })).toString('base64url')}.${mac}`;
      for (const forged of [tampered, `${body}.${'A'.repeat(mac.length)}`, 'nonsense']) {
        const answer = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
          body: { challenge: forged, code: codeAt(secret, 1) },
        });
        expect(answer.status).toBe(401);
        expect(answer.headers.get('set-cookie')).toBeNull();
      }
    });
  });

  describe('.security', () => {
    it('members and auditors cannot turn two-step sign-in on', async () => {
      for (const role of ['member', 'auditor'] as const) {
        const { as } = await person(role);
        expect((await call(gw, 'GET', '/api/v1/account/totp', { as })).body.allowed).toBe(false);
        const setup = await call(gw, 'POST', '/api/v1/account/totp/setup', { as });
        expect(setup.status).toBe(403);
        expect(
          (await gw.db.pool.query('SELECT 1 FROM user_totp WHERE user_id = $1', [as.userId])).rowCount,
        ).toBe(0);
      }
    });

    it('wrong codes are rate-limited per person, and the right one waits out the limit too', async () => {
      const { email, as } = await person('owner');
      const { secret } = await enable(as);
      const challenge = await challengeFor(email);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        const answer = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
          body: { challenge, code: String((Number(codeAt(secret, 1)) + 1 + i) % 1_000_000).padStart(6, '0') },
        });
        statuses.push(answer.status);
      }
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses[5]).toBe(429);
      const limited = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
        body: { challenge, code: codeAt(secret, 1) },
      });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('set-cookie')).toBeNull();
    });

    it('the account routes need a session, the Origin and the CSRF token; sign-in/totp needs the Origin', async () => {
      const { as } = await person('owner');
      expect((await call(gw, 'POST', '/api/v1/account/totp/setup')).status).toBe(401);
      const noCsrf = await call(gw, 'POST', '/api/v1/account/totp/setup', {
        as,
        headers: { 'x-calgate-csrf': 'wrong' },
      });
      expect(noCsrf.status).toBe(403);
      const foreign = await call(gw, 'POST', '/api/v1/auth/signin/totp', {
        body: { challenge: 'x.y', code: '123456' },
        headers: { origin: 'https://evil.example' },
      });
      expect(foreign.status).toBe(403);
      expect(
        (await gw.db.pool.query('SELECT 1 FROM user_totp WHERE user_id = $1', [as.userId])).rowCount,
      ).toBe(0);
    });
  });
});
