import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

interface Calendars {
  calendars: { id: string; canRead: boolean; canWrite: boolean }[];
}

describe('/api/v1/keys and /api/v1/overview', () => {
  let gw: TestGateway;
  let ann: Browser;
  let eve: Browser;
  let calendar: string;
  let acmeId: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    const acme = await gw.seedTenant('Acme');
    acmeId = acme.tenantId;
    const globex = await gw.seedTenant('Globex');
    calendar = await gw.localCalendar(acme.tenantId, 'Work');
    ann = await sessionFor(gw, acme.tenantId);
    eve = await sessionFor(gw, globex.tenantId);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('overview: the MCP URL, client configurations with a placeholder key, and the accounts', async () => {
      const { status, body } = await call(gw, 'GET', '/api/v1/overview', { as: ann });
      expect(status).toBe(200);
      expect(body.mcpUrl).toBe('http://calgate.test/api/mcp');
      expect(body.clientConfigs.claudeCode).toBe(
        'claude mcp add --transport http calgate http://calgate.test/api/mcp --header "Authorization: Bearer <YOUR_API_KEY>"',
      );
      expect(body.clientConfigs.cursor.mcpServers.calgate).toEqual({
        url: 'http://calgate.test/api/mcp',
        headers: { Authorization: 'Bearer <YOUR_API_KEY>' },
      });
      expect(JSON.stringify(body.clientConfigs.claudeDesktop)).toContain('<YOUR_API_KEY>');
      expect(body.clientConfigs.chatgpt.url).toBe('http://calgate.test/api/mcp');
      expect(JSON.stringify(body)).not.toMatch(/cg_live_[A-Za-z0-9]{32}/);
      expect(body.accounts).toEqual([
        expect.objectContaining({ provider: 'local', accountEmail: 'local', auth: 'none', status: 'active' }),
      ]);
    });

    it('creates a key whose secret is shown once and works over MCP; the list never shows it', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'laptop', expiresAt: '2099-01-01T00:00:00Z' },
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('cache-control')).toBe('no-store');
      expect(created.body.secret).toMatch(/^cg_live_[A-Za-z0-9]{32}$/);
      expect(created.body.key).toMatchObject({
        name: 'laptop',
        expiresAt: '2099-01-01T00:00:00.000Z',
        revokedAt: null,
      });
      expect(created.body.secret.startsWith(created.body.key.prefix)).toBe(true);
      const list = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(list.body.keys.map((key: { name: string }) => key.name)).toEqual(['agent', 'laptop']);
      expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
      expect(Object.keys(list.body.keys[1]).sort()).toEqual(
        [
          'createdAt',
          'defaultAgentId',
          'defaultCalendarId',
          'expiresAt',
          'hijackPolicy',
          'id',
          'lastUsedAt',
          'name',
          'prefix',
          'revokedAt',
          'timeZone',
          'toolsets',
        ].sort(),
      );
      const client = await connectClient(gw.mcpUrl, created.body.secret);
      await client.callTool({ name: 'list_calendars', arguments: {} });
      await client.close();
    });

    it('rotates a key in place: same id, grants and defaults; without grace the old secret stops at once', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'agent-r' } });
      const oldId = created.body.key.id as string;
      await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: oldId, calendarId: calendar, read: true, write: true },
      });
      const set = await call(gw, 'PATCH', `/api/v1/keys/${oldId}`, {
        as: ann,
        body: { defaultCalendarId: calendar, timeZone: 'Asia/Kathmandu', toolsets: ['calendar', 'search'] },
      });
      expect(set.status).toBe(200);
      const before = await connectClient(gw.mcpUrl, created.body.secret);
      const seen = (await before.callTool({ name: 'list_calendars', arguments: {} }))
        .structuredContent as Calendars;
      expect(seen.calendars).toEqual([expect.objectContaining({ id: calendar, canWrite: true })]);

      const rotated = await call(gw, 'POST', `/api/v1/keys/${oldId}/rotate`, { as: ann });
      expect(rotated.status).toBe(201);
      expect(rotated.body.key.name).toBe('agent-r');
      const listed = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(listed.body.keys.find((key: { id: string }) => key.id === rotated.body.key.id)).toMatchObject({
        defaultCalendarId: calendar,
        timeZone: 'Asia/Kathmandu',
        toolsets: ['calendar', 'search'],
      });
      expect(rotated.body.key.id).toBe(oldId);
      expect(rotated.body.previousValidUntil).toBeNull();
      expect(rotated.body.secret).not.toBe(created.body.secret);
      await expect(before.callTool({ name: 'list_calendars', arguments: {} })).rejects.toThrow(/not valid/i);
      await before.close().catch(() => {});
      const after = await connectClient(gw.mcpUrl, rotated.body.secret);
      const now = (await after.callTool({ name: 'list_calendars', arguments: {} }))
        .structuredContent as Calendars;
      expect(now.calendars).toEqual([
        expect.objectContaining({ id: calendar, canRead: true, canWrite: true }),
      ]);
      await after.close();
      const list = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      const kept = list.body.keys.find((key: { id: string }) => key.id === oldId);
      expect(kept.revokedAt).toBeNull();
      expect(kept.prefix).toBe(rotated.body.secret.slice(0, 12));
    });

    it('rotates with a grace period: both secrets work until it ends, then only the new one', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'graceful', grants: [{ calendarId: calendar, read: true, write: false }] },
      });
      const id = created.body.key.id as string;
      const rotated = await call(gw, 'POST', `/api/v1/keys/${id}/rotate`, {
        as: ann,
        body: { graceSeconds: 2 },
      });
      expect(rotated.status).toBe(201);
      expect(rotated.body.key.id).toBe(id);
      const until = Date.parse(rotated.body.previousValidUntil);
      expect(until - Date.now()).toBeGreaterThan(1000);
      expect(until - Date.now()).toBeLessThanOrEqual(2000);
      expect(rotated.body.note).toContain('keeps working until');
      const sees = async (secret: string) => {
        const client = await connectClient(gw.mcpUrl, secret);
        try {
          const answer = (await client.callTool({ name: 'list_calendars', arguments: {} }))
            .structuredContent as Calendars;
          return answer.calendars.map((item) => item.id);
        } finally {
          await client.close().catch(() => {});
        }
      };
      // Both secrets are the same key: the same grants.
      await expect(sees(created.body.secret)).resolves.toEqual([calendar]);
      await expect(sees(rotated.body.secret)).resolves.toEqual([calendar]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now()) + 100));
      await expect(sees(created.body.secret)).rejects.toThrow(/not valid|expired/i);
      await expect(sees(rotated.body.secret)).resolves.toEqual([calendar]);
    });

    it('creates a key with its calendars, Read and Write, in one step', async () => {
      const second = await gw.localCalendar(acmeId, 'Side');
      const created = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: {
          name: 'one-step',
          toolsets: ['calendar'],
          grants: [
            { calendarId: calendar, read: true, write: true },
            { calendarId: second, read: true, write: false },
          ],
        },
      });
      expect(created.status).toBe(201);
      const client = await connectClient(gw.mcpUrl, created.body.secret);
      const seen = (await client.callTool({ name: 'list_calendars', arguments: {} }))
        .structuredContent as Calendars;
      await client.close();
      expect(seen.calendars).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: calendar, canRead: true, canWrite: true }),
          expect.objectContaining({ id: second, canRead: true, canWrite: false }),
        ]),
      );
      expect(seen.calendars).toHaveLength(2);
    });

    it('a test call runs list_calendars as the key and says what it sees and how fast', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'tested', grants: [{ calendarId: calendar, read: true, write: false }] },
      });
      const test = await call(gw, 'POST', `/api/v1/keys/${created.body.key.id}/test-call`, { as: ann });
      expect(test.status).toBe(200);
      expect(test.body).toMatchObject({ tool: 'list_calendars', ok: true });
      expect(test.body.latencyMs).toBeGreaterThanOrEqual(0);
      expect(test.body.calendars).toEqual([
        expect.objectContaining({ id: calendar, summary: 'Work', canRead: true, canWrite: false }),
      ]);
      const bare = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'bare' } });
      const empty = await call(gw, 'POST', `/api/v1/keys/${bare.body.key.id}/test-call`, { as: ann });
      expect(empty.body.calendars).toEqual([]);
      expect(empty.body.message).toContain('no calendar grants');
      await call(gw, 'POST', `/api/v1/keys/${bare.body.key.id}/revoke`, { as: ann });
      const revoked = await call(gw, 'POST', `/api/v1/keys/${bare.body.key.id}/test-call`, { as: ann });
      expect(revoked.status).toBe(409);
    });

    it("sets a key's default calendar and time zone; the next MCP call uses them; null clears", async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'defaults' } });
      const keyId = created.body.key.id as string;
      expect(created.body.key).toMatchObject({ defaultCalendarId: null, timeZone: null });
      const home = await gw.localCalendar(ann.tenantId, 'Home', 'America/New_York');
      for (const calendarId of [calendar, home]) {
        await call(gw, 'PUT', '/api/v1/grants', {
          as: ann,
          body: { keyId, calendarId, read: true, write: true },
        });
      }
      const client = await connectClient(gw.mcpUrl, created.body.secret);
      const now = async () =>
        (
          (await client.callTool({ name: 'get_current_time', arguments: {} })).structuredContent as {
            timeZone: string;
          }
        ).timeZone;
      const chosen = async () =>
        (
          (await client.callTool({ name: 'list_calendars', arguments: {} })).structuredContent as {
            calendars: { id: string; default: boolean }[];
          }
        ).calendars
          .filter((item) => item.default)
          .map((item) => item.id);
      expect(await chosen()).toEqual([calendar]);
      expect(await now()).toBe('Europe/Berlin');

      const patched = await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, {
        as: ann,
        body: { defaultCalendarId: home, timeZone: 'Asia/Tokyo' },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.key).toMatchObject({ id: keyId, defaultCalendarId: home, timeZone: 'Asia/Tokyo' });
      expect(await chosen()).toEqual([home]);
      expect(await now()).toBe('Asia/Tokyo');
      const listed = (await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys.find(
        (key: { id: string }) => key.id === keyId,
      );
      expect(listed).toMatchObject({ defaultCalendarId: home, timeZone: 'Asia/Tokyo' });

      const zoneOnly = await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, {
        as: ann,
        body: { timeZone: null },
      });
      expect(zoneOnly.body.key).toMatchObject({ defaultCalendarId: home, timeZone: null });
      expect(await now()).toBe('America/New_York');
      await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, { as: ann, body: { defaultCalendarId: null } });
      expect(await chosen()).toEqual([calendar]);
      await client.close();
    });

    it('revokes a key: the next MCP call with it is refused', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'short-lived' } });
      const client = await connectClient(gw.mcpUrl, created.body.secret);
      await client.callTool({ name: 'list_calendars', arguments: {} });
      const revoked = await call(gw, 'POST', `/api/v1/keys/${created.body.key.id}/revoke`, { as: ann });
      expect(revoked.status).toBe(200);
      expect(revoked.body.key.revokedAt).not.toBeNull();
      await expect(client.callTool({ name: 'list_calendars', arguments: {} })).rejects.toThrow();
      await client.close().catch(() => {});
    });
  });

  describe('.error', () => {
    it('names what is wrong with a new key', async () => {
      const noName = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: ' ' } });
      expect(noName.status).toBe(400);
      expect(noName.body.error.message).toContain('name: give the key a name');
      const past = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'x', expiresAt: '2001-01-01T00:00:00Z' },
      });
      expect(past.body.error.message).toContain('expiresAt: must be in the future');
      const notADate = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'x', expiresAt: 'soon' },
      });
      expect(notADate.body.error.message).toContain('expiresAt: use an RFC 3339 date-time');
    });

    it('refuses unknown toolsets on create and on change, naming the valid ones; nothing changes', async () => {
      const valid = 'the toolsets are calendar, booking, search, rules, scheduler, ics.';
      const before = (await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys.length;
      const bad = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'x', toolsets: ['calendar', 'agenda'] },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe(`Unknown toolset 'agenda': ${valid}`);
      const listed = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(listed.body.keys.length).toBe(before);
      expect(listed.body.toolsets).toEqual(['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics']);

      const created = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'narrow', toolsets: ['search', 'calendar'] },
      });
      expect(created.status).toBe(201);
      expect(created.body.key.toolsets).toEqual(['calendar', 'search']);
      for (const [toolsets, message] of [
        [[], `Give at least one toolset: ${valid}`],
        [['booking', 'Calendar'], `Unknown toolset 'Calendar': ${valid}`],
        ['calendar', 'toolsets: Invalid input: expected array, received string'],
      ] as const) {
        const answer = await call(gw, 'PATCH', `/api/v1/keys/${created.body.key.id}`, {
          as: ann,
          body: { toolsets },
        });
        expect(answer.status, JSON.stringify(toolsets)).toBe(400);
        expect(answer.body.error.message).toBe(message);
      }
      const after = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(after.body.keys.find((key: { id: string }) => key.id === created.body.key.id).toolsets).toEqual([
        'calendar',
        'search',
      ]);
    });

    it('refuses grants it cannot give on create, and then creates nothing', async () => {
      const readOnly = await gw.localCalendar(acmeId, 'Shared with us');
      await gw.db.pool.query(`UPDATE calendars SET access_role = 'reader' WHERE id = $1`, [readOnly]);
      const before = (await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys.length;
      const write = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: {
          name: 'too-much',
          grants: [
            { calendarId: calendar, read: true, write: true },
            { calendarId: readOnly, read: true, write: true },
          ],
        },
      });
      expect(write.status).toBe(412);
      expect(write.body.error.message).toContain(
        `Calendar ${readOnly} ('Shared with us') is shared with the account as reader`,
      );
      expect(write.body.error.message).toContain('No key was created');
      const foreign = await call(gw, 'POST', '/api/v1/keys', {
        as: eve,
        body: { name: 'too-much', grants: [{ calendarId: calendar, read: true, write: false }] },
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.message).toContain(`No calendar ${calendar} in this tenant`);
      const twice = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: {
          name: 'too-much',
          grants: [
            { calendarId: calendar, read: true, write: false },
            { calendarId: calendar, read: true, write: true },
          ],
        },
      });
      expect(twice.status).toBe(400);
      expect((await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys).toHaveLength(before);
      expect(
        (await call(gw, 'GET', '/api/v1/keys', { as: eve })).body.keys.map((k: { name: string }) => k.name),
      ).not.toContain('too-much');
      const rows = await gw.db.pool.query(`SELECT count(*)::int AS n FROM api_keys WHERE name = 'too-much'`);
      expect(rows.rows[0].n).toBe(0);
    });

    it('refuses a grace period outside 0..86400 seconds, and changes nothing', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'grace-bounds' } });
      for (const graceSeconds of [-1, 86_401, 1.5]) {
        const answer = await call(gw, 'POST', `/api/v1/keys/${created.body.key.id}/rotate`, {
          as: ann,
          body: { graceSeconds },
        });
        expect(answer.status, String(graceSeconds)).toBe(400);
        expect(answer.body.error.message).toContain('graceSeconds');
      }
      const client = await connectClient(gw.mcpUrl, created.body.secret);
      await client.callTool({ name: 'list_calendars', arguments: {} });
      await client.close();
    });

    it('rotating a revoked key is a conflict; unknown ids are 404', async () => {
      const created = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'gone' } });
      await call(gw, 'POST', `/api/v1/keys/${created.body.key.id}/revoke`, { as: ann });
      const again = await call(gw, 'POST', `/api/v1/keys/${created.body.key.id}/rotate`, { as: ann });
      expect(again.status).toBe(409);
      expect(again.body.error.message).toContain('already revoked');
      expect((await call(gw, 'POST', '/api/v1/keys/key_nope/revoke', { as: ann })).status).toBe(404);
      expect((await call(gw, 'POST', '/api/v1/keys/key_nope/rotate', { as: ann })).status).toBe(404);
    });
  });

  describe('.security', () => {
    it('needs a session, and for writes the Origin and the CSRF token', async () => {
      expect((await call(gw, 'GET', '/api/v1/keys')).status).toBe(401);
      expect((await call(gw, 'GET', '/api/v1/overview')).status).toBe(401);
      expect((await call(gw, 'POST', '/api/v1/keys', { body: { name: 'x' } })).status).toBe(401);
      const noCsrf = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'x' },
        headers: { 'x-calgate-csrf': '' },
      });
      expect(noCsrf.status).toBe(403);
      const otherSessionsToken = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'x' },
        headers: { 'x-calgate-csrf': eve.csrf },
      });
      expect(otherSessionsToken.status).toBe(403);
      const crossSite = await call(gw, 'POST', '/api/v1/keys', {
        as: ann,
        body: { name: 'x' },
        headers: { origin: 'https://evil.test' },
      });
      expect(crossSite.status).toBe(403);
      expect(crossSite.body.error.message).toBe(
        'Origin https://evil.test is not allowed: this gateway accepts http://calgate.test (PUBLIC_URL) only. Add it to ALLOWED_ORIGINS to let its pages call Calgate.',
      );
      const names = (await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys.map(
        (k: { name: string }) => k.name,
      );
      expect(names).not.toContain('x');
    });

    it('the connection routes take the same CSRF check', async () => {
      const forged = await call(gw, 'DELETE', '/api/v1/connections/con_unknown', {
        as: ann,
        headers: { 'x-calgate-csrf': eve.csrf },
      });
      expect(forged.status).toBe(403);
      expect(forged.body.error.message).toContain('x-calgate-csrf');
      const sent = await call(gw, 'DELETE', '/api/v1/connections/con_unknown', { as: ann });
      expect(sent.status).toBe(404);
    });

    it("another tenant's keys are invisible and answer 404", async () => {
      const annKeys = (await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys as { id: string }[];
      const eveKeys = (await call(gw, 'GET', '/api/v1/keys', { as: eve })).body.keys as { id: string }[];
      expect(eveKeys.map((key) => key.id)).not.toContain(annKeys[0]?.id);
      const target = annKeys.find((key) => key.id !== undefined)?.id as string;
      expect((await call(gw, 'POST', `/api/v1/keys/${target}/revoke`, { as: eve })).status).toBe(404);
      const patched = await call(gw, 'PATCH', `/api/v1/keys/${target}`, {
        as: eve,
        body: { timeZone: 'UTC' },
      });
      expect(patched.status).toBe(404);
      expect((await call(gw, 'POST', `/api/v1/keys/${target}/rotate`, { as: eve })).status).toBe(404);
      const still = (await call(gw, 'GET', '/api/v1/keys', { as: ann })).body.keys.find(
        (key: { id: string }) => key.id === target,
      );
      expect(still.revokedAt).toBeNull();
      expect(still.timeZone).toBeNull();
      const overview = await call(gw, 'GET', '/api/v1/overview', { as: eve });
      expect(overview.body.accounts).toEqual([]);
    });
  });
});
