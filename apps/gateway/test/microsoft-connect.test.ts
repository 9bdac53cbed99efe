import { MICROSOFT_WRITE_SCOPES } from '@calgate/providers';
import type { ConnectionRepository } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { type Body, type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { watchKeyDrops } from './key-drops.ts';
import {
  connectionsSealedFor,
  connectMicrosoftByConsent,
  MS_CLIENT,
  startMicrosoftTestEmulator,
  type TestMicrosoftEmulator,
  withdrawMicrosoftConsent,
} from './microsoft-fixture.ts';

const MEG = 'meg@contoso.example';
const UPN_ONLY = 'raj@contoso.onmicrosoft.example';
const ANN = 'ann@contoso.example';
/** More calendars than Graph's first page of /me/calendars holds. */
const MANY = Array.from({ length: 12 }, (_, i) => ({ name: `Project ${String(i + 1).padStart(2, '0')}` }));

interface Row {
  summary: string;
  external_id: string;
  key_id: string | null;
  can_read: boolean | null;
  can_write: boolean | null;
}

describe('Microsoft accounts: calgate connect microsoft and Connect Microsoft', () => {
  let emulator: TestMicrosoftEmulator;
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let other: string;
  let browser: Browser;
  let connections: ConnectionRepository;

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(
      [...args, '--tenant', tenant.tenantId, '--json'],
      { ...emulator.env, DATABASE_URL: gw.db.url },
      { out: (text) => (out += text), err: (text) => (err += text) },
    );
    return { code, out, err };
  }

  async function rows(email: string): Promise<Row[]> {
    const { rows } = await gw.db.pool.query<Row>(
      `SELECT c.summary, c.external_id, g.key_id, g.can_read, g.can_write
       FROM calendars c JOIN connections n ON n.id = c.connection_id
       LEFT JOIN grants g ON g.calendar_id = c.id
       WHERE c.tenant_id = $1 AND n.account_email = $2 ORDER BY c.summary, g.key_id`,
      [tenant.tenantId, email],
    );
    return rows;
  }

  async function stored(connectionId: string): Promise<{ refreshToken: string; accessToken?: string }> {
    return JSON.parse((await connections.readCredentials(tenant.tenantId, connectionId)) ?? '{}');
  }

  beforeAll(async () => {
    emulator = await startMicrosoftTestEmulator({
      users: [
        {
          email: MEG,
          timeZone: 'W. Europe Standard Time',
          calendars: [{ name: 'Calendar', isDefaultCalendar: true }, ...MANY],
        },
        { email: UPN_ONLY, hasMail: false },
        {
          email: ANN,
          calendars: [
            { name: 'Calendar', isDefaultCalendar: true },
            { name: 'Team', owner: { address: 'lead@contoso.example' }, canEdit: false },
          ],
        },
      ],
    });
    gw = await startTestGateway(emulator.env);
    tenant = await gw.seedTenant('Contoso');
    other = (await gw.runtime.keys.create(tenant.tenantId, { name: 'other' })).key.id;
    browser = await sessionFor(gw, tenant.tenantId);
    connections = connectionsSealedFor(gw, emulator);
  });
  afterAll(async () => {
    await gw?.stop();
    await emulator?.close();
  });

  it('CLI: refreshes the token, stores the new one sealed, reads /me and every page of /me/calendars, grants the chosen keys', async () => {
    emulator.admin.setPaging({ shortPages: true });
    const given = emulator.refreshToken(MEG);
    const result = await cli(
      'connect',
      'microsoft',
      '--refresh-token',
      given,
      '--access',
      'read',
      '--keys',
      tenant.keyId,
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.out) as Body;
    expect(out).toMatchObject({ accountEmail: MEG, reconnected: false, writable: false });
    expect(out.connectionId).toMatch(/^con_/);
    expect(out.scopes).toEqual(expect.arrayContaining(['Calendars.Read', 'User.Read']));
    expect(out.calendars).toHaveLength(13);
    expect(out.calendars.map((c: Body) => c.summary).sort()).toEqual(
      ['Calendar', ...MANY.map((c) => c.name)].sort(),
    );
    for (const calendar of out.calendars) {
      expect(Object.keys(calendar).sort()).toEqual(['created', 'externalId', 'id', 'summary']);
      expect(calendar).toMatchObject({ created: true });
      expect(calendar.id).toMatch(/^cal_/);
    }
    // The token given was retired by the refresh; the new one is what Calgate keeps, sealed.
    const credentials = await stored(out.connectionId);
    expect(credentials.refreshToken).not.toBe(given);
    expect(emulator.admin.requests({ op: 'oauth.token' }).length > 0).toBe(true);
    const raw = await gw.db.pool.query<{ credentials: Buffer }>(
      'SELECT credentials_ciphertext AS credentials FROM connections WHERE id = $1',
      [out.connectionId],
    );
    expect(raw.rows[0]?.credentials.toString('latin1')).not.toContain(credentials.refreshToken);
    expect(result.out).not.toContain(given);
    expect(result.out).not.toContain(credentials.refreshToken);
    // The connection as stored: provider, auth, scopes; read-only caps every role.
    const connection = await connections.get(tenant.tenantId, out.connectionId);
    expect(connection).toMatchObject({
      provider: 'microsoft',
      auth: 'oauth',
      accountEmail: MEG,
      status: 'active',
    });
    const granted = await rows(MEG);
    expect(granted.filter((row) => row.key_id === tenant.keyId)).toHaveLength(13);
    expect(granted.filter((row) => row.key_id === other)).toHaveLength(0);
    expect(granted.every((row) => row.can_write !== true)).toBe(true);
    const zones = await gw.db.pool.query<{ time_zone: string; access_role: string }>(
      'SELECT DISTINCT time_zone, access_role FROM calendars WHERE connection_id = $1',
      [out.connectionId],
    );
    expect(zones.rows).toEqual([{ time_zone: 'UTC', access_role: 'reader' }]);
    emulator.admin.setPaging({ shortPages: false });

    // The key sees them in list_calendars.
    gw.forgetKeys(tenant.tenantId);
    const client = await connectClient(gw.mcpUrl, tenant.secret);
    const listed = textOf(await client.callTool({ name: 'list_calendars', arguments: {} }));
    await client.close();
    expect(listed).toContain('Project 12');
    expect(listed).toContain(MEG);

    // Again with the stored (rotated) token: the same connection, reconnected, nothing new granted.
    const again = await cli(
      'connect',
      'microsoft',
      '--refresh-token',
      credentials.refreshToken,
      '--access',
      'write',
    );
    expect(again.err).toBe('');
    const second = JSON.parse(again.out) as Body;
    expect(second).toMatchObject({ connectionId: out.connectionId, reconnected: true });
    expect(second.calendars.every((c: Body) => c.created === false)).toBe(true);
    expect(await rows(MEG)).toEqual(granted);
  });

  it('CLI: an account without a mail address is named by its userPrincipalName; write scopes give Write', async () => {
    const result = await cli(
      'connect',
      'microsoft',
      '--refresh-token',
      emulator.refreshToken(UPN_ONLY, MICROSOFT_WRITE_SCOPES),
      '--access',
      'write',
    );
    expect(result.err).toBe('');
    const out = JSON.parse(result.out) as Body;
    expect(out).toMatchObject({ accountEmail: UPN_ONLY, writable: true });
    expect(
      (await rows(UPN_ONLY)).map((row) => [row.summary, row.key_id, row.can_read, row.can_write]).sort(),
    ).toEqual(
      [
        ['Calendar', other, true, true],
        ['Calendar', tenant.keyId, true, true],
      ].sort(),
    );
  });

  it('CLI: a refused refresh token is said plainly, and nothing is stored', async () => {
    const before = (await connections.list(tenant.tenantId)).length;
    const bad = await cli('connect', 'microsoft', '--refresh-token', 'not-a-refresh-token');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('invalid_grant');
    expect(bad.err).not.toContain('not-a-refresh-token');
    expect(bad.out).toBe('');
    expect((await connections.list(tenant.tenantId)).length).toBe(before);
    const missing = await cli('connect', 'microsoft', '--access', 'read');
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain('--refresh-token is required.');
  });

  it('Connect Microsoft: authorization code with PKCE (S256) and least-privilege scopes, then the account', async () => {
    const drops = watchKeyDrops(gw);
    const { authorize, callback, response } = await connectMicrosoftByConsent(
      gw,
      browser.cookie,
      `access=read&account=${encodeURIComponent(ANN)}`,
    );
    drops.stop();
    // Recording the account's calendars dropped only this tenant's cached keys.
    expect(drops.tenants.length).toBeGreaterThan(0);
    expect(new Set(drops.tenants)).toEqual(new Set([tenant.tenantId]));
    expect(`${authorize.origin}${authorize.pathname}`).toBe(
      `${emulator.loginUrl}/common/oauth2/v2.0/authorize`,
    );
    expect(authorize.searchParams.get('client_id')).toBe(MS_CLIENT.clientId);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('redirect_uri')).toBe('http://calgate.test/oauth/microsoft/callback');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('scope')?.split(' ').sort()).toEqual(
      ['Calendars.Read', 'User.Read', 'offline_access'].sort(),
    );
    const html = await response.text();
    expect(response.status, html).toBe(200);
    expect(html).toContain(`Connected ${ANN}`);
    expect(html).toContain('Team');
    const { body } = await call(gw, 'GET', '/api/v1/connections', { as: browser });
    const ann = body.connections.find((c: Body) => c.accountEmail === ANN);
    expect(ann).toMatchObject({ provider: 'microsoft', status: 'active', writable: false });
    expect(ann.calendars.map((c: Body) => [c.summary, c.accessRole]).sort()).toEqual([
      ['Calendar', 'reader'],
      ['Team', 'reader'],
    ]);

    // The same callback again (a replayed code and state) changes nothing.
    const replay = await fetch(`${gw.url}${callback.pathname}${callback.search}`, {
      headers: { cookie: browser.cookie },
    });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('This link was already used');

    // Writing asks for Calendars.ReadWrite instead of Calendars.Read.
    const start = await fetch(`${gw.url}/oauth/microsoft/start?access=write`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    const scopes = new URL(start.headers.get('location') as string).searchParams.get('scope')?.split(' ');
    expect(scopes?.sort()).toEqual(['Calendars.ReadWrite', 'User.Read', 'offline_access'].sort());
    // The dashboard's audit log records the connection, without the code.
    const connects = async () =>
      (await call(gw, 'GET', '/api/v1/audit?tool=account.connect', { as: browser })).body.entries as Body[];
    await expect.poll(async () => (await connects()).map((entry) => entry.outcome)).toContain('ok');
    expect(JSON.stringify(await connects())).not.toContain(callback.searchParams.get('code') as string);
    // Secrets never reach the log.
    const logs = gw.logs.join('\n');
    expect(logs).not.toContain(callback.searchParams.get('code') as string);
    expect(logs).not.toContain(MS_CLIENT.clientSecret);
    const annCredentials = await stored(ann.id);
    expect(logs).not.toContain(annCredentials.refreshToken);
    expect(logs).not.toContain(annCredentials.accessToken as string);
  });

  it('Connect Microsoft: forged or foreign state, a code Microsoft refuses, and a cancelled consent are refused plainly', async () => {
    const before = await gw.db.pool.query('SELECT id, status FROM connections ORDER BY id');
    const forged = await fetch(
      `${gw.url}/oauth/microsoft/callback?state=eyJhbGciOiJIUzI1NiJ9.e30.x&code=abc`,
      {
        headers: { cookie: browser.cookie },
      },
    );
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('Invalid or expired request');

    // A state from Google's flow is not accepted by Microsoft's callback.
    const google = await fetch(`${gw.url}/oauth/google/start?access=read`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    expect(google.status).toBe(503);

    // A state started by another session.
    const stranger = await sessionFor(gw, (await gw.seedTenant('Other')).tenantId);
    const start = await fetch(`${gw.url}/oauth/microsoft/start?access=read`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
    const foreign = await fetch(`${gw.url}/oauth/microsoft/callback?state=${state}&code=abc`, {
      headers: { cookie: stranger.cookie },
    });
    expect(foreign.status).toBe(403);

    // The right session, but a code Microsoft never issued: its refusal, said plainly.
    const refused = await fetch(`${gw.url}/oauth/microsoft/callback?state=${state}&code=forged-code`, {
      headers: { cookie: browser.cookie },
    });
    const text = await refused.text();
    expect(refused.status).toBe(400);
    expect(text).toContain('Microsoft refused the sign-in (invalid_grant: AADSTS');
    expect(text).not.toContain('forged-code');

    const cancelledStart = await fetch(`${gw.url}/oauth/microsoft/start?access=read`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    const cancelledState = new URL(cancelledStart.headers.get('location') as string).searchParams.get(
      'state',
    );
    const cancelled = await fetch(
      `${gw.url}/oauth/microsoft/callback?state=${cancelledState}&error=access_denied&error_description=AADSTS65004%3A+User+declined`,
      { headers: { cookie: browser.cookie } },
    );
    expect(cancelled.status).toBe(400);
    expect(await cancelled.text()).toContain('Microsoft access was not granted');

    const unsigned = await fetch(`${gw.url}/oauth/microsoft/start?access=read`, { redirect: 'manual' });
    expect(unsigned.status).toBe(401);
    expect((await gw.db.pool.query('SELECT id, status FROM connections ORDER BY id')).rows).toEqual(
      before.rows,
    );
  });

  it('token endpoint failures are said plainly: an unavailable sign-in service, a wrong client secret', async () => {
    const before = await gw.db.pool.query('SELECT id, status, scopes FROM connections ORDER BY id');
    const start = await fetch(
      `${gw.url}/oauth/microsoft/start?access=read&account=${encodeURIComponent(ANN)}`,
      {
        headers: { cookie: browser.cookie },
        redirect: 'manual',
      },
    );
    const back = await fetch(start.headers.get('location') as string, { redirect: 'manual' });
    const callback = new URL(back.headers.get('location') as string);
    emulator.admin.fail({ op: 'oauth.token' }, { kind: 'error', status: 503 });
    const unavailable = await fetch(`${gw.url}${callback.pathname}${callback.search}`, {
      headers: { cookie: browser.cookie },
    });
    expect(unavailable.status).toBe(502);
    expect(await unavailable.text()).toContain('Microsoft&#39;s sign-in service is unavailable (HTTP 503');

    let err = '';
    const code = await main(
      ['connect', 'microsoft', '--refresh-token', emulator.refreshToken(MEG), '--tenant', tenant.tenantId],
      { ...emulator.env, MICROSOFT_CLIENT_SECRET: 'not-the-secret', DATABASE_URL: gw.db.url },
      { out: () => {}, err: (text) => (err += text) },
    );
    expect(code).toBe(1);
    expect(err).toContain("Microsoft rejected Calgate's app registration (invalid_client)");
    expect(err).not.toContain('not-the-secret');
    expect((await gw.db.pool.query('SELECT id, status, scopes FROM connections ORDER BY id')).rows).toEqual(
      before.rows,
    );
  });

  it('reconnects after invalid_grant: needs_reauth shown, Reconnect signs in as the account, calendars and grants kept', async () => {
    const { body } = await call(gw, 'GET', '/api/v1/connections', { as: browser });
    const ann = body.connections.find((c: Body) => c.accountEmail === ANN);
    const grantsBefore = await rows(ANN);
    // Consent withdrawn at Microsoft: the next refresh is answered invalid_grant.
    await withdrawMicrosoftConsent(emulator, connections, tenant.tenantId, ann.id, ANN);
    const after = (await call(gw, 'GET', '/api/v1/connections', { as: browser })).body.connections.find(
      (c: Body) => c.id === ann.id,
    );
    expect(after.status).toBe('needs_reauth');

    const { authorize, response } = await connectMicrosoftByConsent(
      gw,
      browser.cookie,
      `reconnect=${ann.id}`,
    );
    expect(authorize.searchParams.get('login_hint')).toBe(ANN);
    expect(authorize.searchParams.get('scope')).toContain('Calendars.Read');
    const html = await response.text();
    expect(response.status, html).toBe(200);
    expect(html).toContain(`Reconnected ${ANN}`);
    const back = (await call(gw, 'GET', '/api/v1/connections', { as: browser })).body.connections.find(
      (c: Body) => c.id === ann.id,
    );
    expect(back.status).toBe('active');
    expect(await rows(ANN)).toEqual(grantsBefore);

    // Reconnecting one account with another account's sign-in is refused, and nothing changes.
    const before = await gw.db.pool.query('SELECT id, account_email, status FROM connections ORDER BY id');
    await expect(
      gw.runtime.deps.dashboard.microsoft.connectOAuth(
        tenant.tenantId,
        { refreshToken: emulator.refreshToken(MEG) },
        { access: 'none', keyIds: [] },
        ANN,
      ),
    ).rejects.toThrow(
      `Microsoft signed in ${MEG}, but reconnecting ${ANN} was asked; nothing changed. Reconnect again and choose ${ANN} on Microsoft's page.`,
    );
    expect(
      (await gw.db.pool.query('SELECT id, account_email, status FROM connections ORDER BY id')).rows,
    ).toEqual(before.rows);
  });

  it('disconnect removes the connection with its credentials, calendars and grants', async () => {
    const { body } = await call(gw, 'GET', '/api/v1/connections', { as: browser });
    const ann = body.connections.find((c: Body) => c.accountEmail === ANN);
    expect((await rows(ANN)).length).toBeGreaterThan(0);
    const drops = watchKeyDrops(gw);
    const removed = await call(gw, 'DELETE', `/api/v1/connections/${ann.id}`, { as: browser });
    drops.stop();
    expect(removed.status).toBe(200);
    // Only this tenant's cached keys were dropped, not every tenant's.
    expect(drops.tenants.length).toBeGreaterThan(0);
    expect(new Set(drops.tenants)).toEqual(new Set([tenant.tenantId]));
    expect(removed.body).toEqual({ id: ann.id, removed: true, tokenRevoked: false });
    expect(await rows(ANN)).toEqual([]);
    expect(await connections.get(tenant.tenantId, ann.id)).toBeNull();
    const grants = await gw.db.pool.query(
      `SELECT g.* FROM grants g JOIN calendars c ON c.id = g.calendar_id WHERE c.connection_id = $1`,
      [ann.id],
    );
    expect(grants.rows).toEqual([]);
    const again = await call(gw, 'DELETE', `/api/v1/connections/${ann.id}`, { as: browser });
    expect(again.status).toBe(404);
  });
});

describe('Microsoft not configured', () => {
  let gw: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    gw = await startTestGateway();
    browser = await sessionFor(gw, (await gw.seedTenant('Plain')).tenantId);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('Connect Microsoft is off with a clear message naming what to set and the redirect URI', async () => {
    const status = await call(gw, 'GET', '/api/v1/microsoft/status', { as: browser });
    expect(status.body).toEqual({
      configured: false,
      reason:
        'Connecting Microsoft accounts is turned off on this Calgate: MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET are not set.',
      fix: expect.stringContaining('http://calgate.test/oauth/microsoft/callback'),
    });
    const start = await fetch(`${gw.url}/oauth/microsoft/start?access=read`, {
      headers: { cookie: browser.cookie },
      redirect: 'manual',
    });
    expect(start.status).toBe(503);
    expect(await start.text()).toContain('MICROSOFT_CLIENT_ID');
  });

  it('calgate connect microsoft says what is missing', async () => {
    let err = '';
    const code = await main(
      ['connect', 'microsoft', '--refresh-token', 'anything', '--json'],
      { DATABASE_URL: gw.db.url, ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') },
      { out: () => {}, err: (text) => (err += text) },
    );
    expect(code).toBe(1);
    expect(err).toContain('MICROSOFT_CLIENT_ID');
  });
});
