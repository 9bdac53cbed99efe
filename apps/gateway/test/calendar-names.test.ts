import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

describe('a calendar name where an id belongs', () => {
  let gw: TestGateway;
  let client: Client;
  let foreign: Client;
  let team: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    const acme = await gw.seedTenant('Acme');
    const globex = await gw.seedTenant('Globex');
    team = await gw.localCalendar(acme.tenantId, 'Team Berlin');
    const home = await gw.localCalendar(acme.tenantId, 'Home');
    const secret = await gw.localCalendar(globex.tenantId, 'Secret Plans');
    await gw.grant(acme.tenantId, acme.keyId, team, { read: true, write: true });
    await gw.grant(acme.tenantId, acme.keyId, home, { read: true, write: false });
    await gw.grant(globex.tenantId, globex.keyId, secret, { read: true, write: true });
    client = await connectClient(gw.mcpUrl, acme.secret);
    foreign = await connectClient(gw.mcpUrl, globex.secret);
  });

  afterAll(async () => {
    await client.close();
    await foreign.close();
    await gw.stop();
  });

  it('accepts an exact name, case-insensitively, for reads and writes', async () => {
    const created = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: 'team berlin',
        summary: 'Planning',
        start: { dateTime: '2026-12-02T10:00:00+01:00' },
        end: { dateTime: '2026-12-02T11:00:00+01:00' },
      },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
    expect((created.structuredContent as { calendarId: string }).calendarId).toBe(team);
    const listed = await client.callTool({
      name: 'list_events',
      arguments: {
        calendarId: 'TEAM BERLIN',
        timeMin: '2026-12-01T00:00:00Z',
        timeMax: '2026-12-03T00:00:00Z',
      },
    });
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(
      (listed.structuredContent as { events: { summary: string }[] }).events.map((e) => e.summary),
    ).toEqual(['Planning']);
  });

  it('suggests the closest names when none matches exactly', async () => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: {
        calendarId: 'Team Berln',
        timeMin: '2026-12-01T00:00:00Z',
        timeMax: '2026-12-03T00:00:00Z',
      },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`Did you mean 'Team Berlin' \\(${team}\\)`));
  });

  it("never resolves or suggests another tenant's calendar names", async () => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: {
        calendarId: 'Secret Plans',
        timeMin: '2026-12-01T00:00:00Z',
        timeMax: '2026-12-03T00:00:00Z',
      },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/'Secret Plans' was not found\./);
    expect(textOf(result)).not.toMatch(/cal_/);
  });

  it('get_event without calendarId finds the event in any readable calendar, and names calendars searched', async () => {
    const created = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: team,
        summary: 'Offsite',
        start: { dateTime: '2026-12-04T10:00:00+01:00' },
        end: { dateTime: '2026-12-04T11:00:00+01:00' },
      },
    });
    const { eventId } = created.structuredContent as { eventId: string };
    const found = await client.callTool({ name: 'get_event', arguments: { eventId } });
    expect(found.isError, textOf(found)).toBeFalsy();
    expect(
      (found.structuredContent as { event: { calendarId: string; summary: string } }).event,
    ).toMatchObject({
      calendarId: team,
      summary: 'Offsite',
    });
    const missing = await client.callTool({ name: 'get_event', arguments: { eventId: 'nosuchevent123' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(
      /not found in any calendar this key can read: searched .*'Team Berlin'.*'Home'|'Home'.*'Team Berlin'/,
    );
    const named = await client.callTool({ name: 'get_event', arguments: { calendarId: 'Home', eventId } });
    expect(named.isError).toBe(true);
    expect(textOf(named)).toMatch(/not found in calendar 'Home'/);
  });
});
