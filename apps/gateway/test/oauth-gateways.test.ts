import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, type Browser, call, sessionFor } from './api-client.ts';
import { HIGH_RATE_LIMITS, rpc, startTestGateway, type TestGateway } from './harness.ts';
import { approveApp, type Callback, postForm, startCallback } from './oauth-flow.ts';

/** How long gateway B keeps a looked-up connection (KEY_CACHE_TTL_MS). */
const CACHE_TTL_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two gateways of one install behind one PUBLIC_URL (same ENCRYPTION_KEY, Postgres and Redis):
 * a token issued by one is honoured by the other, and revoking the connected app on one stops it
 * on the other at once (A tells B through Redis), well within the key cache's lifetime. Only the
 * bound is asserted, never exact timing.
 */
describe('a connected app revoked on one gateway is refused by another', () => {
  const publicUrl = 'http://calgate.test';
  const resource = `${publicUrl}/api/mcp`;
  let a: TestGateway;
  let b: TestGateway;
  let callback: Callback;
  let ann: Browser;
  let work: string;

  beforeAll(async () => {
    const shared = {
      ...HIGH_RATE_LIMITS,
      PUBLIC_URL: publicUrl,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      KEY_CACHE_TTL_MS: String(CACHE_TTL_MS),
    };
    a = await startTestGateway(shared);
    b = await startTestGateway(shared, { db: a.db });
    callback = await startCallback();
    const { tenantId } = await a.seedTenant('Acme');
    work = await a.localCalendar(tenantId, 'Work');
    ann = await sessionFor(a, tenantId);
  });

  afterAll(async () => {
    await callback?.close();
    await b?.stop();
    await a?.stop();
  });

  /** tools/list on a gateway's own address with the access token. */
  const list = (gw: TestGateway, token: string) =>
    rpc(
      `${gw.url}/api/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${token}` },
    );

  it('B honours A’s token, then refuses it soon after revocation on A, well within the key cache’s lifetime', async () => {
    const { clientId, tokens } = await approveApp(a, ann, callback, {
      calendars: [{ calendarId: work, read: true, write: false }],
      resource,
    });
    expect((await list(a, tokens.access_token)).status).toBe(200);
    // B looks the connection up (and caches it) while it is live.
    expect((await list(b, tokens.access_token)).status).toBe(200);

    const connection = (await a.runtime.deps.dashboard.oauth.listConnections(ann.tenantId)).find(
      (c) => c.clientId === clientId,
    );
    expect(connection).toBeDefined();
    const revoked = await call(a, 'POST', `/api/v1/connected-apps/${connection?.keyId}/revoke`, { as: ann });
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();

    // A forgets its cached lookup at once.
    const onA = await list(a, tokens.access_token);
    expect(onA.status).toBe(401);
    expect(((await onA.json()) as Body).error.message).toMatch(/revoked/);

    // A tells B through Redis: B drops its cached lookup and refuses well within the lifetime,
    // and keeps refusing.
    let refusedAfter: number | undefined;
    while (Date.now() - revokedAt < CACHE_TTL_MS / 2) {
      const response = await list(b, tokens.access_token);
      await response.body?.cancel();
      expect([200, 401]).toContain(response.status);
      if (response.status === 401) {
        refusedAfter ??= Date.now() - revokedAt;
      } else {
        expect(refusedAfter, 'B answered again after refusing').toBeUndefined();
      }
      await sleep(50);
    }
    expect(refusedAfter, 'B still answered half a cache lifetime after the revocation').toBeDefined();
    const onB = await list(b, tokens.access_token);
    expect(onB.status).toBe(401);
    expect(onB.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(((await onB.json()) as Body).error.message).toMatch(/revoked/);

    // Refreshing is refused on either gateway: the database says so, no cache involved.
    const refresh = await postForm(b.url, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource,
    });
    expect(refresh.status).toBe(400);
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
  });
});
