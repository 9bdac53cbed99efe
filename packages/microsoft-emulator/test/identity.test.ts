import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ALICE, start } from './helpers.ts';

const REDIRECT = 'http://127.0.0.1:9/oauth/microsoft/callback';

async function authorize(loginUrl: string, clientId: string, challenge: string) {
  const url = new URL(`${loginUrl}/common/oauth2/v2.0/authorize`);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'offline_access User.Read Calendars.ReadWrite',
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    login_hint: ALICE,
  }).toString();
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location') ?? '');
  expect(location.origin + location.pathname).toBe(REDIRECT);
  expect(location.searchParams.get('state')).toBe('st-1');
  return location.searchParams.get('code') ?? '';
}

async function token(loginUrl: string, form: Record<string, string>, tenant = 'common') {
  const res = await fetch(`${loginUrl}/${tenant}/oauth2/v2.0/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  // biome-ignore lint/suspicious/noExplicitAny: OAuth bodies are read loosely
  return { status: res.status, body: (await res.json()) as any };
}

describe('the identity token endpoint', () => {
  it('redeems an authorization code once, checking the PKCE verifier, the secret and the redirect URI', async () => {
    const { emulator } = await start();
    const { clientId, clientSecret } = emulator.client;
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const code = await authorize(emulator.loginUrl, clientId, challenge);
    const base = {
      client_id: clientId,
      client_secret: clientSecret,
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
    };

    const wrongVerifier = await token(emulator.loginUrl, { ...base, code_verifier: 'not-the-verifier' });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error).toBe('invalid_grant');
    expect(wrongVerifier.body.error_description).toMatch(/^AADSTS50148: /);
    expect(wrongVerifier.body.error_codes).toEqual([50148]);

    const badSecret = await token(emulator.loginUrl, {
      ...base,
      client_secret: 'nope',
      code_verifier: verifier,
    });
    expect(badSecret.status).toBe(401);
    expect(badSecret.body.error).toBe('invalid_client');

    const ok = await token(emulator.loginUrl, { ...base, code_verifier: verifier });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    expect(ok.body.scope.split(' ').sort()).toEqual(['Calendars.ReadWrite', 'User.Read']);
    expect(typeof ok.body.refresh_token).toBe('string');
    const me = await fetch(`${emulator.graphUrl}/me`, {
      headers: { authorization: `Bearer ${ok.body.access_token}` },
    });
    expect(((await me.json()) as { mail: string }).mail).toBe(ALICE);

    const again = await token(emulator.loginUrl, { ...base, code_verifier: verifier });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('returns a new refresh token on every refresh and retires the one used', async () => {
    const { emulator } = await start();
    const { clientId, clientSecret } = emulator.client;
    const first = emulator.admin.issueTokens({ email: ALICE }).refresh_token as string;
    const refresh = (r: string) =>
      token(emulator.loginUrl, {
        client_id: clientId,
        client_secret: clientSecret,
        grant_type: 'refresh_token',
        refresh_token: r,
      });
    const one = await refresh(first);
    expect(one.status).toBe(200);
    expect(one.body.refresh_token).toBeDefined();
    expect(one.body.refresh_token).not.toBe(first);
    const reused = await refresh(first);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    const two = await refresh(one.body.refresh_token);
    expect(two.status).toBe(200);

    expect(emulator.admin.revokeRefreshTokens({ email: ALICE })).toBeGreaterThan(0);
    const revoked = await refresh(two.body.refresh_token);
    expect(revoked.status).toBe(400);
    expect(revoked.body.error).toBe('invalid_grant');
    expect((await refresh('never-issued')).body.error).toBe('invalid_grant');
  });

  it('refuses unknown clients, unknown tenants, missing parameters and unsupported grants', async () => {
    const { emulator } = await start();
    const unknown = await token(emulator.loginUrl, {
      client_id: 'who',
      grant_type: 'refresh_token',
      refresh_token: 'x',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('unauthorized_client');
    const tenant = await token(
      emulator.loginUrl,
      { client_id: emulator.client.clientId, grant_type: 'refresh_token' },
      'nope',
    );
    expect(tenant.body.error_codes).toEqual([90002]);
    const missing = await token(emulator.loginUrl, {
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret,
      grant_type: 'refresh_token',
    });
    expect(missing.body).toMatchObject({ error: 'invalid_request' });
    const grant = await token(emulator.loginUrl, {
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret,
      grant_type: 'password',
    });
    expect(grant.body.error).toBe('unsupported_grant_type');
  });
});

describe('Graph authentication and scopes', () => {
  it('answers 401 InvalidAuthenticationToken for missing, unknown and expired access tokens', async () => {
    const { emulator, graph } = await start();
    for (const t of [null, 'not-a-token']) {
      const res = await graph('/me', { token: t });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('InvalidAuthenticationToken');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect((await graph('/me')).status).toBe(200);
    expect(emulator.admin.expireAccessTokens({ email: ALICE })).toBeGreaterThan(0);
    const expired = await graph('/me');
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatchObject({ code: 'InvalidAuthenticationToken' });
    expect(expired.body.error.innerError['request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('lets Calendars.Read read but not write, and mailboxSettings needs MailboxSettings.Read', async () => {
    const { emulator, graph, calendarId } = await start();
    const readOnly = emulator.admin.issueTokens({
      email: ALICE,
      scopes: ['Calendars.Read', 'User.Read'],
    }).access_token;
    expect((await graph('/me/calendars', { token: readOnly })).status).toBe(200);
    const write = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      token: readOnly,
      method: 'POST',
      body: {
        subject: 'x',
        start: { dateTime: '2026-01-01T10:00:00', timeZone: 'UTC' },
        end: { dateTime: '2026-01-01T11:00:00', timeZone: 'UTC' },
      },
    });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('ErrorAccessDenied');
    expect((await graph('/me/mailboxSettings', { token: readOnly })).status).toBe(403);
    expect((await graph('/me/mailboxSettings')).status).toBe(200);
  });
});
