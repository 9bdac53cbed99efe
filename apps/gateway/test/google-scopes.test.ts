import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sessionFor } from './api-client.ts';
import { consent, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-scopes.apps.googleusercontent.com', clientSecret: 'scopes-secret' };
const ANN = 'ann@example.com';
const READONLY = 'https://www.googleapis.com/auth/calendar.readonly';
const CALENDAR = 'https://www.googleapis.com/auth/calendar';

const EVENT = {
  summary: 'Planning',
  start: { dateTime: '2027-02-01T10:00:00Z' },
  end: { dateTime: '2027-02-01T10:30:00Z' },
};

describe('least-privilege Google scopes: read-only connections and "Allow writing"', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let browser: Awaited<ReturnType<typeof sessionFor>>;
  let client: Client;

  /** /oauth/google/start?query → the emulator's consent page → Calgate's callback. */
  async function throughConsent(query: string): Promise<{ consentHtml: string; page: Response }> {
    const start = await fetch(`${gw.url}/oauth/google/start?${query}`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    expect(start.status).toBe(302);
    const authUrl = start.headers.get('location') as string;
    const consentHtml = await (await fetch(authUrl)).text();
    const back = await consent(emulator, authUrl, ANN);
    const page = await fetch(`${gw.url}${back.pathname}${back.search}`, {
      headers: { cookie: browser.cookie },
    });
    return { consentHtml, page };
  }

  async function connection(): Promise<{ id: string; scopes: string[]; writable: boolean }> {
    const { body } = await call(gw, 'GET', '/api/v1/connections', { as: browser });
    return body.connections.find((c: { accountEmail: string }) => c.accountEmail === ANN);
  }

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, { accounts: [{ email: ANN, timeZone: 'UTC' }] });
    gw = await startTestGateway(emulator.env);
    tenant = await gw.seedTenant('Acme');
    browser = await sessionFor(gw, tenant.tenantId);
  });

  afterAll(async () => {
    await client?.close();
    await gw.stop();
    await emulator.close();
  });

  it('connects read-only: Google is asked only for calendar.readonly, reads work, Write is refused', async () => {
    const { consentHtml, page } = await throughConsent('access=write&google=read');
    // The consent page lists exactly what Calgate asked for.
    const asked = [...consentHtml.matchAll(/data-scope="([^"]+)"/g)].map((m) => m[1]);
    expect(asked.sort()).toEqual(
      [READONLY, 'openid', 'https://www.googleapis.com/auth/userinfo.email'].sort(),
    );
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(`Connected ${ANN}`);
    expect(text).toContain('read-only');
    expect(text).toContain('Back to Accounts');

    const stored = await connection();
    expect(stored.writable).toBe(false);
    expect(stored.scopes).toContain(READONLY);
    expect(stored.scopes).not.toContain(CALENDAR);
    // The grant asked for Write, but the capped role only allows Read.
    const { rows } = await gw.db.pool.query(
      `SELECT c.id, c.access_role, g.can_read, g.can_write FROM calendars c JOIN grants g ON g.calendar_id = c.id
       WHERE c.connection_id = $1 AND g.key_id = $2`,
      [stored.id, tenant.keyId],
    );
    expect(rows).toEqual([
      { id: expect.any(String), access_role: 'reader', can_read: true, can_write: false },
    ]);
    const refused = await call(gw, 'PUT', '/api/v1/grants', {
      as: browser,
      body: { keyId: tenant.keyId, calendarId: rows[0].id, read: true, write: true },
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);

    emulator.admin.seed({ accounts: [{ email: ANN, timeZone: 'UTC', events: [EVENT] }] });
    client = await connectClient(gw.mcpUrl, tenant.secret);
    const listed = await client.callTool({
      name: 'list_events',
      arguments: { calendarId: rows[0].id, timeMin: '2027-02-01T00:00:00Z', timeMax: '2027-02-02T00:00:00Z' },
    });
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(textOf(listed)).toContain('Planning');
    // Writing is refused with the way out: ticking Write cannot help, upgrading the account can.
    const write = await client.callTool({
      name: 'create_event',
      arguments: { calendarId: rows[0].id, summary: 'Blocked', start: EVENT.start, end: EVENT.end },
    });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toContain('Calgate has read-only access to');
    expect(textOf(write)).toContain(ANN);
    expect(textOf(write)).toContain('Allow writing');
  });

  it('a write grant on a read-only account answers a tool error that names the account and the fix', async () => {
    const { id } = await connection();
    const { rows } = await gw.db.pool.query('SELECT id FROM calendars WHERE connection_id = $1', [id]);
    const calendarId = rows[0].id as string;
    // A Write tick from before the account was reconnected read-only (kept: grants are never
    // dropped by a reconnect); Google itself refuses the write for lack of scope.
    await gw.runtime.tenancy.setGrant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    gw.forgetKeys(tenant.tenantId);
    const result = await client.callTool({
      name: 'create_event',
      arguments: { calendarId, summary: 'Blocked', start: EVENT.start, end: EVENT.end },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`Calgate has read-only access to ${ANN}`);
    expect(textOf(result)).toContain('Accounts page');
    expect(emulator.admin.events(ANN).map((event) => event.summary)).not.toContain('Blocked');
  });

  it('"Allow writing" asks only for the added scopes, keeps calendars and grants, and writes then work', async () => {
    const before = await connection();
    const calendarsBefore = await gw.db.pool.query(
      'SELECT id FROM calendars WHERE connection_id = $1 ORDER BY id',
      [before.id],
    );
    const { consentHtml, page } = await throughConsent(`upgrade=${before.id}`);
    const asked = [...consentHtml.matchAll(/data-scope="([^"]+)"/g)].map((m) => m[1]);
    expect(asked.sort()).toEqual([CALENDAR, 'https://www.googleapis.com/auth/calendar.events'].sort());
    expect(consentHtml).toContain('You already granted');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`Writing allowed for ${ANN}`);

    const after = await connection();
    expect(after.id).toBe(before.id);
    expect(after.writable).toBe(true);
    // Incremental: the new token covers the earlier read scope too.
    expect(after.scopes).toEqual(expect.arrayContaining([READONLY, CALENDAR]));
    const calendarsAfter = await gw.db.pool.query(
      'SELECT id, access_role FROM calendars WHERE connection_id = $1 ORDER BY id',
      [before.id],
    );
    expect(calendarsAfter.rows.map((row) => row.id)).toEqual(calendarsBefore.rows.map((row) => row.id));
    expect(calendarsAfter.rows[0].access_role).toBe('owner');

    gw.forgetKeys(tenant.tenantId);
    const created = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: calendarsAfter.rows[0].id,
        summary: 'Allowed',
        start: EVENT.start,
        end: EVENT.end,
      },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
    expect(emulator.admin.events(ANN).map((event) => event.summary)).toContain('Allowed');
  });

  it('answers callback errors with a styled page that leads back to Accounts', async () => {
    const start = await fetch(`${gw.url}/oauth/google/start?google=read`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
    const denied = await fetch(
      `${gw.url}/oauth/google/callback?error=access_denied&state=${encodeURIComponent(state)}`,
      { headers: { cookie: browser.cookie } },
    );
    expect(denied.status).toBe(400);
    expect(denied.headers.get('content-type')).toContain('text/html');
    const html = await denied.text();
    expect(html).toContain('Google access was not granted');
    expect(html).toMatch(/<link rel="stylesheet" href="\/assets\/[\w.-]+\.css">|<title>/);
    expect(html).toContain('href="/accounts"');
    const mismatch = await fetch(`${gw.url}/oauth/google/callback?state=not-a-state&code=x`, {
      headers: { cookie: browser.cookie },
    });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain('Back to Accounts');
  });
});

describe('Google not configured', () => {
  let gw: TestGateway;
  let browser: Awaited<ReturnType<typeof sessionFor>>;

  beforeAll(async () => {
    gw = await startTestGateway({});
    const tenant = await gw.seedTenant('Acme');
    browser = await sessionFor(gw, tenant.tenantId);
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('says so on the Accounts API and renders styled pages, never JSON, where a browser lands', async () => {
    const status = await call(gw, 'GET', '/api/v1/google/status', { as: browser });
    expect(status.body).toMatchObject({ configured: false });
    expect(status.body.fix).toContain('/oauth/google/callback');
    expect(status.body.fix).toContain('docs/accounts/google.md');

    for (const path of ['/oauth/google/start?google=read', '/oauth/google/callback?state=x&code=y']) {
      const response = await fetch(`${gw.url}${path}`, {
        headers: { cookie: browser.cookie },
        redirect: 'manual',
      });
      expect(response.status, path).toBe(503);
      expect(response.headers.get('content-type'), path).toContain('text/html');
      expect(response.headers.get('content-security-policy'), path).toContain("style-src 'self'");
      const html = await response.text();
      expect(html).toContain('Google is not configured');
      expect(html).toContain('GOOGLE_CLIENT_ID');
      expect(html).toContain('href="/accounts"');
    }
    const anonymous = await fetch(`${gw.url}/oauth/google/start`, { redirect: 'manual' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toContain('text/html');
  });
});
