import { type GoogleEmulator, startGoogleEmulator } from '@calgate/google-emulator';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapFirstRun } from '../src/bootstrap.ts';
import { type Browser, call, sessionFor } from './api-client.ts';
import { consent } from './google-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'defaults.apps.googleusercontent.com', clientSecret: 'defaults-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';

interface Listed {
  id: string;
  summary: string;
  accountEmail: string;
  primary: boolean;
  default: boolean;
  timeZone: string;
}

async function listCalendars(client: Client): Promise<{ calendars: Listed[]; message?: string }> {
  const result = await client.callTool({ name: 'list_calendars', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as { calendars: Listed[]; message?: string };
}

async function createAt10(client: Client, summary: string): Promise<{ calendarId: string; eventId: string }> {
  const result = await client.callTool({
    name: 'create_event',
    arguments: {
      calendarId: 'primary',
      summary,
      start: { dateTime: '2027-03-01T10:00:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2027-03-01T10:30:00', timeZone: 'Europe/Berlin' },
    },
  });
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as { calendarId: string; eventId: string };
}

async function zoneOfNow(client: Client): Promise<{ timeZone: string; utcOffset: string }> {
  const result = await client.callTool({ name: 'get_current_time', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as { timeZone: string; utcOffset: string };
}

describe('per-key default calendar and time zone', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;
  let firstRun: NonNullable<Awaited<ReturnType<typeof bootstrapFirstRun>>>;
  let owner: Browser;
  let notes: string;
  let pinned: { id: string; secret: string };
  let annPrimary: string;
  const clients: Client[] = [];

  async function client(secret: string): Promise<Client> {
    const connected = await connectClient(gw.mcpUrl, secret);
    clients.push(connected);
    return connected;
  }

  async function keyView(as: Browser, keyId: string) {
    const { body } = await call(gw, 'GET', '/api/v1/keys', { as });
    return body.keys.find((key: { id: string }) => key.id === keyId);
  }

  beforeAll(async () => {
    emulator = await startGoogleEmulator({
      seed: {
        oauthClients: [{ ...CLIENT, redirectUris: ['http://calgate.test/oauth/google/callback'] }],
        accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
      },
    });
    gw = await startTestGateway({
      GOOGLE_CLIENT_ID: CLIENT.clientId,
      GOOGLE_CLIENT_SECRET: CLIENT.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulator.url}/`,
      GOOGLE_OAUTH_URL: emulator.url,
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    const made = await bootstrapFirstRun(gw.runtime);
    if (made === undefined) {
      throw new Error('the test database already had a tenant');
    }
    firstRun = made;
    owner = await sessionFor(gw, firstRun.tenantId);
    // A second key whose owner chose its default by hand, before any Google account.
    notes = await gw.localCalendar(firstRun.tenantId, 'Notes', 'Asia/Tokyo');
    const created = await gw.runtime.keys.create(firstRun.tenantId, { name: 'pinned' });
    pinned = { id: created.key.id, secret: created.secret };
    await gw.grant(firstRun.tenantId, pinned.id, notes, { read: true, write: true });
    await gw.grant(firstRun.tenantId, pinned.id, firstRun.calendarId, { read: true, write: true });
    const chosen = await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, {
      as: owner,
      body: { defaultCalendarId: notes },
    });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);

    const start = await fetch(`${gw.url}/oauth/google/start?access=write`, {
      headers: { cookie: owner.cookie },
      redirect: 'manual',
    });
    const back = await consent(emulator, start.headers.get('location') as string, ANN);
    const done = await fetch(`${gw.url}${back.pathname}${back.search}`, {
      headers: { cookie: owner.cookie },
    });
    expect(await done.text()).toContain(`Connected ${ANN}`);
    const { rows } = await gw.db.pool.query<{ id: string }>(
      `SELECT id FROM calendars WHERE tenant_id = $1 AND external_id = $2`,
      [firstRun.tenantId, ANN],
    );
    annPrimary = rows[0]?.id as string;
  });

  afterAll(async () => {
    await Promise.all(clients.map((connected) => connected.close().catch(() => {})));
    await gw?.stop();
    await emulator?.close();
  });

  it("(a) after Google is connected, the first-run key's 'primary' is the Google primary, not the first-run calendar", async () => {
    const first = await client(firstRun.secret);
    const { calendars } = await listCalendars(first);
    expect(calendars.map((calendar) => calendar.summary).sort()).toEqual(['Calgate', 'Team', ANN].sort());
    const defaults = calendars.filter((calendar) => calendar.default);
    expect(defaults).toEqual([expect.objectContaining({ id: annPrimary, accountEmail: ANN, primary: true })]);

    const created = await createAt10(first, 'Call with Bob');
    expect(created.calendarId).toBe(annPrimary);
    expect(emulator.admin.events(ANN).map((event) => event.summary)).toContain('Call with Bob');
    const local = await first.callTool({
      name: 'list_events',
      arguments: { calendarId: firstRun.calendarId },
    });
    expect(JSON.stringify(local.structuredContent)).not.toContain('Call with Bob');
    // No zone of its own: the default calendar's.
    expect((await zoneOfNow(first)).timeZone).toBe('Europe/Berlin');
  });

  it('(b) a default chosen by hand is kept after connecting Google', async () => {
    expect(await keyView(owner, pinned.id)).toMatchObject({ defaultCalendarId: notes, timeZone: null });
    const agent = await client(pinned.secret);
    const { calendars } = await listCalendars(agent);
    expect(calendars.filter((calendar) => calendar.default).map((calendar) => calendar.id)).toEqual([notes]);
    expect(calendars.map((calendar) => calendar.summary)).toContain(ANN);
    expect((await createAt10(agent, 'Pinned call')).calendarId).toBe(notes);
    expect(emulator.admin.events(ANN).map((event) => event.summary)).not.toContain('Pinned call');
    expect((await zoneOfNow(agent)).timeZone).toBe('Asia/Tokyo');
  });

  it('a key given calendars after the account was connected also defaults to the Google primary', async () => {
    const later = await call(gw, 'POST', '/api/v1/keys', { as: owner, body: { name: 'later' } });
    const keyId = later.body.key.id as string;
    for (const calendarId of [firstRun.calendarId, annPrimary]) {
      const granted = await call(gw, 'PUT', '/api/v1/grants', {
        as: owner,
        body: { keyId, calendarId, read: true, write: true },
      });
      expect(granted.status).toBe(200);
    }
    const agent = await client(later.body.secret);
    const { calendars } = await listCalendars(agent);
    expect(calendars.filter((calendar) => calendar.default).map((calendar) => calendar.id)).toEqual([
      annPrimary,
    ]);
    expect((await createAt10(agent, 'Later call')).calendarId).toBe(annPrimary);
    // Choosing the first-run calendar by hand is respected too.
    await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, {
      as: owner,
      body: { defaultCalendarId: firstRun.calendarId },
    });
    expect((await createAt10(agent, 'Local call')).calendarId).toBe(firstRun.calendarId);
    // A default the key can no longer read falls back to the automatic choice.
    await call(gw, 'PUT', '/api/v1/grants', {
      as: owner,
      body: { keyId, calendarId: firstRun.calendarId, read: false, write: false },
    });
    const after = await listCalendars(agent);
    expect(after.calendars.filter((calendar) => calendar.default).map((calendar) => calendar.id)).toEqual([
      annPrimary,
    ]);
  });

  it("(c) a key's time zone is what get_current_time answers in; cleared, the default calendar's again", async () => {
    const first = await client(firstRun.secret);
    const set = await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, {
      as: owner,
      body: { timeZone: 'Asia/Kathmandu' },
    });
    expect(set.status).toBe(200);
    expect(set.body.key).toMatchObject({ id: firstRun.keyId, timeZone: 'Asia/Kathmandu' });
    const now = await zoneOfNow(first);
    expect(now).toMatchObject({ timeZone: 'Asia/Kathmandu', utcOffset: '+05:45' });
    const other = await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, {
      as: owner,
      body: { timeZone: ' America/New_York ' },
    });
    expect(other.body.key.timeZone).toBe('America/New_York');
    expect((await zoneOfNow(first)).timeZone).toBe('America/New_York');
    // The default agent for scheduled prompts is set and cleared the same way, and keeps the zone.
    const agent = await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, {
      as: owner,
      body: { defaultAgentId: ' agent-7f3e ' },
    });
    expect(agent.body.key).toMatchObject({ defaultAgentId: 'agent-7f3e', timeZone: 'America/New_York' });
    const noAgent = await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, {
      as: owner,
      body: { defaultAgentId: null },
    });
    expect(noAgent.body.key.defaultAgentId).toBeNull();
    const cleared = await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, {
      as: owner,
      body: { timeZone: null },
    });
    expect(cleared.body.key.timeZone).toBeNull();
    expect((await zoneOfNow(first)).timeZone).toBe('Europe/Berlin');
  });

  it('(d) a key without grants is told so and how to fix it', async () => {
    const bare = await call(gw, 'POST', '/api/v1/keys', { as: owner, body: { name: 'bare' } });
    const keyId = bare.body.key.id as string;
    const agent = await client(bare.body.secret);
    const result = await agent.callTool({ name: 'list_calendars', arguments: {} });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as { calendars: Listed[]; message: string };
    expect(out.calendars).toEqual([]);
    expect(out.message).toBe(
      `This key has no calendar grants yet. In the Calgate dashboard, open Permissions and tick Read (or Write) for this key on a calendar, or run \`calgate grant --key ${keyId} --calendar <calendar id> --read\`.`,
    );
    expect(textOf(result)).toContain('This key has no calendar grants yet.');
    // Read tools are hidden from such a key; calling one names the missing grant.
    const hidden = await agent.callTool({ name: 'list_events', arguments: {} });
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden)).toMatch(/needs Read on at least one calendar; this key has no calendar grants/);
    expect((await zoneOfNow(agent)).timeZone).toBe('UTC');
  });

  it('(e) bad settings are refused with what is wrong, and change nothing', async () => {
    const other = await gw.seedTenant('Globex');
    const foreign = await gw.localCalendar(other.tenantId, 'Globex board');
    const unread = await gw.localCalendar(firstRun.tenantId, 'Unshared');
    await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, { as: owner, body: { timeZone: 'Asia/Tokyo' } });
    const before = await keyView(owner, pinned.id);
    expect(before).toMatchObject({ defaultCalendarId: notes, timeZone: 'Asia/Tokyo' });

    const cases: [unknown, number, string][] = [
      [{ defaultCalendarId: 'cal_nope' }, 404, 'No calendar cal_nope in this tenant.'],
      [{ defaultCalendarId: foreign }, 404, `No calendar ${foreign} in this tenant.`],
      [
        { defaultCalendarId: unread, timeZone: 'Europe/Paris' },
        400,
        `API key ${pinned.id} cannot read calendar ${unread} ('Unshared'), so it cannot be its default. Give the key Read on it first (dashboard Permissions, or calgate grant --key ${pinned.id} --calendar ${unread} --read).`,
      ],
      [
        { defaultCalendarId: annPrimary, timeZone: 'Mars/Olympus_Mons' },
        400,
        "Unknown time zone 'Mars/Olympus_Mons': expected an IANA time zone name such as 'Europe/Berlin' or 'UTC'.",
      ],
      [
        {},
        400,
        'body: give defaultCalendarId, timeZone, defaultAgentId (null clears one), toolsets and/or hijackPolicy',
      ],
      [{ timeZone: '' }, 400, 'timeZone: give an IANA zone, or null to clear'],
      [{ defaultAgentId: '' }, 400, 'defaultAgentId: give an agent id, or null to clear'],
      [{ defaultAgentId: 'agent\u0007bell' }, 400, 'Default agent id must not contain control characters'],
      [{ defaultCalendarId: notes, name: 'renamed' }, 400, 'Unrecognized key: "name"'],
    ];
    for (const [body, status, message] of cases) {
      const answer = await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, { as: owner, body });
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.error.message).toContain(message);
    }
    // Another tenant cannot touch this key, nor this tenant a key that does not exist.
    const eve = await sessionFor(gw, other.tenantId);
    const across = await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, {
      as: eve,
      body: { defaultCalendarId: foreign },
    });
    expect(across.status).toBe(404);
    expect(across.body.error.message).toBe(`No API key ${pinned.id} in this tenant.`);
    const unknown = await call(gw, 'PATCH', '/api/v1/keys/key_nope', {
      as: owner,
      body: { timeZone: 'UTC' },
    });
    expect(unknown.status).toBe(404);
    // A revoked key's settings are frozen.
    const gone = await call(gw, 'POST', '/api/v1/keys', { as: owner, body: { name: 'gone' } });
    await call(gw, 'POST', `/api/v1/keys/${gone.body.key.id}/revoke`, { as: owner });
    const frozen = await call(gw, 'PATCH', `/api/v1/keys/${gone.body.key.id}`, {
      as: owner,
      body: { timeZone: 'UTC' },
    });
    expect(frozen.status).toBe(409);

    expect(await keyView(owner, pinned.id)).toEqual(before);
    const { rows } = await gw.db.pool.query(
      `SELECT default_calendar_id, time_zone FROM api_keys WHERE id = $1`,
      [pinned.id],
    );
    expect(rows).toEqual([{ default_calendar_id: notes, time_zone: 'Asia/Tokyo' }]);
    const agent = await client(pinned.secret);
    expect((await createAt10(agent, 'Still pinned')).calendarId).toBe(notes);
  });

  it('without a session, Origin or CSRF token the defaults cannot be changed', async () => {
    const body = { timeZone: 'UTC' };
    expect((await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, { body })).status).toBe(401);
    const noCsrf = await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, {
      as: owner,
      body,
      headers: { 'x-calgate-csrf': '' },
    });
    expect(noCsrf.status).toBe(403);
    const crossSite = await call(gw, 'PATCH', `/api/v1/keys/${pinned.id}`, {
      as: owner,
      body,
      headers: { origin: 'https://evil.test' },
    });
    expect(crossSite.status).toBe(403);
    expect((await keyView(owner, pinned.id)).timeZone).toBe('Asia/Tokyo');
  });
});

describe('connecting a Google account moves keys off the first-run calendar', () => {
  let emulator: GoogleEmulator;
  let gw: TestGateway;

  beforeAll(async () => {
    emulator = await startGoogleEmulator({
      seed: {
        oauthClients: [{ ...CLIENT, redirectUris: ['http://calgate.test/oauth/google/callback'] }],
        accounts: [{ email: ANN, timeZone: 'Europe/Berlin', calendars: [{ id: TEAM, summary: 'Team' }] }],
      },
    });
    gw = await startTestGateway({
      GOOGLE_CLIENT_ID: CLIENT.clientId,
      GOOGLE_CLIENT_SECRET: CLIENT.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulator.url}/`,
      GOOGLE_OAUTH_URL: emulator.url,
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await emulator?.close();
  });

  it('keys on no default or the first-run calendar take the Google primary; a hand-picked one is kept', async () => {
    const { tenancy, keys } = gw.runtime;
    const tenant = await gw.seedTenant('Acme');
    // The tenant's first local calendar is its local account's primary: the first-run calendar.
    const firstRunCalendar = await gw.localCalendar(tenant.tenantId, 'Calgate');
    const side = await gw.localCalendar(tenant.tenantId, 'Side');
    const unset = tenant.keyId;
    const onFirstRun = (await keys.create(tenant.tenantId, { name: 'first-run' })).key.id;
    const handPicked = (await keys.create(tenant.tenantId, { name: 'hand-picked' })).key.id;
    const notGranted = (await keys.create(tenant.tenantId, { name: 'not granted' })).key.id;
    for (const keyId of [unset, onFirstRun, handPicked, notGranted]) {
      await tenancy.setGrant(tenant.tenantId, keyId, firstRunCalendar, { read: true, write: true });
      await tenancy.setGrant(tenant.tenantId, keyId, side, { read: true, write: false });
    }
    await keys.setDefaults(tenant.tenantId, onFirstRun, { defaultCalendarId: firstRunCalendar });
    await keys.setDefaults(tenant.tenantId, handPicked, { defaultCalendarId: side });
    await keys.setDefaults(tenant.tenantId, notGranted, { timeZone: 'Asia/Tokyo' });

    // The gateway's own connection service, as the consent callback and the CLI use it.
    const { google } = gw.runtime;
    const tokens = emulator.admin.issueTokens({ email: ANN, clientId: CLIENT.clientId, offline: true });
    const connected = await google.connectOAuth(
      tenant.tenantId,
      { email: ANN, refreshToken: tokens.refresh_token as string, accessToken: tokens.access_token },
      { access: 'write', keyIds: [unset, onFirstRun, handPicked] },
    );
    const primary = connected.calendars.find((calendar) => calendar.externalId === ANN)?.id as string;

    const defaults = Object.fromEntries(
      (await keys.list(tenant.tenantId)).map((key) => [key.id, [key.defaultCalendarId, key.timeZone]]),
    );
    expect(defaults).toEqual({
      [unset]: [primary, null],
      [onFirstRun]: [primary, null],
      [handPicked]: [side, null],
      [notGranted]: [null, 'Asia/Tokyo'],
    });

    // Connecting the account again keeps a default a person chose meanwhile.
    await keys.setDefaults(tenant.tenantId, onFirstRun, { defaultCalendarId: side });
    await google.connectOAuth(
      tenant.tenantId,
      { email: ANN, refreshToken: tokens.refresh_token as string },
      { access: 'none', keyIds: [] },
    );
    expect((await keys.get(tenant.tenantId, onFirstRun))?.defaultCalendarId).toBe(side);

    // Disconnecting the account clears defaults that pointed at its calendars.
    await google.disconnect(tenant.tenantId, connected.connectionId);
    expect((await keys.get(tenant.tenantId, unset))?.defaultCalendarId).toBeNull();
    expect((await keys.get(tenant.tenantId, handPicked))?.defaultCalendarId).toBe(side);
  });
});
