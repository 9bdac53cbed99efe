import { calendar as googleCalendar } from '@googleapis/calendar';
import { CodeChallengeMethod, JWT } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleEmulator } from '../src/index.ts';
import { ANN, CALENDAR_SCOPE, CLIENT, failure, oauthClient, ROBOT, startSeeded, TEAM } from './helpers.ts';

let emulator: GoogleEmulator;

beforeAll(async () => {
  emulator = await startSeeded();
});
afterAll(async () => {
  await emulator.close();
});

/** Opens the consent page like a browser, then submits its form with the chosen decision. */
async function consent(authUrl: string, account: string, decision: 'approve' | 'deny'): Promise<URL> {
  const page = await fetch(authUrl);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(account);
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(m[1] as string, (m[2] as string).replace(/&amp;/g, '&').replace(/&quot;/g, '"'));
  }
  form.set('account', account);
  form.set('decision', decision);
  const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1] as string;
  const res = await fetch(new URL(action, emulator.url), { method: 'POST', body: form, redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') as string);
}

describe('OAuth authorization code flow', () => {
  it('runs consent with PKCE, refreshes, and answers invalid_grant once revoked', async () => {
    const client = oauthClient(emulator);
    const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
    const authUrl = client.generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope: [CALENDAR_SCOPE, 'email', 'openid'],
      state: 'state-123',
      code_challenge_method: CodeChallengeMethod.S256,
      code_challenge: codeChallenge as string,
    });
    expect(authUrl.startsWith(`${emulator.url}/o/oauth2/v2/auth?`)).toBe(true);
    const callback = await consent(authUrl, ANN, 'approve');
    expect(`${callback.origin}${callback.pathname}`).toBe(CLIENT.redirectUris[0]);
    expect(callback.searchParams.get('state')).toBe('state-123');
    const code = callback.searchParams.get('code') as string;

    const wrongVerifier = await failure(client.getToken({ code, codeVerifier: `${codeVerifier}x` }));
    expect(wrongVerifier).toMatchObject({ status: 400, data: { error: 'invalid_grant' } });

    // A failed exchange does not burn the code; the right verifier succeeds once.
    const { tokens } = await client.getToken({ code, codeVerifier: codeVerifier as string });
    expect(tokens.refresh_token).toMatch(/^1\/\//);
    expect(tokens.id_token).toBeTruthy();
    const replay = await failure(client.getToken({ code, codeVerifier: codeVerifier as string }));
    expect(replay.data.error).toBe('invalid_grant');

    client.setCredentials(tokens);
    const userinfo = await fetch(`${emulator.url}/oauth2/v2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(await userinfo.json()).toMatchObject({ email: ANN, verified_email: true });
    const calendar = googleCalendar({
      version: 'v3',
      auth: client,
      rootUrl: `${emulator.url}/`,
      retry: false,
    });
    const list = await calendar.calendarList.list();
    expect(list.data.items?.map((c) => c.id)).toContain(ANN);

    // Refresh: a client holding only the refresh token gets a new access token on demand.
    const refreshing = oauthClient(emulator);
    refreshing.setCredentials({ refresh_token: tokens.refresh_token as string });
    const refreshed = await refreshing.getAccessToken();
    expect(refreshed.token).toMatch(/^ya29\./);
    expect(refreshed.token).not.toBe(tokens.access_token);

    await client.revokeToken(tokens.refresh_token as string);
    const revoked = await failure(refreshing.refreshAccessToken());
    expect(revoked).toMatchObject({
      status: 400,
      data: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' },
    });
    const stale = await failure(calendar.calendarList.list());
    expect(stale.status).toBe(401);
  });

  it('echoes state with access_denied when the user cancels', async () => {
    const client = oauthClient(emulator);
    const url = client.generateAuthUrl({ scope: [CALENDAR_SCOPE], state: 'abc' });
    const callback = await consent(url, ANN, 'deny');
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('abc');
  });

  it('refuses unregistered redirect URIs, wrong secrets and missing verifiers', async () => {
    const mismatch = await fetch(
      oauthClient(emulator).generateAuthUrl({
        scope: [CALENDAR_SCOPE],
        redirect_uri: 'https://evil.example/cb',
      }),
    );
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain('redirect_uri_mismatch');

    const client = oauthClient(emulator);
    const { codeChallenge } = await client.generateCodeVerifierAsync();
    const url = client.generateAuthUrl({
      scope: [CALENDAR_SCOPE],
      code_challenge_method: CodeChallengeMethod.S256,
      code_challenge: codeChallenge as string,
    });
    const code = (await consent(url, ANN, 'approve')).searchParams.get('code') as string;
    const noVerifier = await failure(client.getToken({ code }));
    expect(noVerifier.data).toMatchObject({
      error: 'invalid_grant',
      error_description: 'Missing code verifier.',
    });

    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT.clientId,
      client_secret: 'wrong',
      redirect_uri: CLIENT.redirectUris[0] as string,
    });
    const wrongSecret = await fetch(`${emulator.url}/token`, { method: 'POST', body });
    expect(wrongSecret.status).toBe(401);
    expect(await wrongSecret.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('gives offline access a refresh token only the first time unless prompt=consent', async () => {
    const first = emulator.admin.issueTokens({ email: ANN, clientId: 'other', offline: true });
    expect(first.refresh_token).toBeDefined();
    const client = oauthClient(emulator);
    const url = client.generateAuthUrl({ scope: [CALENDAR_SCOPE], access_type: 'offline' });
    const code = (await consent(url, ANN, 'approve')).searchParams.get('code') as string;
    // The earlier test already granted offline access to this client for Ann.
    const { tokens } = await client.getToken(code);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.access_token).toBeTruthy();
  });

  it('answers invalid_grant for an expired refresh token', async () => {
    const issued = emulator.admin.issueTokens({ email: ANN, clientId: CLIENT.clientId, offline: true });
    emulator.admin.expireRefreshTokens({ token: issued.refresh_token as string });
    const client = oauthClient(emulator);
    client.setCredentials({ refresh_token: issued.refresh_token as string });
    const expired = await failure(client.refreshAccessToken());
    expect(expired.data.error).toBe('invalid_grant');
  });
});

describe('service accounts', () => {
  function jwtClient(
    key: { client_email: string; private_key: string; private_key_id: string },
    subject?: string,
  ) {
    const jwt = new JWT({
      email: key.client_email,
      key: key.private_key,
      keyId: key.private_key_id,
      scopes: [CALENDAR_SCOPE],
      ...(subject ? { subject } : {}),
    });
    // gtoken always posts to Google's token URL; send it to the emulator instead.
    jwt.transporter.interceptors.request.add({
      resolved: async (config) => {
        config.url = new URL(String(config.url).replace('https://oauth2.googleapis.com', emulator.url));
        return config;
      },
    });
    return jwt;
  }

  it('exchanges an RS256 assertion and sees only calendars shared with it', async () => {
    const key = emulator.admin.serviceAccountKey(ROBOT);
    const auth = jwtClient(key);
    const calendar = googleCalendar({ version: 'v3', auth, rootUrl: `${emulator.url}/`, retry: false });
    // Like Google, a shared calendar is not on a service account's list until it inserts it.
    const before = await calendar.calendarList.list();
    expect(before.data.items?.map((c) => c.id)).toEqual([ROBOT]);
    await calendar.calendarList.insert({ requestBody: { id: TEAM } });
    const after = await calendar.calendarList.list();
    expect(after.data.items?.map((c) => c.id)).toEqual([ROBOT, TEAM]);
    const inserted = await calendar.events.insert({
      calendarId: TEAM,
      requestBody: { summary: 'Robot', start: { date: '2026-02-01' }, end: { date: '2026-02-02' } },
    });
    expect(inserted.data.creator?.email).toBe(ROBOT);
    const invite = await failure(
      calendar.events.insert({
        calendarId: TEAM,
        requestBody: {
          summary: 'Invite',
          start: { date: '2026-02-01' },
          end: { date: '2026-02-02' },
          attendees: [{ email: ANN }],
        },
      }),
    );
    expect(invite.status).toBe(403);
    expect(JSON.stringify(invite.data)).toContain('forbiddenForServiceAccounts');
    const hidden = await failure(calendar.events.list({ calendarId: ANN }));
    expect(hidden.status).toBe(404);
  });

  it('accepts a self-signed JWT as the bearer token (useJWTAccessWithScope)', async () => {
    const key = emulator.admin.serviceAccountKey(ROBOT);
    const auth = new JWT({
      email: key.client_email,
      key: key.private_key,
      keyId: key.private_key_id,
      scopes: [CALENDAR_SCOPE],
    });
    auth.useJWTAccessWithScope = true;
    emulator.admin.clearRequests();
    const calendar = googleCalendar({ version: 'v3', auth, rootUrl: `${emulator.url}/`, retry: false });
    const events = await calendar.events.list({ calendarId: TEAM });
    expect(events.status).toBe(200);
    expect(emulator.admin.requests().map((r) => r.op)).toEqual(['events.list']);
  });

  it('rejects a signature from another key and delegation it was not granted', async () => {
    const key = emulator.admin.serviceAccountKey(ROBOT);
    emulator.admin.seed({ serviceAccounts: [{ email: 'other@calgate-test.iam.gserviceaccount.com' }] });
    const other = emulator.admin.serviceAccountKey('other@calgate-test.iam.gserviceaccount.com');
    const forged = await failure(jwtClient({ ...key, private_key: other.private_key }).getAccessToken());
    expect(forged.data).toMatchObject({
      error: 'invalid_grant',
      error_description: 'Invalid JWT Signature.',
    });
    const delegated = await failure(jwtClient(key, ANN).getAccessToken());
    expect(delegated).toMatchObject({ status: 401, data: { error: 'unauthorized_client' } });
  });
});
