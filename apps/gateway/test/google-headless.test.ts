import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GoogleEmulator, startGoogleEmulator } from '@calgate/google-emulator';
import { GOOGLE_SCOPES } from '@calgate/providers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { csrfFor } from './api-client.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'cli.apps.googleusercontent.com', clientSecret: 'cli-secret' };
const ROBOT = 'robot@calgate-test.iam.gserviceaccount.com';
const SHARED = 'shared@group.calendar.google.com';
const PRIVATE = 'private@group.calendar.google.com';

describe('service-account sharing and headless connections', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let env: Record<string, string>;
  let tenantId: string;
  let keyId: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    emulator = await startGoogleEmulator({
      seed: {
        oauthClients: [{ ...CLIENT, redirectUris: ['http://calgate.test/oauth/google/callback'] }],
        serviceAccounts: [{ email: ROBOT }],
        accounts: [
          {
            email: 'dora@example.com',
            calendars: [
              { id: SHARED, summary: 'Shared with the robot', shares: [{ email: ROBOT, role: 'writer' }] },
              { id: PRIVATE, summary: 'Not shared' },
            ],
          },
        ],
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'calgate-sa-'));
    const keyFile = join(dir, 'key.json');
    await writeFile(keyFile, JSON.stringify(emulator.admin.serviceAccountKey(ROBOT)), { mode: 0o600 });
    env = {
      GOOGLE_CLIENT_ID: CLIENT.clientId,
      GOOGLE_CLIENT_SECRET: CLIENT.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulator.url}/`,
      GOOGLE_OAUTH_URL: emulator.url,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      GOOGLE_SERVICE_ACCOUNT_KEY_FILE: keyFile,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
    gw = await startTestGateway(env);
    const tenant = await gw.seedTenant('Dora');
    tenantId = tenant.tenantId;
    keyId = tenant.keyId;
    await gw.db.pool.query(
      `INSERT INTO users (id, tenant_id, email) VALUES ('usr_dora', $1, 'dora@example.com')`,
      [tenantId],
    );
    cookie = (await gw.runtime.deps.dashboard.sessions.issue({ userId: 'usr_dora', tenantId })).split(
      ';',
    )[0] as string;
    csrf = await csrfFor(gw.url, cookie);
  });
  afterAll(async () => {
    await gw.stop();
    await emulator.close();
  });

  async function cli(...args: string[]) {
    let out = '';
    let err = '';
    const code = await main(
      [...args, '--json'],
      { ...env, DATABASE_URL: gw.db.url },
      {
        out: (t) => (out += t),
        err: (t) => (err += t),
      },
    );
    return { code, out, err };
  }

  it('shows the service-account email to share calendars with', async () => {
    const response = await fetch(`${gw.url}/api/v1/google/service-account`, { headers: { cookie } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ email: ROBOT });
    expect((await fetch(`${gw.url}/api/v1/google/service-account`)).status).toBe(401);
  });

  it('verifies access to a shared calendar and adds it; an unshared one gets a clear error', async () => {
    const denied = await fetch(`${gw.url}/api/v1/connections/service-account`, {
      method: 'POST',
      headers: {
        cookie,
        origin: 'http://calgate.test',
        'x-calgate-csrf': csrf,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ calendarId: PRIVATE, access: 'write' }),
    });
    expect(denied.status).toBe(404);
    expect(((await denied.json()) as { error: { message: string } }).error.message).toContain(
      `share it with ${ROBOT}`,
    );

    const added = await fetch(`${gw.url}/api/v1/connections/service-account`, {
      method: 'POST',
      headers: {
        cookie,
        origin: 'http://calgate.test',
        'x-calgate-csrf': csrf,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ calendarId: SHARED, access: 'write' }),
    });
    expect(added.status).toBe(200);
    const body = (await added.json()) as {
      accountEmail: string;
      calendars: { id: string; created: boolean }[];
    };
    expect(body.accountEmail).toBe(ROBOT);
    expect(body.calendars).toHaveLength(1);
    const { rows } = await gw.db.pool.query(
      `SELECT n.auth, g.can_read, g.can_write FROM calendars c JOIN connections n ON n.id = c.connection_id
       JOIN grants g ON g.calendar_id = c.id WHERE c.external_id = $1 AND g.key_id = $2`,
      [SHARED, keyId],
    );
    expect(rows).toEqual([{ auth: 'service_account', can_read: true, can_write: true }]);

    const badBody = await fetch(`${gw.url}/api/v1/connections/service-account`, {
      method: 'POST',
      headers: {
        cookie,
        origin: 'http://calgate.test',
        'x-calgate-csrf': csrf,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ calendar: SHARED }),
    });
    expect(badBody.status).toBe(400);
  });

  it('connect google-service-account from the CLI', async () => {
    const result = await cli('connect', 'google-service-account', '--calendar', SHARED, '--tenant', tenantId);
    expect(result.err).toBe('');
    expect(JSON.parse(result.out)).toMatchObject({ accountEmail: ROBOT });
  });

  it('connect google --refresh-token from the CLI reads the account and discovers its calendars', async () => {
    const tokens = emulator.admin.issueTokens({
      email: 'dora@example.com',
      offline: true,
      clientId: CLIENT.clientId,
      scopes: [...GOOGLE_SCOPES],
    });
    const result = await cli(
      'connect',
      'google',
      '--refresh-token',
      tokens.refresh_token as string,
      '--access',
      'read',
      '--tenant',
      tenantId,
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.out) as { accountEmail: string; calendars: { summary: string }[] };
    expect(out.accountEmail).toBe('dora@example.com');
    expect(out.calendars.map((c) => c.summary).sort()).toEqual(
      ['Not shared', 'Shared with the robot', 'dora@example.com'].sort(),
    );
    expect(result.out).not.toContain(tokens.refresh_token as string);

    const bad = await cli('connect', 'google', '--refresh-token', 'not-a-token', '--tenant', tenantId);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/reconnect|invalid|refresh/i);
  });
});
