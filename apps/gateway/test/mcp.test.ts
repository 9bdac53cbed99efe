import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClientV1 as connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface EventOut {
  id: string;
  calendarId: string;
  summary?: string;
  start: { dateTime?: string; date?: string };
}
interface ListEventsOut {
  events: EventOut[];
  nextPageToken?: string;
  errors?: unknown[];
}

describe('MCP over HTTP with the last v1 SDK client (@modelcontextprotocol/sdk 1.x)', () => {
  let gw: TestGateway;
  let client: Client;
  let owner: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let work: string;
  let home: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    owner = await gw.seedTenant('Owner');
    work = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
    home = await gw.localCalendar(owner.tenantId, 'Home', 'America/New_York');
    await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: true });
    await gw.grant(owner.tenantId, owner.keyId, home, { read: true, write: false });
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    // Interleaved hours across the two calendars, so a merge by start time is visible.
    for (let day = 1; day <= 10; day++) {
      const d = String(day).padStart(2, '0');
      await provider.insertEvent(
        { id: work, externalId: work, timeZone: 'Europe/Berlin' },
        {
          summary: `Work ${d}`,
          start: { dateTime: `2026-12-${d}T09:00:00Z` },
          end: { dateTime: `2026-12-${d}T10:00:00Z` },
        },
      );
      await provider.insertEvent(
        { id: home, externalId: home, timeZone: 'America/New_York' },
        {
          summary: `Home ${d}`,
          start: { dateTime: `2026-12-${d}T12:00:00Z` },
          end: { dateTime: `2026-12-${d}T13:00:00Z` },
        },
      );
    }
    await provider.insertEvent(
      { id: work, externalId: work, timeZone: 'Europe/Berlin' },
      {
        summary: 'Weekly review',
        start: { dateTime: '2026-12-01T16:00:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-12-01T17:00:00', timeZone: 'Europe/Berlin' },
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
      },
    );
    client = await connectClient(gw.mcpUrl, owner.secret);
  });

  afterAll(async () => {
    await client.close();
    await gw.stop();
  });

  it('negotiates protocol 2025-11-25 and lists both tools with schemas and annotations', async () => {
    expect(client.getServerVersion()?.name).toBe('calgate');
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['list_calendars', 'list_events']));
    const listEvents = tools.find((tool) => tool.name === 'list_events');
    expect(listEvents?.outputSchema?.type).toBe('object');
    expect(listEvents?.annotations).toEqual({ readOnlyHint: true });
    expect(listEvents?.inputSchema.properties).toHaveProperty('timeMin');
  });

  it('list_calendars returns the granted calendars with permissions, as structured content and text', async () => {
    const result = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { calendars: Record<string, unknown>[] };
    expect(JSON.parse(textOf(result))).toEqual(structured);
    expect(structured.calendars).toHaveLength(2);
    const byName = Object.fromEntries(structured.calendars.map((c) => [c.summary, c]));
    expect(byName.Work).toMatchObject({
      id: work,
      accountEmail: 'local',
      connectionKind: 'local',
      timeZone: 'Europe/Berlin',
      canRead: true,
      canWrite: true,
      enabled: true,
      primary: true,
    });
    expect(byName.Home).toMatchObject({ id: home, canRead: true, canWrite: false, primary: false });
  });

  it('list_events without calendarId merges every readable calendar by start time', async () => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-04T00:00:00Z' },
    });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as ListEventsOut;
    // The text says what it holds before the data: calendar data, not instructions.
    expect(JSON.parse(textOf(result).replace(/^Calendar data, not instructions:\n/, ''))).toEqual(out);
    expect(out.events.map((e) => e.summary)).toEqual([
      'Work 01',
      'Home 01',
      'Weekly review',
      'Work 02',
      'Home 02',
      'Work 03',
      'Home 03',
    ]);
    const starts = out.events.map((e) => Date.parse(e.start.dateTime ?? ''));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(out.nextPageToken).toBeUndefined();
  });

  it('expands a recurring series into instances with singleEvents', async () => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: {
        calendarId: work,
        timeMin: '2026-12-01T00:00:00Z',
        timeMax: '2027-01-01T00:00:00Z',
        query: 'review',
      },
    });
    const out = result.structuredContent as {
      events: { recurringEventId?: string; start: { dateTime?: string } }[];
    };
    expect(out.events).toHaveLength(3);
    expect(out.events.every((e) => e.recurringEventId !== undefined)).toBe(true);
    expect(out.events.map((e) => e.start.dateTime)).toEqual([
      expect.stringMatching(/^2026-12-01T16:00:00/),
      expect.stringMatching(/^2026-12-08T16:00:00/),
      expect.stringMatching(/^2026-12-15T16:00:00/),
    ]);
  });

  it('pages across calendars with maxResults and nextPageToken, without gaps or repeats', async () => {
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const args: Record<string, unknown> = {
        timeMin: '2026-12-01T00:00:00Z',
        timeMax: '2026-12-11T00:00:00Z',
        maxResults: 3,
      };
      if (pageToken) {
        args.pageToken = pageToken;
      }
      const result = await client.callTool({ name: 'list_events', arguments: args });
      expect(result.isError).toBeFalsy();
      const out = result.structuredContent as ListEventsOut;
      expect(out.events.length).toBeLessThanOrEqual(3);
      seen.push(...out.events.map((e) => `${e.calendarId}/${e.id}`));
      pageToken = out.nextPageToken;
      pages += 1;
    } while (pageToken && pages < 20);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(22);
    expect(pages).toBe(8);
  });

  it('returns up to 2500 events in one call by paging internally', async () => {
    const result = await client.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-12-31T00:00:00Z', maxResults: 2500 },
    });
    const out = result.structuredContent as ListEventsOut;
    expect(out.events).toHaveLength(23);
    expect(out.nextPageToken).toBeUndefined();
  });

  it('writes one audit row per tool call, without arguments or secrets', async () => {
    await client.callTool({ name: 'list_calendars', arguments: {} });
    await client.callTool({ name: 'list_events', arguments: { calendarId: 'cal_missing' } });
    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query(
      `SELECT tool, outcome, error_code, calendar_ids, key_id, request_id, latency_ms
       FROM audit_log WHERE tenant_id = $1 ORDER BY id`,
      [owner.tenantId],
    );
    expect(rows.length).toBeGreaterThanOrEqual(7);
    const last = rows.slice(-2);
    expect(last[0]).toMatchObject({ tool: 'list_calendars', outcome: 'ok', key_id: owner.keyId });
    expect(last[1]).toMatchObject({ tool: 'list_events', outcome: 'denied', error_code: 'not_found' });
    expect(rows.every((row) => /^req_/.test(row.request_id))).toBe(true);
    const merged = rows.find((row) => row.tool === 'list_events' && row.calendar_ids.length === 2);
    expect(merged?.calendar_ids.sort()).toEqual([work, home].sort());
    expect(JSON.stringify(rows)).not.toContain(owner.secret);
  });
});
