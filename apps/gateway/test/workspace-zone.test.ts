import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapFirstRun, type FirstRun } from '../src/bootstrap.ts';
import { type Browser, call, sessionFor, uniqueEmail } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const PASSWORD = 'correct horse battery staple';

async function zoneOfNow(client: Client): Promise<{ timeZone: string; dateTime: string }> {
  const result = await client.callTool({ name: 'get_current_time', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent as { timeZone: string; dateTime: string };
}

function cookieOf(headers: Headers): string {
  return (headers.get('set-cookie') ?? '').split(';')[0] as string;
}

describe('the workspace time zone: first-run sign-up, settings, and what keys answer in', () => {
  let gw: TestGateway;
  let firstRun: FirstRun;
  let owner: Browser;
  let client: Client;

  beforeAll(async () => {
    gw = await startTestGateway();
    // As `calgate start` leaves an empty database: a tenant, a UTC calendar named Calgate, a key.
    const made = await bootstrapFirstRun(gw.runtime);
    if (made === undefined) {
      throw new Error('the test database already had a tenant');
    }
    firstRun = made;
    await gw.db.pool.query(`UPDATE calendars SET time_zone = 'UTC' WHERE id = $1`, [firstRun.calendarId]);
    client = await connectClient(gw.mcpUrl, firstRun.secret);
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await gw?.stop();
  });

  it('tells the dashboard a fresh install has no owner yet, and refuses a zone that is not one', async () => {
    const fresh = await call(gw, 'GET', '/api/v1/auth/first-run');
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({ firstRun: true });
    expect((await zoneOfNow(client)).timeZone).toBe('UTC');

    const bad = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email: uniqueEmail('owner'), password: PASSWORD, timeZone: 'Europe/Berlinn' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe(
      "timeZone: Unknown time zone 'Europe/Berlinn'. Did you mean 'Europe/Berlin'? Time zones are IANA names such as 'Europe/Berlin' or 'UTC'.",
    );
    // Nothing changed: still no owner, the calendar and the key still in UTC.
    expect((await call(gw, 'GET', '/api/v1/auth/first-run')).body).toEqual({ firstRun: true });
    expect((await zoneOfNow(client)).timeZone).toBe('UTC');
  });

  it('creating the owner with Europe/Berlin sets the workspace zone and moves the empty first-run calendar; the first key answers in Berlin at once', async () => {
    const email = uniqueEmail('owner');
    const response = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email, password: PASSWORD, tenantName: 'Home', timeZone: 'europe/berlin' },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.tenant).toEqual({ id: firstRun.tenantId, name: 'Home' });
    owner = {
      cookie: cookieOf(response.headers),
      csrf: response.body.csrfToken,
      tenantId: firstRun.tenantId,
      userId: response.body.user.id,
    };
    expect((await call(gw, 'GET', '/api/v1/auth/first-run')).body).toEqual({ firstRun: false });
    const me = await call(gw, 'GET', '/api/v1/auth/me', { as: owner });
    expect(me.body.tenant).toEqual({ id: firstRun.tenantId, name: 'Home', timeZone: 'Europe/Berlin' });
    const workspace = await call(gw, 'GET', '/api/v1/workspace', { as: owner });
    expect(workspace.body).toEqual({
      workspace: { id: firstRun.tenantId, name: 'Home', timeZone: 'Europe/Berlin' },
    });

    const now = await zoneOfNow(client);
    expect(now.timeZone).toBe('Europe/Berlin');
    expect(now.dateTime).toMatch(/\+0[12]:00$/);
    const calendars = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(
      (calendars.structuredContent as { calendars: { summary: string; timeZone: string }[] }).calendars,
    ).toEqual([expect.objectContaining({ summary: 'Calgate', timeZone: 'Europe/Berlin' })]);
    // The key itself still has no zone of its own: the dashboard shows it as the workspace's.
    const keys = await call(gw, 'GET', '/api/v1/keys', { as: owner });
    expect(keys.body.keys.find((key: { id: string }) => key.id === firstRun.keyId).timeZone).toBeNull();
  });

  it('changing the workspace zone takes effect on the next call; a key’s own zone still wins', async () => {
    // Warm the key cache first, so the change must invalidate it.
    expect((await zoneOfNow(client)).timeZone).toBe('Europe/Berlin');
    const changed = await call(gw, 'PATCH', '/api/v1/workspace', {
      as: owner,
      body: { timeZone: 'America/New_York' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.workspace.timeZone).toBe('America/New_York');
    expect((await zoneOfNow(client)).timeZone).toBe('America/New_York');

    const own = await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, {
      as: owner,
      body: { timeZone: 'Asia/Tokyo' },
    });
    expect(own.status).toBe(200);
    expect((await zoneOfNow(client)).timeZone).toBe('Asia/Tokyo');
    await call(gw, 'PATCH', `/api/v1/keys/${firstRun.keyId}`, { as: owner, body: { timeZone: null } });
    expect((await zoneOfNow(client)).timeZone).toBe('America/New_York');

    // Cleared: the default calendar's zone again (the first-run calendar's, Berlin since sign-up).
    const cleared = await call(gw, 'PATCH', '/api/v1/workspace', { as: owner, body: { timeZone: null } });
    expect(cleared.body.workspace.timeZone).toBeNull();
    expect((await zoneOfNow(client)).timeZone).toBe('Europe/Berlin');

    await gw.runtime.deps.audit.flush();
    const audit = await gw.db.pool.query<{ target: string[] }>(
      `SELECT target FROM audit_log WHERE tenant_id = $1 AND tool = 'workspace.update' ORDER BY created_at`,
      [firstRun.tenantId],
    );
    expect(audit.rows.map((row) => row.target)).toEqual([['timeZone=America/New_York'], []]);
  });

  it('refuses a bad zone and a member, changing nothing', async () => {
    // A current name stays as given (ICU would resolve it to its old name, Asia/Calcutta).
    const kolkata = await call(gw, 'PATCH', '/api/v1/workspace', {
      as: owner,
      body: { timeZone: 'Asia/Kolkata' },
    });
    expect(kolkata.body.workspace.timeZone).toBe('Asia/Kolkata');
    await call(gw, 'PATCH', '/api/v1/workspace', { as: owner, body: { timeZone: 'Europe/Berlin' } });
    const bad = await call(gw, 'PATCH', '/api/v1/workspace', {
      as: owner,
      body: { timeZone: 'Mars/Olympus' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe(
      "timeZone: Unknown time zone 'Mars/Olympus': expected an IANA time zone name such as 'Europe/Berlin' or 'UTC'.",
    );
    const empty = await call(gw, 'PATCH', '/api/v1/workspace', { as: owner, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toBe('body: give name and/or timeZone (null clears the zone)');

    const member = await sessionFor(gw, firstRun.tenantId);
    await gw.db.pool.query(`UPDATE users SET role = 'member' WHERE id = $1`, [member.userId]);
    const refused = await call(gw, 'PATCH', '/api/v1/workspace', {
      as: member,
      body: { timeZone: 'Asia/Tokyo' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/^Members cannot change the workspace settings/);
    const read = await call(gw, 'GET', '/api/v1/workspace', { as: member });
    expect(read.body.workspace.timeZone).toBe('Europe/Berlin');
    expect((await zoneOfNow(client)).timeZone).toBe('Europe/Berlin');
  });

  it('the REST timesheet splits days in the workspace zone by default and in a timeZone asked for', async () => {
    // 23:30 UTC on Tuesday is 00:30 Wednesday in Berlin.
    const created = await client.callTool({
      name: 'create_event',
      arguments: {
        summary: 'Late call',
        start: { dateTime: '2027-03-02T23:30:00Z' },
        end: { dateTime: '2027-03-03T00:30:00Z' },
      },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
    // A calendar in another zone, so the calendars share no zone and only the workspace's decides.
    await gw.localCalendar(firstRun.tenantId, 'Tokyo office', 'Asia/Tokyo');

    const berlin = await call(gw, 'GET', '/api/v1/timesheet?week=2027-W09', { as: owner });
    expect(berlin.status, JSON.stringify(berlin.body)).toBe(200);
    expect(berlin.body.timeZone).toBe('Europe/Berlin');
    const unclassified = (body: { rows: { projectId: string | null; hours: number[] }[] }) =>
      body.rows.find((row) => row.projectId === null)?.hours;
    // Mon 1 … Sun 7 March: the hour falls on Wednesday in Berlin.
    expect(unclassified(berlin.body)).toEqual([0, 0, 1, 0, 0, 0, 0]);

    const utc = await call(gw, 'GET', '/api/v1/timesheet?week=2027-W09&timeZone=UTC', { as: owner });
    expect(utc.body.timeZone).toBe('UTC');
    expect(unclassified(utc.body)).toEqual([0, 0.5, 0.5, 0, 0, 0, 0]);

    const bad = await call(gw, 'GET', '/api/v1/timesheet?week=2027-W09&timeZone=Nowhere', { as: owner });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("Unknown time zone 'Nowhere'");
  });
});

describe('creating the owner does not move a first-run calendar that already has events', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('keeps its zone (its all-day events are midnights there) but sets the workspace zone', async () => {
    const made = await bootstrapFirstRun(gw.runtime);
    if (made === undefined) {
      throw new Error('the test database already had a tenant');
    }
    await gw.db.pool.query(`UPDATE calendars SET time_zone = 'UTC' WHERE id = $1`, [made.calendarId]);
    const client = await connectClient(gw.mcpUrl, made.secret);
    try {
      const created = await client.callTool({
        name: 'create_event',
        arguments: { summary: 'Holiday', start: { date: '2027-03-01' }, end: { date: '2027-03-02' } },
      });
      expect(created.isError, textOf(created)).toBeFalsy();
      const response = await call(gw, 'POST', '/api/v1/auth/signup', {
        body: { email: uniqueEmail('owner'), password: PASSWORD, timeZone: 'Europe/Berlin' },
      });
      expect(response.status).toBe(201);
      const { rows } = await gw.db.pool.query<{ time_zone: string }>(
        'SELECT time_zone FROM calendars WHERE id = $1',
        [made.calendarId],
      );
      expect(rows[0]?.time_zone).toBe('UTC');
      // The key has no zone of its own: the workspace's applies.
      expect((await zoneOfNow(client)).timeZone).toBe('Europe/Berlin');
    } finally {
      await client.close();
    }
  });
});
