import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface Written {
  eventId: string;
  event: { start: { dateTime?: string; date?: string }; end: { dateTime?: string; date?: string } };
}

interface OneCalendar {
  gw: TestGateway;
  client: Client;
  calendar: string;
}

/** For the tests of the enclosing block: a gateway whose one key reads and writes one local calendar. */
function useCalendar(summary: string, timeZone: string): OneCalendar {
  const one = {} as OneCalendar;
  beforeAll(async () => {
    one.gw = await startTestGateway();
    const tenant = await one.gw.seedTenant('Acme');
    one.calendar = await one.gw.localCalendar(tenant.tenantId, summary, timeZone);
    await one.gw.grant(tenant.tenantId, tenant.keyId, one.calendar, { read: true, write: true });
    one.client = await connectClient(one.gw.mcpUrl, tenant.secret);
  });
  afterAll(async () => {
    await one.client.close();
    await one.gw.stop();
  });
  return one;
}

describe('update_event moves times without making zero-length events', () => {
  const work = useCalendar('Work', 'Europe/Berlin');

  async function create(start: object, end: object): Promise<string> {
    const result = await work.client.callTool({
      name: 'create_event',
      arguments: { calendarId: work.calendar, summary: `Event ${Math.random()}`, start, end },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as Written).eventId;
  }

  it('a new start alone keeps the duration', async () => {
    const id = await create(
      { dateTime: '2026-12-07T09:00:00+01:00' },
      { dateTime: '2026-12-07T10:30:00+01:00' },
    );
    const result = await work.client.callTool({
      name: 'update_event',
      arguments: { calendarId: work.calendar, eventId: id, start: { dateTime: '2026-12-07T14:00:00+01:00' } },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const { event } = result.structuredContent as Written;
    expect(Date.parse(event.end.dateTime ?? '') - Date.parse(event.start.dateTime ?? '')).toBe(90 * 60_000);
    expect(Date.parse(event.start.dateTime ?? '')).toBe(Date.parse('2026-12-07T14:00:00+01:00'));
  });

  it('a new start alone on an all-day event keeps its days', async () => {
    const id = await create({ date: '2026-12-10' }, { date: '2026-12-12' });
    const result = await work.client.callTool({
      name: 'update_event',
      arguments: { calendarId: work.calendar, eventId: id, start: { date: '2026-12-20' } },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((result.structuredContent as Written).event.end.date).toBe('2026-12-22');
  });

  it('an end not after the start is refused as create_event refuses it, and nothing changes', async () => {
    const id = await create(
      { dateTime: '2026-12-08T09:00:00+01:00' },
      { dateTime: '2026-12-08T10:00:00+01:00' },
    );
    const refused = await work.client.callTool({
      name: 'update_event',
      arguments: { calendarId: work.calendar, eventId: id, end: { dateTime: '2026-12-08T09:00:00+01:00' } },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/end must be later than start/);
    const read = await work.client.callTool({
      name: 'get_event',
      arguments: { calendarId: work.calendar, eventId: id },
    });
    const { event } = read.structuredContent as { event: Written['event'] };
    expect(Date.parse(event.end.dateTime ?? '')).toBe(Date.parse('2026-12-08T10:00:00+01:00'));
  });
});

describe('an offset that disagrees with timeZone', () => {
  const denver = useCalendar('Denver', 'America/Denver');

  it('is refused with both readings, and nothing is created', async () => {
    const refused = await denver.client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: denver.calendar,
        summary: 'Standup',
        start: { dateTime: '2026-04-20T09:00:00-07:00', timeZone: 'America/Denver' },
        end: { dateTime: '2026-04-20T09:30:00-07:00', timeZone: 'America/Denver' },
      },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(
      /2026-04-20T10:00:00-06:00 in America\/Denver.*09:00 in America\/Denver is 2026-04-20T09:00:00-06:00/,
    );
    const listed = await denver.client.callTool({
      name: 'list_events',
      arguments: {
        calendarId: denver.calendar,
        timeMin: '2026-04-19T00:00:00Z',
        timeMax: '2026-04-22T00:00:00Z',
      },
    });
    expect((listed.structuredContent as { events: unknown[] }).events).toEqual([]);
  });

  it('the create_event example in /api/docs creates the event at the local time it names', async () => {
    const docs = (await (await fetch(`${denver.gw.url}/api/docs`)).json()) as unknown;
    const tools = (Array.isArray(docs) ? docs : (docs as { tools: unknown[] }).tools) as {
      name: string;
      example: { arguments: Record<string, unknown> };
    }[];
    const example = tools.find((tool) => tool.name === 'create_event')?.example.arguments ?? {};
    const result = await denver.client.callTool({
      name: 'create_event',
      arguments: { ...example, calendarId: denver.calendar },
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const { event } = result.structuredContent as Written;
    expect(Date.parse(event.start.dateTime ?? '')).toBe(Date.parse('2026-04-20T09:00:00-06:00'));
  });
});
