/**
 * The outbound policy when a CalDAV account is connected, from the CLI (`calgate connect caldav`)
 * and the dashboard API (POST /api/v1/connections/caldav): a loopback server is refused unless
 * OUTBOUND_ALLOW_PRIVATE=true, and plain http to a public host is refused whatever that setting
 * says (the password would cross the internet in clear); each refusal names the setting and
 * saves nothing. Host names are resolved by a resolver given to the gateway and the CLI, so that
 * `dav.example.com` is a public address without any network.
 */
import { randomBytes } from 'node:crypto';
import { type HostResolver, systemResolver } from '@calgate/scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRadicale, type TestCaldavServer } from '../../../packages/providers/test/caldav/servers.ts';
import { main } from '../src/cli.ts';
import { csrfFor } from './api-client.ts';
import { HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

/** `dav.example.com` is a public address here; every other name is the system's. */
const resolveHost: HostResolver = async (host) =>
  host === 'dav.example.com' ? [{ address: '93.184.216.34', family: 4 }] : systemResolver(host);

describe('connecting a CalDAV account: the outbound policy', () => {
  let server: TestCaldavServer;
  let strict: TestGateway;
  let lan: TestGateway;
  let strictEnv: Record<string, string>;
  let lanEnv: Record<string, string>;
  let tenantId = '';

  const cli = async (env: Record<string, string>, url: string) => {
    let out = '';
    let err = '';
    const code = await main(
      ['connect', 'caldav', '--tenant', tenantId, '--url', url, '--username', server.username, '--json'],
      { ...env, DATABASE_URL: strict.db.url, CALDAV_PASSWORD: server.password },
      { out: (t) => (out += t), err: (t) => (err += t), resolveHost },
    );
    return { code, out, err };
  };
  const dashboard = async (gw: TestGateway, url: string) => {
    const cookie = (await gw.runtime.deps.dashboard.sessions.issue({ userId: 'usr_out', tenantId })).split(
      ';',
    )[0] as string;
    const response = await fetch(`${gw.url}/api/v1/connections/caldav`, {
      method: 'POST',
      headers: {
        cookie,
        origin: 'http://calgate.test',
        'x-calgate-csrf': await csrfFor(gw.url, cookie),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ url, username: server.username, password: server.password }),
    });
    return { status: response.status, text: JSON.stringify(await response.json()) };
  };
  const saved = async () =>
    (await strict.runtime.deps.dashboard.connections.list(tenantId)).filter((c) => c.provider === 'caldav');

  beforeAll(async () => {
    server = await startRadicale();
    await server.makeCalendar(`${new URL(server.home).pathname}work/`, { displayName: 'Work' });
    const key = randomBytes(32).toString('base64');
    strictEnv = { ...HIGH_RATE_LIMITS, ENCRYPTION_KEY: key };
    lanEnv = { ...strictEnv, OUTBOUND_ALLOW_PRIVATE: 'true' };
    strict = await startTestGateway(strictEnv, { resolveHost });
    lan = await startTestGateway(lanEnv, { db: strict.db, resolveHost });
    tenantId = (await strict.seedTenant('Outbound')).tenantId;
    await strict.db.pool.query(
      `INSERT INTO users (id, tenant_id, email) VALUES ('usr_out', $1, 'out@example.com')`,
      [tenantId],
    );
  }, 60_000);

  afterAll(async () => {
    await lan?.stop();
    await strict?.stop();
    await server?.stop();
  });

  it('refuses a loopback server without OUTBOUND_ALLOW_PRIVATE, naming it, from the CLI and the dashboard', async () => {
    const fromCli = await cli(strictEnv, server.root);
    expect(fromCli.code).not.toBe(0);
    expect(fromCli.err).toContain('OUTBOUND_ALLOW_PRIVATE=true');
    expect(fromCli.err).toMatch(/loopback/);
    const fromDashboard = await dashboard(strict, server.root);
    expect(fromDashboard.status).toBeGreaterThanOrEqual(400);
    expect(fromDashboard.text).toContain('OUTBOUND_ALLOW_PRIVATE=true');
    expect(fromDashboard.text).not.toContain(server.password);
    expect(await saved()).toEqual([]);
  });

  it.each([
    ['without OUTBOUND_ALLOW_PRIVATE', () => ({ env: strictEnv, gw: strict })],
    ['with OUTBOUND_ALLOW_PRIVATE=true', () => ({ env: lanEnv, gw: lan })],
  ])('refuses plain http to a public host %s, saying https, naming the setting', async (_label, pick) => {
    const { env, gw } = pick();
    const fromCli = await cli(env, 'http://dav.example.com/');
    expect(fromCli.code).not.toBe(0);
    expect(fromCli.err).toMatch(/must use https/);
    expect(fromCli.err).toContain('93.184.216.34');
    expect(fromCli.err).toContain('OUTBOUND_ALLOW_PRIVATE=true');
    const fromDashboard = await dashboard(gw, 'http://dav.example.com/');
    expect(fromDashboard.status).toBeGreaterThanOrEqual(400);
    expect(fromDashboard.status).toBeLessThan(500);
    expect(fromDashboard.text).toMatch(/must use https/);
    expect(fromDashboard.text).toContain('OUTBOUND_ALLOW_PRIVATE=true');
    expect(await saved()).toEqual([]);
  });

  it('connects the loopback server over plain http with OUTBOUND_ALLOW_PRIVATE=true', async () => {
    const fromCli = await cli(lanEnv, server.root);
    expect(fromCli.code, fromCli.err).toBe(0);
    expect((JSON.parse(fromCli.out) as { calendars: { summary: string }[] }).calendars).toEqual([
      expect.objectContaining({ summary: 'Work' }),
    ]);
    expect(await saved()).toHaveLength(1);
  });
});
