import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionFor } from './api-client.ts';
import {
  annWithTeam,
  connectGoogleAccountByConsent,
  consent,
  startTestEmulator,
  type TestEmulator,
} from './google-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-test.apps.googleusercontent.com', clientSecret: 'test-client-secret' };
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';
const TEAM = 'team@group.calendar.google.com';

interface EventsOut {
  events: { calendarId: string; summary?: string; start: { dateTime?: string } }[];
  errors?: { calendarId: string; code: string; message: string }[];
}

describe('Google accounts: OAuth connect, several accounts per key, failures reported per calendar', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let cookie: string;
  let csrf: string;
  let localCalendar: string;
  let client: Client;

  const connect = (account: string, access: 'read' | 'write') =>
    connectGoogleAccountByConsent(gw, emulator, cookie, account, access);

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [
        annWithTeam(ANN, TEAM),
        {
          email: BOB,
          timeZone: 'America/New_York',
          events: [
            {
              summary: 'Bob 10:00',
              start: { dateTime: '2026-12-01T10:00:00Z' },
              end: { dateTime: '2026-12-01T10:30:00Z' },
            },
          ],
        },
      ],
    });
    gw = await startTestGateway(emulator.env);
    tenant = await gw.seedTenant('Acme');
    localCalendar = await gw.localCalendar(tenant.tenantId, 'Local', 'UTC');
    await gw.grant(tenant.tenantId, tenant.keyId, localCalendar, { read: true, write: true });
    ({ cookie, csrf } = await sessionFor(gw, tenant.tenantId));
  });

  afterAll(async () => {
    await client?.close();
    await gw.stop();
    await emulator.close();
  });

  it('connects an account through consent with PKCE, storing only a sealed refresh token', async () => {
    const response = await connect(ANN, 'write');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(`Connected ${ANN}`);
    const { rows } = await gw.db.pool.query(
      `SELECT id, auth, status, credentials_ciphertext FROM connections WHERE tenant_id = $1 AND provider = 'google'`,
      [tenant.tenantId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ auth: 'oauth', status: 'active' });
    const stored = (await gw.runtime.connections.readCredentials(tenant.tenantId, rows[0].id)) as string;
    const refreshToken = (JSON.parse(stored) as { refreshToken: string }).refreshToken;
    expect(refreshToken.length).toBeGreaterThan(10);
    expect(rows[0].credentials_ciphertext.toString('latin1')).not.toContain(refreshToken);
    const calendars = await gw.db.pool.query(
      `SELECT c.external_id, g.can_read, g.can_write FROM calendars c JOIN grants g ON g.calendar_id = c.id
       WHERE c.connection_id = $1 ORDER BY c.external_id`,
      [rows[0].id],
    );
    expect(calendars.rows).toEqual([
      { external_id: ANN, can_read: true, can_write: true },
      { external_id: TEAM, can_read: true, can_write: true },
    ]);
  });

  it('rejects a tampered state, a replayed callback, and a callback without the session', async () => {
    const start = await fetch(`${gw.url}/oauth/google/start`, { headers: { cookie }, redirect: 'manual' });
    const back = await consent(emulator, start.headers.get('location') as string, ANN);
    const state = back.searchParams.get('state') as string;
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${state.slice(0, -3)}${state.endsWith('AAA') ? 'BBB' : 'AAA'}`);
    const forged = await fetch(`${gw.url}/oauth/google/callback${tampered.search}`, { headers: { cookie } });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/Invalid or expired/);
    const anonymous = await fetch(`${gw.url}/oauth/google/callback${back.search}`);
    expect(anonymous.status).toBe(403);
    const first = await fetch(`${gw.url}/oauth/google/callback${back.search}`, { headers: { cookie } });
    expect(first.status).toBe(200);
    expect(await first.text()).toContain(`Reconnected ${ANN}`);
    const replay = await fetch(`${gw.url}/oauth/google/callback${back.search}`, { headers: { cookie } });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toMatch(/already used/);
    const count = await gw.db.pool.query(
      `SELECT count(*)::int AS n FROM connections WHERE provider = 'google'`,
    );
    expect(count.rows[0].n).toBe(1);
  });

  it('refuses to start without a signed-in session', async () => {
    const response = await fetch(`${gw.url}/oauth/google/start`, { redirect: 'manual' });
    expect(response.status).toBe(401);
  });

  it('merges two Google accounts and a local calendar under one key by start time', async () => {
    expect((await connect(BOB, 'read')).status).toBe(200);
    client = await connectClient(gw.mcpUrl, tenant.secret);
    const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
    const list = (
      calendars.structuredContent as {
        calendars: { accountEmail: string; canWrite: boolean; connectionKind: string }[];
      }
    ).calendars;
    expect(list.map((c) => c.accountEmail).sort()).toEqual([ANN, ANN, BOB, 'local']);
    expect(list.find((c) => c.accountEmail === BOB)).toMatchObject({
      canWrite: false,
      connectionKind: 'oauth',
    });

    const result = await client.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-02T00:00:00Z' },
    });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as EventsOut;
    expect(out.events.map((e) => e.summary)).toEqual(['Ann 09:00', 'Bob 10:00', 'Team 11:00']);
    expect(out.errors).toBeUndefined();
  });

  it('reports a failing calendar in the result without hiding the others', async () => {
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 1,
      action: { kind: 'error', status: 403, reason: 'forbidden' },
    });
    const result = await client.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-02T00:00:00Z' },
    });
    const out = result.structuredContent as EventsOut;
    expect(out.events.map((e) => e.summary)).toEqual(['Ann 09:00', 'Bob 10:00']);
    expect(out.errors).toHaveLength(1);
    expect(out.errors?.[0]?.code).toBe('permission_denied');
  });

  it('retries a transient 503 twice and succeeds', async () => {
    emulator.admin.script({
      match: { op: 'events.list', calendarId: BOB },
      times: 2,
      action: { kind: 'error', status: 503 },
    });
    const result = await client.callTool({
      name: 'list_events',
      arguments: { calendarId: BOB, timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-02T00:00:00Z' },
    });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as EventsOut).events.map((e) => e.summary)).toEqual(['Bob 10:00']);
  });

  it('marks an account whose refresh token was revoked as needs_reauth, with a clear tool error', async () => {
    emulator.admin.revokeTokens({ email: BOB });
    emulator.admin.expireAccessTokens({ email: BOB });
    const result = await client.callTool({
      name: 'list_events',
      arguments: { calendarId: BOB, timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-02T00:00:00Z' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/reconnect/i);
    const { rows } = await gw.db.pool.query(`SELECT status FROM connections WHERE account_email = $1`, [BOB]);
    expect(rows[0].status).toBe('needs_reauth');
    const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
    const bob = (
      calendars.structuredContent as { calendars: { accountEmail: string; status: string }[] }
    ).calendars.find((c) => c.accountEmail === BOB);
    expect(bob?.status).toBe('needs_reauth');
    const merged = await client.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-02T00:00:00Z' },
    });
    const out = merged.structuredContent as EventsOut;
    expect(out.events.map((e) => e.summary)).toEqual(['Ann 09:00', 'Team 11:00']);
    expect(out.errors?.map((e) => e.code)).toEqual(['needs_reauth']);
  });

  it('reconnecting the account brings it back without duplicating it', async () => {
    expect((await connect(BOB, 'read')).status).toBe(200);
    const { rows } = await gw.db.pool.query(`SELECT status FROM connections WHERE account_email = $1`, [BOB]);
    expect(rows).toEqual([{ status: 'active' }]);
    const result = await client.callTool({
      name: 'list_events',
      arguments: { calendarId: BOB, timeMin: '2026-12-01T00:00:00Z' },
    });
    expect(result.isError).toBeFalsy();
  });

  it('disconnects: revokes the token and removes calendars and grants; cross-site and cross-tenant requests are refused', async () => {
    const { rows } = await gw.db.pool.query(`SELECT id FROM connections WHERE account_email = $1`, [ANN]);
    const id = rows[0].id as string;
    const crossSite = await fetch(`${gw.url}/api/v1/connections/${id}`, {
      method: 'DELETE',
      headers: { cookie },
    });
    expect(crossSite.status).toBe(403);
    const other = await sessionFor(gw, (await gw.seedTenant('Other')).tenantId);
    const foreign = await fetch(`${gw.url}/api/v1/connections/${id}`, {
      method: 'DELETE',
      headers: { cookie: other.cookie, origin: 'http://calgate.test', 'x-calgate-csrf': other.csrf },
    });
    expect(foreign.status).toBe(404);

    emulator.admin.clearRequests();
    const removed = await fetch(`${gw.url}/api/v1/connections/${id}`, {
      method: 'DELETE',
      headers: { cookie, origin: 'http://calgate.test', 'x-calgate-csrf': csrf },
    });
    expect(removed.status).toBe(200);
    expect(await removed.json()).toMatchObject({ removed: true, tokenRevoked: true });
    expect(
      emulator.admin.requests().some((r) => r.op === 'oauth.revoke' || r.path.startsWith('/revoke')),
    ).toBe(true);
    const left = await gw.db.pool.query(`SELECT count(*)::int AS n FROM calendars WHERE connection_id = $1`, [
      id,
    ]);
    expect(left.rows[0].n).toBe(0);
    const list = await (await fetch(`${gw.url}/api/v1/connections`, { headers: { cookie } })).json();
    expect(
      (list as { connections: { accountEmail: string }[] }).connections.map((c) => c.accountEmail).sort(),
    ).toEqual([BOB, 'local']);
  });
});
