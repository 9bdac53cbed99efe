import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc, startTestGateway, type TestGateway } from './harness.ts';

const LIST_TOOLS = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe('MCP endpoint security (real HTTP, Postgres, Redis)', () => {
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;

  beforeAll(async () => {
    gw = await startTestGateway({ ALLOWED_ORIGINS: 'https://app.example.com' });
    tenant = await gw.seedTenant();
  });
  afterAll(async () => {
    await gw.stop();
  });

  async function expect401(headers: Record<string, string>, message: RegExp, challenge: RegExp) {
    const response = await rpc(gw.mcpUrl, LIST_TOOLS, headers);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(challenge);
    const body = (await response.json()) as { error: { code: string; message: string; requestId: string } };
    expect(body.error.code).toBe('unauthenticated');
    expect(body.error.message).toMatch(message);
    expect(body.error.requestId).toMatch(/^req_/);
  }

  it('answers 401 with a Bearer challenge that leads OAuth clients to sign-in when no key is sent', async () => {
    await expect401(
      {},
      /API key is required/,
      /^Bearer realm="calgate", resource_metadata="http:\/\/calgate\.test\/\.well-known\/oauth-protected-resource\/api\/mcp", scope="calendars:read calendars:write"$/,
    );
  });

  it('answers 401 invalid_token for a malformed Authorization header', async () => {
    for (const value of [
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer not-a-key',
      `Bearer ${tenant.secret}x`,
      tenant.secret,
    ]) {
      await expect401({ authorization: value }, /holds neither a Calgate API key/, /error="invalid_token"/);
    }
    // Shaped like an access token, but not one of this gateway's.
    await expect401(
      { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl' },
      /not issued by this Calgate/,
      /error="invalid_token"/,
    );
  });

  it('answers 401 for an unknown key', async () => {
    await expect401(
      { authorization: `Bearer cg_live_${'A'.repeat(32)}` },
      /not valid/,
      /error="invalid_token"/,
    );
  });

  it('answers 401 for an expired key', async () => {
    const { key, secret } = await gw.runtime.keys.create(tenant.tenantId, {
      name: 'short-lived',
      expiresAt: new Date(Date.now() + 1500),
    });
    expect(key.expiresAt).not.toBeNull();
    expect((await rpc(gw.mcpUrl, LIST_TOOLS, { authorization: `Bearer ${secret}` })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await expect401({ authorization: `Bearer ${secret}` }, /expired/, /error="invalid_token"/);
  });

  it('stops accepting a revoked key within 5 seconds, although lookups are cached', async () => {
    const { key, secret } = await gw.runtime.keys.create(tenant.tenantId, { name: 'to revoke' });
    const auth = { authorization: `Bearer ${secret}` };
    expect((await rpc(gw.mcpUrl, LIST_TOOLS, auth)).status).toBe(200);
    // Revoked behind the gateway's back (another process), so only the cache TTL can save us.
    await gw.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 6000) {
      status = (await rpc(gw.mcpUrl, LIST_TOOLS, auth)).status;
      if (status === 200) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    await expect401(auth, /revoked/, /error="invalid_token"/);
  });

  it('refuses a foreign Origin with 403 and accepts configured ones', async () => {
    const auth = { authorization: `Bearer ${tenant.secret}` };
    const foreign = await rpc(gw.mcpUrl, LIST_TOOLS, { ...auth, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { message: string } }).error.message).toMatch(
      /evil\.example is not allowed/,
    );
    // Refused before the key is even looked at.
    expect((await rpc(gw.mcpUrl, LIST_TOOLS, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await rpc(gw.mcpUrl, LIST_TOOLS, { ...auth, origin: 'https://app.example.com' })).status).toBe(
      200,
    );
    expect((await rpc(gw.mcpUrl, LIST_TOOLS, { ...auth, origin: 'http://calgate.test' })).status).toBe(200);
  });

  it('answers DELETE, and a GET that does not accept an event stream, with 405 (stateless server)', async () => {
    const auth = { authorization: `Bearer ${tenant.secret}` };
    const requests = [
      { method: 'DELETE', accept: 'text/event-stream' },
      { method: 'GET', accept: 'application/json' },
    ];
    for (const { method, accept } of requests) {
      const response = await fetch(gw.mcpUrl, { method, headers: { ...auth, accept } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, POST');
      await response.body?.cancel();
    }
    expect((await fetch(gw.mcpUrl, { method: 'GET' })).status).toBe(401);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const response = await rpc(gw.mcpUrl, '{"jsonrpc": "2.0", ', {
      authorization: `Bearer ${tenant.secret}`,
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: number } };
    expect(body.error.code).toBe(-32700);
  });

  it('never writes the key or the Authorization header to the log', async () => {
    await rpc(gw.mcpUrl, LIST_TOOLS, { authorization: `Bearer ${tenant.secret}` });
    await rpc(gw.mcpUrl, LIST_TOOLS, { authorization: `Bearer ${tenant.secret.slice(0, -1)}!` });
    const all = gw.logs.join('');
    expect(all).not.toContain(tenant.secret);
    expect(all).not.toContain(tenant.secret.slice(8, 30));
  });
});

describe('per-key rate limiting (Redis)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '5' });
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('answers 429 with Retry-After once a key spends its burst, without touching other keys', async () => {
    const a = await gw.seedTenant('A');
    const b = await gw.seedTenant('B');
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const response = await rpc(gw.mcpUrl, LIST_TOOLS, { authorization: `Bearer ${a.secret}` });
      statuses.push(response.status);
      if (response.status === 429) {
        retryAfter = response.headers.get('retry-after');
        const body = (await response.json()) as { error: { code: string } };
        expect(body.error.code).toBe('rate_limited');
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect((await rpc(gw.mcpUrl, LIST_TOOLS, { authorization: `Bearer ${b.secret}` })).status).toBe(200);
  });
});
