import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

interface Seen {
  calendars: { id: string; canRead: boolean; canWrite: boolean }[];
}

describe('/api/v1/matrix, grants and calendars', () => {
  let gw: TestGateway;
  let acme: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let ann: Browser;
  let eve: Browser;
  let work: string;
  let home: string;
  let shared: string;
  let foreignCalendar: string;
  let foreignKey: string;
  let client: Client;

  async function seen(): Promise<Record<string, string>> {
    const result = await client.callTool({ name: 'list_calendars', arguments: {} });
    const out = result.structuredContent as Seen;
    return Object.fromEntries(
      out.calendars
        .filter((calendar) => calendar.canRead)
        .map((calendar) => [calendar.id, calendar.canWrite ? 'write' : 'read']),
    );
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    acme = await gw.seedTenant('Acme');
    const globex = await gw.seedTenant('Globex');
    work = await gw.localCalendar(acme.tenantId, 'Work');
    home = await gw.localCalendar(acme.tenantId, 'Home');
    shared = await gw.localCalendar(acme.tenantId, 'Shared with me');
    await gw.db.pool.query(`UPDATE calendars SET access_role = 'reader' WHERE id = $1`, [shared]);
    foreignCalendar = await gw.localCalendar(globex.tenantId, 'Globex');
    foreignKey = globex.keyId;
    ann = await sessionFor(gw, acme.tenantId);
    eve = await sessionFor(gw, globex.tenantId);
    client = await connectClient(gw.mcpUrl, acme.secret);
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
  });

  describe('.happy', () => {
    it('lists calendars by account, the live keys and the grants', async () => {
      await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'second' } });
      const revoked = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'old' } });
      await call(gw, 'POST', `/api/v1/keys/${revoked.body.key.id}/revoke`, { as: ann });
      await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: acme.keyId, calendarId: work, read: true, write: false },
      });
      const { status, body } = await call(gw, 'GET', '/api/v1/matrix', { as: ann });
      expect(status).toBe(200);
      expect(body.accounts).toHaveLength(1);
      expect(body.accounts[0].connection).toMatchObject({ provider: 'local', status: 'active' });
      expect(body.accounts[0].calendars).toEqual([
        { id: work, summary: 'Work', enabled: true, accessRole: 'owner' },
        { id: home, summary: 'Home', enabled: true, accessRole: 'owner' },
        { id: shared, summary: 'Shared with me', enabled: true, accessRole: 'reader' },
      ]);
      expect(body.keys.map((key: { name: string }) => key.name)).toEqual(['agent', 'second']);
      expect(body.grants).toEqual([{ keyId: acme.keyId, calendarId: work, canRead: true, canWrite: false }]);
    });

    it('a single toggle takes effect on the next MCP call; write implies read; none removes', async () => {
      expect(await seen()).toEqual({ [work]: 'read' });
      const write = await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: acme.keyId, calendarId: home, read: false, write: true },
      });
      expect(write.body).toEqual({ keyId: acme.keyId, calendarId: home, canRead: true, canWrite: true });
      expect(await seen()).toEqual({ [work]: 'read', [home]: 'write' });
      await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: acme.keyId, calendarId: work, read: false, write: false },
      });
      expect(await seen()).toEqual({ [home]: 'write' });
    });

    it('bulk per key: write everywhere the account may write, read elsewhere; then none', async () => {
      const all = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { keyId: acme.keyId, access: 'write' },
      });
      expect(all.status).toBe(200);
      expect(await seen()).toEqual({ [work]: 'write', [home]: 'write', [shared]: 'read' });
      await call(gw, 'POST', '/api/v1/grants/bulk', { as: ann, body: { keyId: acme.keyId, access: 'none' } });
      expect(await seen()).toEqual({});
    });

    it('bulk per calendar covers every live key', async () => {
      const response = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { calendarId: work, access: 'read' },
      });
      expect(response.body.grants).toHaveLength(2);
      expect(await seen()).toEqual({ [work]: 'read' });
    });

    it('disabling a calendar hides it from every key on the next call; enabling restores it', async () => {
      const off = await call(gw, 'PATCH', `/api/v1/calendars/${work}`, { as: ann, body: { enabled: false } });
      expect(off.body).toEqual({ id: work, enabled: false });
      expect(await seen()).toEqual({});
      await call(gw, 'PATCH', `/api/v1/calendars/${work}`, { as: ann, body: { enabled: true } });
      expect(await seen()).toEqual({ [work]: 'read' });
    });
  });

  describe('.error', () => {
    it('names what is wrong', async () => {
      const missing = await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: acme.keyId, read: true },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.error.message).toMatch(/calendarId: .*; write: /);
      const both = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { keyId: acme.keyId, calendarId: work, access: 'read' },
      });
      expect(both.status).toBe(400);
      expect(both.body.error.message).toContain('give exactly one of keyId');
      const access = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { keyId: acme.keyId, access: 'all' },
      });
      expect(access.body.error.message).toContain("access must be 'none', 'read' or 'write'");
      const enabled = await call(gw, 'PATCH', `/api/v1/calendars/${work}`, {
        as: ann,
        body: { enabled: 'yes' },
      });
      expect(enabled.status).toBe(400);
      expect(enabled.body.error.message).toContain('enabled');
    });

    it('refuses Write on a calendar the account may only read', async () => {
      const response = await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: acme.keyId, calendarId: shared, read: true, write: true },
      });
      expect(response.status).toBe(412);
      expect(response.body.error.message).toContain('reader');
    });
  });

  describe('.security', () => {
    it("another tenant's keys and calendars answer 404 and are never changed", async () => {
      const cases = [
        call(gw, 'PUT', '/api/v1/grants', {
          as: eve,
          body: { keyId: acme.keyId, calendarId: foreignCalendar, read: true, write: false },
        }),
        call(gw, 'PUT', '/api/v1/grants', {
          as: ann,
          body: { keyId: acme.keyId, calendarId: foreignCalendar, read: true, write: false },
        }),
        call(gw, 'PUT', '/api/v1/grants', {
          as: ann,
          body: { keyId: foreignKey, calendarId: work, read: true, write: false },
        }),
        call(gw, 'POST', '/api/v1/grants/bulk', { as: eve, body: { keyId: acme.keyId, access: 'write' } }),
        call(gw, 'POST', '/api/v1/grants/bulk', { as: eve, body: { calendarId: work, access: 'write' } }),
        call(gw, 'PATCH', `/api/v1/calendars/${work}`, { as: eve, body: { enabled: false } }),
      ];
      for (const response of await Promise.all(cases)) {
        expect(response.status).toBe(404);
      }
      const theirs = await call(gw, 'GET', '/api/v1/matrix', { as: eve });
      expect(JSON.stringify(theirs.body)).not.toContain(work);
      expect(await seen()).toEqual({ [work]: 'read' });
    });

    it('needs a session, and for writes the Origin and CSRF token', async () => {
      expect((await call(gw, 'GET', '/api/v1/matrix')).status).toBe(401);
      const noCsrf = await call(gw, 'PATCH', `/api/v1/calendars/${work}`, {
        as: ann,
        body: { enabled: false },
        headers: { 'x-calgate-csrf': 'x' },
      });
      expect(noCsrf.status).toBe(403);
      const crossSite = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { calendarId: work, access: 'write' },
        headers: { origin: 'https://evil.test' },
      });
      expect(crossSite.status).toBe(403);
      expect(await seen()).toEqual({ [work]: 'read' });
    });
  });
});
