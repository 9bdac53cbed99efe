import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionFor } from './api-client.ts';
import { connectGoogleAccountByConsent, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { watchKeyDrops } from './key-drops.ts';

const CLIENT = { clientId: 'reconnect.apps.googleusercontent.com', clientSecret: 'reconnect-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const SIDE = 'side@group.calendar.google.com';

interface Row {
  calendar_id: string;
  external_id: string;
  key_id: string;
  can_read: boolean;
  can_write: boolean;
}

describe('reconnecting a Google account keeps its calendars and grants', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let second: string;
  let cookie: string;

  async function connect(access: 'read' | 'write'): Promise<string> {
    const done = await connectGoogleAccountByConsent(gw, emulator, cookie, ANN, access);
    expect(done.status).toBe(200);
    return done.text();
  }

  async function grants(): Promise<Row[]> {
    const { rows } = await gw.db.pool.query<Row>(
      `SELECT c.id AS calendar_id, c.external_id, g.key_id, g.can_read, g.can_write
       FROM calendars c JOIN grants g ON g.calendar_id = c.id
       WHERE c.tenant_id = $1 ORDER BY c.external_id, g.key_id`,
      [tenant.tenantId],
    );
    return rows;
  }

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
    });
    gw = await startTestGateway(emulator.env);
    tenant = await gw.seedTenant('Acme');
    second = (await gw.runtime.keys.create(tenant.tenantId, { name: 'second' })).key.id;
    ({ cookie } = await sessionFor(gw, tenant.tenantId));
  });
  afterAll(async () => {
    await gw.stop();
    await emulator.close();
  });

  it('keeps calendar ids and hand-set grants, adds new calendars, also after needs_reauth', async () => {
    expect(await connect('read')).toContain(`Connected ${ANN}`);
    const initial = await grants();
    expect(initial.map((row) => row.external_id)).toEqual([ANN, ANN, TEAM, TEAM]);
    const primary = initial.find((row) => row.external_id === ANN)?.calendar_id as string;
    const team = initial.find((row) => row.external_id === TEAM)?.calendar_id as string;
    // The owner's own choices, unlike what a connect with 'write' would grant.
    await gw.runtime.tenancy.setGrant(tenant.tenantId, tenant.keyId, primary, { read: true, write: true });
    await gw.runtime.tenancy.setGrant(tenant.tenantId, second, team, { read: false, write: false });
    const chosen = await grants();
    expect(chosen).toHaveLength(3);

    // A calendar the account gained meanwhile.
    emulator.admin.seed({
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: SIDE, summary: 'Side' }] }],
    });
    const connecting = watchKeyDrops(gw);
    expect(await connect('write')).toContain(`Reconnected ${ANN}`);
    connecting.stop();
    // Recording the calendars dropped only this tenant's cached keys, not every tenant's.
    expect(connecting.tenants.length).toBeGreaterThan(0);
    expect(new Set(connecting.tenants)).toEqual(new Set([tenant.tenantId]));
    const after = await grants();
    expect(after.filter((row) => row.external_id !== SIDE)).toEqual(chosen);
    const side = after.filter((row) => row.external_id === SIDE);
    expect(side.map((row) => [row.key_id, row.can_read, row.can_write])).toEqual(
      [tenant.keyId, second].sort().map((key) => [key, true, true]),
    );

    // The refresh token dies; a tool call marks the account needs_reauth.
    emulator.admin.revokeTokens({ email: ANN });
    emulator.admin.expireAccessTokens({ email: ANN });
    gw.forgetKeys(tenant.tenantId);
    const client = await connectClient(gw.mcpUrl, tenant.secret);
    try {
      const drops = watchKeyDrops(gw);
      const failed = await client.callTool({ name: 'list_events', arguments: { calendarId: primary } });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toMatch(/reconnect/i);
      const { rows } = await gw.db.pool.query(`SELECT status FROM connections WHERE account_email = $1`, [
        ANN,
      ]);
      expect(rows[0].status).toBe('needs_reauth');
      // The key's next call sees the account's new status; only this tenant's cached keys went.
      const seen = await client.callTool({ name: 'list_calendars', arguments: {} });
      const statuses = (seen.structuredContent as { calendars: { id: string; status?: string }[] }).calendars;
      expect(statuses.find((c) => c.id === primary)?.status).toBe('needs_reauth');
      drops.stop();
      expect(drops.tenants.length).toBeGreaterThan(0);
      expect(new Set(drops.tenants)).toEqual(new Set([tenant.tenantId]));

      expect(await connect('read')).toContain(`Reconnected ${ANN}`);
      expect(await grants()).toEqual(after);
      const status = await gw.db.pool.query(`SELECT status FROM connections WHERE account_email = $1`, [ANN]);
      expect(status.rows[0].status).toBe('active');
      gw.forgetKeys(tenant.tenantId);
      const listed = await client.callTool({ name: 'list_events', arguments: { calendarId: primary } });
      expect(listed.isError, textOf(listed)).toBeFalsy();
      const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
      const ids = (calendars.structuredContent as { calendars: { id: string }[] }).calendars.map((c) => c.id);
      expect(ids.sort()).toEqual([...new Set(after.map((row) => row.calendar_id))].sort());
    } finally {
      await client.close();
    }
  });
});
