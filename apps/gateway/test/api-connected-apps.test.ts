import { randomUUID } from 'node:crypto';
import { OAuthRepository } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

/** Connected apps: OAuth connections listed, revoked, and placed in the matrix and audit log. */
describe('/api/v1/connected-apps', () => {
  let gw: TestGateway;
  let oauth: OAuthRepository;
  let acme: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let ann: Browser;
  let eve: Browser;
  let work: string;
  let home: string;
  let claude: string;
  let foreignApp: string;

  /** A client registered as an MCP client would, and a connection a user approved for it. */
  async function connect(
    tenantId: string,
    userId: string,
    clientName: string,
    calendars: { calendarId: string; read: boolean; write: boolean }[],
  ): Promise<string> {
    const { client } = await oauth.registerClient({
      clientName,
      redirectUris: ['https://claude.ai/api/mcp/auth_callback'],
    });
    return oauth.createConnection({
      tenantId,
      userId,
      clientId: client.clientId,
      name: clientName,
      toolsets: ['calendar', 'search'],
      calendars,
    });
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    oauth = new OAuthRepository(gw.db);
    acme = await gw.seedTenant('Acme');
    const globex = await gw.seedTenant('Globex');
    work = await gw.localCalendar(acme.tenantId, 'Work');
    home = await gw.localCalendar(acme.tenantId, 'Home');
    const globexCalendar = await gw.localCalendar(globex.tenantId, 'Globex');
    ann = await sessionFor(gw, acme.tenantId);
    eve = await sessionFor(gw, globex.tenantId);
    claude = await connect(acme.tenantId, ann.userId, 'Claude', [
      { calendarId: work, read: true, write: true },
      { calendarId: home, read: false, write: false },
    ]);
    foreignApp = await connect(globex.tenantId, eve.userId, 'Globex bot', [
      { calendarId: globexCalendar, read: true, write: false },
    ]);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('lists a connection with who approved it, its calendars and toolsets; API keys leave it out', async () => {
      const { status, body } = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      expect(status).toBe(200);
      expect(body.apps).toHaveLength(1);
      const [app] = body.apps;
      expect(app).toMatchObject({
        id: claude,
        name: 'Claude',
        clientName: 'Claude',
        clientId: expect.stringMatching(/^ocl_/),
        toolsets: ['calendar', 'search'],
        lastUsedAt: null,
        revokedAt: null,
        calendars: [{ calendarId: work, summary: 'Work', read: true, write: true }],
      });
      const { rows } = await gw.db.pool.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [
        ann.userId,
      ]);
      expect(app.userEmail).toBe(rows[0]?.email);
      expect(Date.parse(app.createdAt)).not.toBeNaN();
      const keys = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(keys.body.keys.map((key: { id: string }) => key.id)).not.toContain(claude);
    });

    it('the matrix shows the app beside the keys, and a single grant edit works for it', async () => {
      const before = await call(gw, 'GET', '/api/v1/matrix', { as: ann });
      expect(before.body.keys).toEqual([
        { id: acme.keyId, name: 'agent', prefix: expect.any(String), kind: 'key' },
        { id: claude, name: 'Claude', prefix: null, kind: 'app' },
      ]);
      expect(before.body.grants).toContainEqual({
        keyId: claude,
        calendarId: work,
        canRead: true,
        canWrite: true,
      });
      const put = await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: claude, calendarId: home, read: true, write: false },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ keyId: claude, calendarId: home, canRead: true, canWrite: false });
      const listed = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      expect(listed.body.apps[0].calendars).toEqual([
        { calendarId: work, summary: 'Work', read: true, write: true },
        { calendarId: home, summary: 'Home', read: true, write: false },
      ]);
    });

    it('bulk by keyId changes every calendar of an app; bulk by calendar leaves apps alone', async () => {
      const byCalendar = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { calendarId: work, access: 'none' },
      });
      expect(byCalendar.status).toBe(200);
      expect(byCalendar.body.grants.map((grant: { keyId: string }) => grant.keyId)).toEqual([acme.keyId]);
      const byKey = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { keyId: claude, access: 'read' },
      });
      expect(byKey.status).toBe(200);
      const { body } = await call(gw, 'GET', '/api/v1/matrix', { as: ann });
      const ofApp = body.grants.filter((grant: { keyId: string }) => grant.keyId === claude);
      expect(ofApp).toEqual([
        { keyId: claude, calendarId: expect.any(String), canRead: true, canWrite: false },
        { keyId: claude, calendarId: expect.any(String), canRead: true, canWrite: false },
      ]);
      expect(ofApp.map((grant: { calendarId: string }) => grant.calendarId).sort()).toEqual(
        [work, home].sort(),
      );
    });

    it('the audit log names an app’s calls after its client and filters by its key id', async () => {
      await gw.db.pool.query(
        `INSERT INTO audit_log (entry_id, tenant_id, key_id, request_id, tool, calendar_ids, outcome, latency_ms)
         VALUES ($1, $2, $3, 'req-app', 'list_events', ARRAY[$4], 'ok', 12)`,
        [randomUUID(), acme.tenantId, claude, work],
      );
      const { status, body } = await call(gw, 'GET', `/api/v1/audit?keyId=${claude}`, { as: ann });
      expect(status).toBe(200);
      expect(body.entries).toHaveLength(1);
      expect(body.entries[0]).toMatchObject({
        tool: 'list_events',
        key: { id: claude, name: 'Claude', prefix: null, kind: 'app' },
      });
    });

    it("sets an app's hijack policy: listed, used by its next call's principal, audited like a key's", async () => {
      const before = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      expect(before.body.apps[0].hijackPolicy).toBe('ask');
      const changed = await call(gw, 'PATCH', `/api/v1/connected-apps/${claude}`, {
        as: ann,
        body: { hijackPolicy: 'strict' },
      });
      expect(changed.status).toBe(200);
      expect(changed.body.app).toMatchObject({ id: claude, name: 'Claude', hijackPolicy: 'strict' });
      const listed = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      expect(listed.body.apps[0].hijackPolicy).toBe('strict');
      const { rows } = await gw.db.pool.query('SELECT hijack_policy FROM api_keys WHERE id = $1', [claude]);
      expect(rows).toEqual([{ hijack_policy: 'strict' }]);
      const off = await call(gw, 'PATCH', `/api/v1/connected-apps/${claude}`, {
        as: ann,
        body: { hijackPolicy: 'off' },
      });
      expect(off.body.app.hijackPolicy).toBe('off');
      await gw.runtime.deps.audit.flush();
      const audit = await gw.db.pool.query(
        "SELECT actor_user_id, target, outcome FROM audit_log WHERE kind = 'dashboard' AND tool = 'connected_app.update' ORDER BY id",
      );
      expect(audit.rows).toEqual([
        { actor_user_id: ann.userId, target: [claude, 'hijackPolicy=strict'], outcome: 'ok' },
        { actor_user_id: ann.userId, target: [claude, 'hijackPolicy=off'], outcome: 'ok' },
      ]);
      const facets = await call(gw, 'GET', '/api/v1/audit/facets', { as: ann });
      expect(facets.body.actions).toContain('connected_app.update');
    });

    it('revokes an app: listed as revoked, gone from the matrix, its refresh tokens revoked', async () => {
      const listed = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      const refresh = await oauth.issueRefreshToken({
        tenantId: acme.tenantId,
        keyId: claude,
        clientId: listed.body.apps[0].clientId,
        resource: 'http://calgate.test/api/mcp',
      });
      const revoked = await call(gw, 'POST', `/api/v1/connected-apps/${claude}/revoke`, { as: ann });
      expect(revoked.status).toBe(200);
      expect(revoked.body.app).toMatchObject({ id: claude, name: 'Claude' });
      expect(Date.parse(revoked.body.app.revokedAt)).not.toBeNaN();
      const after = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      expect(after.body.apps).toEqual([
        expect.objectContaining({ id: claude, revokedAt: revoked.body.app.revokedAt }),
      ]);
      const matrix = await call(gw, 'GET', '/api/v1/matrix', { as: ann });
      expect(matrix.body.keys.map((key: { id: string }) => key.id)).toEqual([acme.keyId]);
      expect(matrix.body.grants.some((grant: { keyId: string }) => grant.keyId === claude)).toBe(false);
      await expect(
        oauth.rotateRefreshToken(refresh, {
          clientId: listed.body.apps[0].clientId,
          resource: 'http://calgate.test/api/mcp',
        }),
      ).rejects.toThrow(/revoked/);
      const again = await call(gw, 'POST', `/api/v1/connected-apps/${claude}/revoke`, { as: ann });
      expect(again.status).toBe(200);
      expect(again.body.app.revokedAt).toBe(revoked.body.app.revokedAt);
      const bulk = await call(gw, 'POST', '/api/v1/grants/bulk', {
        as: ann,
        body: { keyId: claude, access: 'read' },
      });
      expect(bulk.status).toBe(404);
    });
  });

  describe('.error', () => {
    it('an unknown id is a 404 that names it', async () => {
      const { status, body } = await call(gw, 'POST', '/api/v1/connected-apps/key_nope/revoke', { as: ann });
      expect(status).toBe(404);
      expect(body.error.message).toBe('No connected app key_nope in this tenant.');
    });

    it('a policy that is not strict, ask or off is a 400; an unknown id a 404; nothing changes', async () => {
      const bad = await call(gw, 'PATCH', `/api/v1/connected-apps/${claude}`, {
        as: ann,
        body: { hijackPolicy: 'lax' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('use one of strict, ask, off');
      const extra = await call(gw, 'PATCH', `/api/v1/connected-apps/${claude}`, {
        as: ann,
        body: { hijackPolicy: 'ask', toolsets: ['calendar'] },
      });
      expect(extra.status).toBe(400);
      const unknown = await call(gw, 'PATCH', '/api/v1/connected-apps/key_nope', {
        as: ann,
        body: { hijackPolicy: 'ask' },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message).toBe('No connected app key_nope in this tenant.');
      const key = await call(gw, 'PATCH', `/api/v1/connected-apps/${acme.keyId}`, {
        as: ann,
        body: { hijackPolicy: 'off' },
      });
      expect(key.status).toBe(404);
      expect(key.body.error.message).toBe(`No connected app ${acme.keyId} in this tenant.`);
      const { rows } = await gw.db.pool.query(
        'SELECT id, hijack_policy FROM api_keys WHERE id = ANY($1) ORDER BY id',
        [[claude, acme.keyId]],
      );
      expect(
        Object.fromEntries(
          rows.map((row: { id: string; hijack_policy: string }) => [row.id, row.hijack_policy]),
        ),
      ).toEqual({
        [claude]: 'off',
        [acme.keyId]: 'ask',
      });
    });

    it('a revoked app keeps its policy: 409', async () => {
      const { status, body } = await call(gw, 'PATCH', `/api/v1/connected-apps/${claude}`, {
        as: ann,
        body: { hijackPolicy: 'strict' },
      });
      expect(status).toBe(409);
      expect(body.error.message).toBe(
        `Connected app ${claude} is revoked; its settings can no longer change.`,
      );
    });

    it('an API key id is not a connected app', async () => {
      const { status, body } = await call(gw, 'POST', `/api/v1/connected-apps/${acme.keyId}/revoke`, {
        as: ann,
      });
      expect(status).toBe(404);
      expect(body.error.message).toBe(`No connected app ${acme.keyId} in this tenant.`);
      const keys = await call(gw, 'GET', '/api/v1/keys', { as: ann });
      expect(keys.body.keys.find((key: { id: string }) => key.id === acme.keyId).revokedAt).toBeNull();
    });
  });

  describe('.security', () => {
    it("another tenant's app is neither listed nor revocable: 404, and it stays live", async () => {
      const listed = await call(gw, 'GET', '/api/v1/connected-apps', { as: ann });
      expect(listed.body.apps.map((app: { id: string }) => app.id)).not.toContain(foreignApp);
      const { status, body } = await call(gw, 'POST', `/api/v1/connected-apps/${foreignApp}/revoke`, {
        as: ann,
      });
      expect(status).toBe(404);
      expect(body.error.message).toBe(`No connected app ${foreignApp} in this tenant.`);
      const theirs = await call(gw, 'GET', '/api/v1/connected-apps', { as: eve });
      expect(theirs.body.apps).toEqual([expect.objectContaining({ id: foreignApp, revokedAt: null })]);
      const grant = await call(gw, 'PUT', '/api/v1/grants', {
        as: ann,
        body: { keyId: foreignApp, calendarId: work, read: true, write: false },
      });
      expect(grant.status).toBe(404);
    });

    it("another tenant's app keeps its policy: 404", async () => {
      const { status, body } = await call(gw, 'PATCH', `/api/v1/connected-apps/${foreignApp}`, {
        as: ann,
        body: { hijackPolicy: 'off' },
      });
      expect(status).toBe(404);
      expect(body.error.message).toBe(`No connected app ${foreignApp} in this tenant.`);
      const theirs = await call(gw, 'GET', '/api/v1/connected-apps', { as: eve });
      expect(theirs.body.apps[0].hijackPolicy).toBe('ask');
      const forged = await call(gw, 'PATCH', `/api/v1/connected-apps/${foreignApp}`, {
        as: eve,
        body: { hijackPolicy: 'off' },
        headers: { 'x-calgate-csrf': 'forged' },
      });
      expect(forged.status).toBe(403);
      expect((await call(gw, 'GET', '/api/v1/connected-apps', { as: eve })).body.apps[0].hijackPolicy).toBe(
        'ask',
      );
    });

    it('needs a session, and a revoke needs the CSRF token', async () => {
      expect((await call(gw, 'GET', '/api/v1/connected-apps')).status).toBe(401);
      const forged = await call(gw, 'POST', `/api/v1/connected-apps/${foreignApp}/revoke`, {
        as: eve,
        headers: { 'x-calgate-csrf': 'forged' },
      });
      expect(forged.status).toBe(403);
      const theirs = await call(gw, 'GET', '/api/v1/connected-apps', { as: eve });
      expect(theirs.body.apps[0].revokedAt).toBeNull();
    });
  });
});
