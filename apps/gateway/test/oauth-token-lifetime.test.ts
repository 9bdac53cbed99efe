import { randomBytes } from 'node:crypto';
import { SecretBox } from '@calgate/store';
import { freePort } from '@calgate/testkit';
import { decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { AccessTokens, MAX_ACCESS_TOKEN_TTL_SECONDS } from '../src/oauth/tokens.ts';
import { type Browser, sessionFor } from './api-client.ts';
import { HIGH_RATE_LIMITS, rpc, startTestGateway, type TestGateway } from './harness.ts';
import { approveApp, type Callback, postForm, startCallback } from './oauth-flow.ts';

/** Settings loadConfig needs besides the one under test. */
const BASE_ENV = { DATABASE_URL: 'postgres://calgate@127.0.0.1:5432/calgate' };

/** Access tokens live at most an hour: the setting refuses more, and tokens carry what is set. */
describe('OAuth access-token lifetime', () => {
  it('OAUTH_ACCESS_TOKEN_TTL_SECS above 3600 (or below 1) is refused when the configuration is read', () => {
    expect(MAX_ACCESS_TOKEN_TTL_SECONDS).toBe(3600);
    for (const value of ['3601', '7200', '86400', '0']) {
      expect(() => loadConfig({ ...BASE_ENV, OAUTH_ACCESS_TOKEN_TTL_SECS: value }), value).toThrow(
        ConfigError,
      );
      expect(() => loadConfig({ ...BASE_ENV, OAUTH_ACCESS_TOKEN_TTL_SECS: value }), value).toThrow(
        /OAUTH_ACCESS_TOKEN_TTL_SECS/,
      );
    }
    expect(loadConfig({ ...BASE_ENV, OAUTH_ACCESS_TOKEN_TTL_SECS: '3600' }).oauth.accessTokenTtlSeconds).toBe(
      3600,
    );
    expect(loadConfig(BASE_ENV).oauth.accessTokenTtlSeconds).toBe(3600);
    expect(loadConfig({ ...BASE_ENV, OAUTH_ACCESS_TOKEN_TTL_SECS: '900' }).oauth.accessTokenTtlSeconds).toBe(
      900,
    );
  });

  it('the token issuer caps a longer lifetime given in code at an hour', async () => {
    const tokens = new AccessTokens({
      key: randomBytes(32),
      issuer: 'http://calgate.test',
      audience: 'http://calgate.test/api/mcp',
      ttlSeconds: 7200,
    });
    expect(tokens.ttlSeconds).toBe(3600);
    const claims = decodeJwt(
      await tokens.issue({ tenantId: 'tnt_1', keyId: 'key_1', clientId: 'ocl_1', scope: 'calendars:read' }),
    );
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
  });

  describe('a gateway with OAUTH_ACCESS_TOKEN_TTL_SECS=900', () => {
    const ttl = 900;
    const encryptionKey = randomBytes(32).toString('base64');
    let gw: TestGateway;
    let callback: Callback;
    let ann: Browser;
    let work: string;

    beforeAll(async () => {
      const port = await freePort();
      gw = await startTestGateway({
        ...HIGH_RATE_LIMITS,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ENCRYPTION_KEY: encryptionKey,
        OAUTH_ACCESS_TOKEN_TTL_SECS: String(ttl),
        ALLOWED_ORIGINS: 'http://calgate.test',
      });
      callback = await startCallback();
      const { tenantId } = await gw.seedTenant('Acme');
      work = await gw.localCalendar(tenantId, 'Work');
      ann = await sessionFor(gw, tenantId);
    });

    afterAll(async () => {
      await callback?.close();
      await gw?.stop();
    });

    it("issued and refreshed tokens have exp - iat = the setting, expires_in says so, and they are Calgate's", async () => {
      const { clientId, tokens } = await approveApp(gw, ann, callback, {
        calendars: [{ calendarId: work, read: true, write: false }],
      });
      const refreshed = await postForm(gw.url, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: clientId,
      });
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      // Signed with the key this install derives from ENCRYPTION_KEY, for this issuer and MCP URL.
      const key = new SecretBox([new Uint8Array(Buffer.from(encryptionKey, 'base64'))]).deriveKey(
        'oauth-access-token',
      );
      for (const answer of [tokens, refreshed.body as typeof tokens]) {
        expect(answer.expires_in).toBe(ttl);
        const { payload, protectedHeader } = await jwtVerify(answer.access_token, key, {
          issuer: gw.url,
          audience: gw.mcpUrl,
        });
        expect(protectedHeader.typ).toBe('at+jwt');
        expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(ttl);
        expect(Math.abs((payload.iat ?? 0) - Date.now() / 1000)).toBeLessThan(120);
      }
      const listed = await rpc(
        gw.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { authorization: `Bearer ${refreshed.body.access_token}` },
      );
      expect(listed.status).toBe(200);
    });
  });
});
