import { ConnectionRepository, SecretBox } from '@calgate/store';
import { freePort } from '@calgate/testkit';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, sessionFor } from './api-client.ts';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { HIGH_RATE_LIMITS, rpc, startTestGateway, type TestGateway } from './harness.ts';
import { approveApp, type Callback, startCallback } from './oauth-flow.ts';

const CLIENT = { clientId: 'calgate-oauth.apps.googleusercontent.com', clientSecret: 'oauth-secret' };
const ANN = 'ann@example.com';

/** What Google's tokens look like: `ya29.` access tokens, `1//` refresh tokens, `4/` codes. */
const GOOGLE_TOKEN_SHAPES = [
  /ya29\.[A-Za-z0-9_-]{8,}/,
  /(^|[^A-Za-z0-9])1\/\/[A-Za-z0-9_-]{20,}/,
  /(^|[^A-Za-z0-9/])4\/[A-Za-z0-9_-]{20,}/,
];

/**
 * Calgate speaks for a Google account but never hands its tokens on: an MCP client connected
 * through Calgate's own OAuth server gets Calgate's tokens (issued and signed by Calgate, for its
 * MCP URL), and nothing it receives, from the token endpoint or from a tool call that reached
 * Google, holds a token Google issued.
 */
describe('nothing from Google is passed through to an MCP client', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let callback: Callback;
  let ann: Browser;
  let tenantId: string;
  let primary: string;
  let connections: ConnectionRepository;
  /** Every Google token string Calgate has held for the account so far. */
  const googleTokens = new Set<string>();

  /** Adds the tokens Calgate holds now (sealed in the stored connection) to `googleTokens`. */
  async function collectGoogleTokens(): Promise<void> {
    for (const connection of await connections.list(tenantId)) {
      const stored = await connections.readCredentials(tenantId, connection.id);
      const credentials = JSON.parse(stored ?? '{}') as { refreshToken?: string; accessToken?: string };
      for (const token of [credentials.refreshToken, credentials.accessToken]) {
        if (token !== undefined) {
          googleTokens.add(token);
        }
      }
    }
  }

  function expectNoGoogleToken(what: string, text: string): void {
    for (const token of googleTokens) {
      expect(text.includes(token), `${what} holds a Google token`).toBe(false);
    }
    for (const shape of GOOGLE_TOKEN_SHAPES) {
      expect(text, `${what} holds something shaped like a Google token`).not.toMatch(shape);
    }
  }

  /** A tool call over raw HTTP with the access token: the answer's bytes, as the client gets them. */
  async function toolCall(token: string, name: string, args: Record<string, unknown>): Promise<string> {
    const response = await rpc(
      gw.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      { authorization: `Bearer ${token}` },
    );
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(text, text).not.toContain('"isError":true');
    return text;
  }

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] });
    const port = await freePort();
    gw = await startTestGateway({
      ...HIGH_RATE_LIMITS,
      ...emulator.env,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ALLOWED_ORIGINS: 'http://calgate.test',
    });
    callback = await startCallback();
    const tenant = await gw.seedTenant('Acme');
    tenantId = tenant.tenantId;
    primary = await connectGoogleAccount(gw, emulator, tenant, ANN, 'write');
    ann = await sessionFor(gw, tenantId);
    const box = new SecretBox([new Uint8Array(Buffer.from(emulator.env.ENCRYPTION_KEY as string, 'base64'))]);
    connections = new ConnectionRepository(gw.db.prisma, box);
  });

  afterAll(async () => {
    await callback?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it("token, refresh and tool answers hold no Google token; the access token is Calgate's", async () => {
    const { clientId, tokens, raw } = await approveApp(gw, ann, callback, {
      calendars: [{ calendarId: primary, read: true, write: true }],
    });
    expect(tokens.scope).toBe('calendars:read calendars:write');

    // Calgate's token: signed with this install's key, for this issuer and this MCP URL.
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'HS256', typ: 'at+jwt' });
    const key = new SecretBox([
      new Uint8Array(Buffer.from(emulator.env.ENCRYPTION_KEY as string, 'base64')),
    ]).deriveKey('oauth-access-token');
    const { payload } = await jwtVerify(tokens.access_token, key, { issuer: gw.url, audience: gw.mcpUrl });
    expect(payload).toMatchObject({ iss: gw.url, aud: gw.mcpUrl, client_id: clientId, tid: tenantId });
    expect(tokens.refresh_token).toMatch(/^ocr_/);

    // Tool calls that reach Google (a write cannot be answered from anything but Google).
    const created = await toolCall(tokens.access_token, 'create_event', {
      calendarId: primary,
      summary: 'Planning',
      start: { dateTime: '2026-12-02T10:00:00+01:00' },
      end: { dateTime: '2026-12-02T11:00:00+01:00' },
    });
    expect(created).toContain('Planning');
    expect(emulator.admin.events(ANN).map((event) => event.summary)).toContain('Planning');
    await collectGoogleTokens();
    // Make Calgate fetch a new Google access token for the next calls.
    expect(emulator.admin.expireAccessTokens({ email: ANN })).toBeGreaterThan(0);
    const listed = await toolCall(tokens.access_token, 'list_events', {
      calendarId: primary,
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-05T00:00:00Z',
    });
    const calendars = await toolCall(tokens.access_token, 'list_calendars', {});
    const created2 = await toolCall(tokens.access_token, 'create_event', {
      calendarId: primary,
      summary: 'Review',
      start: { dateTime: '2026-12-03T10:00:00+01:00' },
      end: { dateTime: '2026-12-03T11:00:00+01:00' },
    });
    await collectGoogleTokens();
    // A refresh token and at least two access tokens Google issued to Calgate.
    expect([...googleTokens].filter((token) => token.startsWith('1//'))).toHaveLength(1);
    expect([...googleTokens].filter((token) => token.startsWith('ya29.')).length).toBeGreaterThanOrEqual(2);
    const googleCalls = emulator.admin
      .requests()
      .filter((entry) => entry.account === ANN && entry.status < 300);
    expect(googleCalls.length).toBeGreaterThan(0);

    const refreshed = await fetch(`${gw.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: clientId,
      }).toString(),
    });
    const refreshedText = await refreshed.text();
    expect(refreshed.status, refreshedText).toBe(200);
    const renewed = JSON.parse(refreshedText) as { access_token: string; refresh_token: string };
    expect(decodeJwt(renewed.access_token)).toMatchObject({ iss: gw.url, aud: gw.mcpUrl });
    const afterRefresh = await toolCall(renewed.access_token, 'list_events', {
      calendarId: primary,
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-05T00:00:00Z',
    });
    expect(afterRefresh).toContain('Review');
    await collectGoogleTokens();

    for (const [what, text] of [
      ['the token answer', raw],
      ['the refresh answer', refreshedText],
      ['create_event', created],
      ['list_events', listed],
      ['list_calendars', calendars],
      ['the second create_event', created2],
      ['list_events after refreshing', afterRefresh],
    ] as const) {
      expectNoGoogleToken(what, text);
    }
    for (const token of [
      tokens.access_token,
      tokens.refresh_token,
      renewed.access_token,
      renewed.refresh_token,
    ]) {
      expect(googleTokens.has(token)).toBe(false);
    }
  });
});
