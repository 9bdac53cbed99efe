import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GoogleEmulator } from '@calgate/google-emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_GOOGLE_ENDPOINTS,
  GOOGLE_SCOPES,
  GoogleCalendarProvider,
  GoogleOAuth,
  resolveOAuthUrls,
} from '../src/index.ts';
import {
  ANN,
  CLIENT,
  clientConfig,
  endpointsOf,
  oauthProvider,
  RecordingStore,
  ROBOT,
  ref,
  rejection,
  startEmulator,
  TEAM,
} from './google-fixtures.ts';

let emulator: GoogleEmulator;
const query = { maxResults: 10, singleEvents: true };
const ops = (op: string) => emulator.admin.requests().filter((r) => r.op === op);

beforeAll(async () => {
  emulator = await startEmulator();
});
afterEach(() => {
  emulator.admin.clearFaults();
  emulator.admin.clearRequests();
});
afterAll(async () => {
  await emulator.close();
});

describe('endpoints', () => {
  it("uses Google's own OAuth URLs by default and the emulator's layout otherwise", () => {
    expect(resolveOAuthUrls(DEFAULT_GOOGLE_ENDPOINTS)).toEqual({
      auth: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      revoke: 'https://oauth2.googleapis.com/revoke',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
    });
    expect(resolveOAuthUrls({ apiRootUrl: 'x', oauthUrl: 'http://127.0.0.1:9/' })).toEqual({
      auth: 'http://127.0.0.1:9/o/oauth2/v2/auth',
      token: 'http://127.0.0.1:9/token',
      revoke: 'http://127.0.0.1:9/revoke',
      userinfo: 'http://127.0.0.1:9/v1/userinfo',
    });
  });
});

describe('OAuth tokens in the provider', () => {
  it('refreshes a missing access token once for concurrent calls and persists it', async () => {
    const { provider, store, refreshToken } = oauthProvider(emulator, ANN);
    const calendars = [ANN, TEAM, ANN, TEAM, ANN].map((id) => ref(id));
    const pages = await Promise.all(calendars.map((c) => provider.listEvents(c, query)));
    expect(pages).toHaveLength(5);
    expect(ops('oauth.token')).toHaveLength(1);
    expect(store.loads).toBe(1);
    expect(store.saved).toHaveLength(1);
    expect(store.saved[0]).toMatchObject({
      refreshToken,
      accessToken: expect.stringMatching(/^ya29\./),
      expiresAt: expect.any(Number),
    });
    expect(store.saved[0]?.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);
    // The next call reuses the saved token.
    await provider.listEvents(ref(ANN), query);
    expect(ops('oauth.token')).toHaveLength(1);
  });

  it('refreshes a token that expires within 60 s, and uses a stored one that does not', async () => {
    const issued = emulator.admin.issueTokens({ email: ANN, clientId: CLIENT.clientId, offline: true });
    const fresh = new RecordingStore({
      refreshToken: issued.refresh_token as string,
      accessToken: issued.access_token,
      expiresAt: Date.now() + 30 * 60_000,
    });
    const freshProvider = new GoogleCalendarProvider({
      auth: { kind: 'oauth', client: clientConfig(emulator.url), credentials: fresh },
    });
    await freshProvider.listEvents(ref(ANN), query);
    expect(ops('oauth.token')).toHaveLength(0);

    const expiring = new RecordingStore({ ...fresh.current, expiresAt: Date.now() + 30_000 });
    const expiringProvider = new GoogleCalendarProvider({
      auth: { kind: 'oauth', client: clientConfig(emulator.url), credentials: expiring },
    });
    await expiringProvider.listEvents(ref(ANN), query);
    expect(ops('oauth.token')).toHaveLength(1);
    expect(expiring.saved[0]?.accessToken).not.toBe(issued.access_token);
  });

  it('refreshes once on a 401 and retries the call', async () => {
    const { provider, store } = oauthProvider(emulator, ANN);
    await provider.listEvents(ref(ANN), query);
    emulator.admin.expireAccessTokens({ email: ANN });
    emulator.admin.clearRequests();
    const page = await provider.listEvents(ref(ANN), query);
    expect(page.items).toBeDefined();
    expect(emulator.admin.requests().map((r) => `${r.op} ${r.status}`)).toEqual([
      'events.list 401',
      'oauth.token 200',
      'events.list 200',
    ]);
    expect(store.saved).toHaveLength(2);
  });

  it('marks the connection needs_reauth when the refresh token was revoked', async () => {
    const { provider, store, refreshToken } = oauthProvider(emulator, ANN);
    emulator.admin.revokeTokens({ token: refreshToken });
    const [first, second] = await Promise.all([
      rejection(provider.listEvents(ref(ANN), query)),
      rejection(provider.getEvent(ref(ANN), 'whatever01')),
    ]);
    for (const error of [first, second]) {
      expect(error).toMatchObject({
        code: 'needs_reauth',
        retry: false,
        context: { reason: 'invalid_grant' },
      });
      expect((error as Error).message).toContain('reconnect this account');
      expect((error as Error).message).not.toContain(refreshToken);
      expect(JSON.stringify((error as { context: unknown }).context)).not.toContain(refreshToken);
    }
    expect(ops('oauth.token')).toHaveLength(1);
    expect(ops('events.list')).toHaveLength(0);
    expect(store.reauth).toHaveLength(1);
    expect(store.reauth[0]).toContain('invalid_grant');
    expect(store.reauth[0]).not.toContain(refreshToken);
  });

  it('reports an unreachable Google clearly', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const store = new RecordingStore({ refreshToken: '1//unreachable' });
    const provider = new GoogleCalendarProvider({
      auth: { kind: 'oauth', client: clientConfig(`http://127.0.0.1:${port}`), credentials: store },
      retry: { baseDelayMs: 1, maxAttempts: 2 },
    });
    const error = await rejection(provider.listEvents(ref(ANN), query));
    expect(error).toMatchObject({ code: 'upstream_unavailable', retry: true });
    expect((error as Error).message).toMatch(
      /^Google Calendar could not be reached \(ECONNREFUSED\) \(2 attempts/,
    );
  });
});

describe('service accounts', () => {
  const robot = () =>
    new GoogleCalendarProvider({
      auth: {
        kind: 'service_account',
        key: emulator.admin.serviceAccountKey(ROBOT),
        endpoints: endpointsOf(emulator.url),
      },
    });

  it('verifies and reads a calendar shared with it, with one token for many calls', async () => {
    const provider = robot();
    expect(provider.authKind).toBe('service_account');
    const info = await provider.getCalendar(TEAM);
    expect(info).toEqual({
      externalId: TEAM,
      summary: 'Team',
      timeZone: 'America/New_York',
      primary: false,
      accessRole: 'writer',
    });
    expect((await provider.listCalendars()).map((c) => c.externalId)).toContain(TEAM);
    const page = await provider.listEvents(ref(TEAM), query);
    expect(page.items.map((e) => e.summary)).toContain('Team sync');
    const created = await provider.insertEvent(ref(TEAM), {
      summary: 'Robot hold',
      start: { date: '2026-06-01' },
      end: { date: '2026-06-02' },
    });
    expect(created.summary).toBe('Robot hold');
    expect(ops('oauth.token')).toHaveLength(1);
    const notShared = await rejection(provider.getCalendar(ANN));
    expect(notShared).toMatchObject({ code: 'not_found' });
  });

  it('refuses attendee changes up front, without a request to Google', async () => {
    const provider = robot();
    emulator.admin.clearRequests();
    const insert = await rejection(
      provider.insertEvent(ref(TEAM), {
        summary: 'Invite',
        start: { date: '2026-06-03' },
        end: { date: '2026-06-04' },
        attendees: [{ email: ANN }],
      }),
    );
    expect(insert).toMatchObject({ code: 'permission_denied' });
    expect((insert as Error).message).toContain('Connect the account through OAuth to invite attendees');
    const patch = await rejection(provider.patchEvent(ref(TEAM), 'someevent01', { attendees: [] }));
    expect(patch).toMatchObject({ code: 'permission_denied' });
    expect(emulator.admin.requests()).toEqual([]);
  });
});

describe('GoogleOAuth', () => {
  /** Opens the consent page like a browser and approves it for `account`. */
  async function approve(authUrl: string, account: string): Promise<URL> {
    const html = await (await fetch(authUrl)).text();
    const form = new URLSearchParams();
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      form.set(m[1] as string, (m[2] as string).replace(/&amp;/g, '&').replace(/&quot;/g, '"'));
    }
    form.set('account', account);
    form.set('decision', 'approve');
    const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1] as string;
    const res = await fetch(new URL(action, emulator.url), {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location') as string);
  }

  it('runs consent with PKCE, exchanges the code for tokens and the email, refreshes and revokes', async () => {
    const oauth = new GoogleOAuth(clientConfig(emulator.url), { timeoutMs: 3000 });
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const url = new URL(
      oauth.authorizationUrl({ state: 'signed-state', codeChallenge: challenge, loginHint: ANN }),
    );
    expect(`${url.origin}${url.pathname}`).toBe(`${emulator.url}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      access_type: 'offline',
      prompt: 'consent',
      include_granted_scopes: 'true',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'signed-state',
      login_hint: ANN,
      response_type: 'code',
      client_id: CLIENT.clientId,
      redirect_uri: CLIENT.redirectUris[0],
      scope: GOOGLE_SCOPES.join(' '),
    });

    const callback = await approve(url.toString(), ANN);
    expect(callback.searchParams.get('state')).toBe('signed-state');
    const code = callback.searchParams.get('code') as string;
    const wrong = await rejection(oauth.exchangeCode({ code, codeVerifier: `${verifier}x` }));
    expect(wrong).toMatchObject({ code: 'invalid_argument', context: { reason: 'invalid_grant' } });

    const exchanged = await oauth.exchangeCode({ code, codeVerifier: verifier });
    expect(exchanged).toMatchObject({
      refreshToken: expect.stringMatching(/^1\/\//),
      accessToken: expect.stringMatching(/^ya29\./),
      email: ANN,
    });
    expect(exchanged.scope).toContain('https://www.googleapis.com/auth/calendar');
    expect(exchanged.expiresAt).toBeGreaterThan(Date.now());
    const replay = await rejection(oauth.exchangeCode({ code, codeVerifier: verifier }));
    expect(replay).toMatchObject({ code: 'invalid_argument' });

    const refreshed = await oauth.refresh(exchanged.refreshToken);
    expect(refreshed.accessToken).not.toBe(exchanged.accessToken);
    expect(refreshed.email).toBe(ANN);

    // The exchanged token works in a provider.
    const store = new RecordingStore({ refreshToken: exchanged.refreshToken });
    const provider = new GoogleCalendarProvider({
      auth: { kind: 'oauth', client: clientConfig(emulator.url), credentials: store },
    });
    expect((await provider.listCalendars()).find((c) => c.primary)?.externalId).toBe(ANN);

    await oauth.revoke(exchanged.refreshToken);
    await oauth.revoke(exchanged.refreshToken); // already revoked: still fine
    const dead = await rejection(oauth.refresh(exchanged.refreshToken));
    expect(dead).toMatchObject({ code: 'needs_reauth' });
    expect((dead as Error).message).toContain('reconnect this account');
  });
});
