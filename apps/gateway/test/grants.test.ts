import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface ListEventsOut {
  events: { calendarId: string; summary?: string }[];
}

describe('grants and tenant isolation', () => {
  let gw: TestGateway;
  let acme: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let globex: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let calA: string;
  let calB: string;
  let calG: string;
  let reader: Client;
  let other: Client;

  beforeAll(async () => {
    gw = await startTestGateway();
    acme = await gw.seedTenant('Acme');
    globex = await gw.seedTenant('Globex');
    calA = await gw.localCalendar(acme.tenantId, 'A');
    calB = await gw.localCalendar(acme.tenantId, 'B');
    calG = await gw.localCalendar(globex.tenantId, 'G');
    await gw.grant(acme.tenantId, acme.keyId, calA, { read: true, write: false });
    await gw.grant(globex.tenantId, globex.keyId, calG, { read: true, write: true });
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const at = { start: { dateTime: '2026-12-01T09:00:00Z' }, end: { dateTime: '2026-12-01T10:00:00Z' } };
    await provider.insertEvent(
      { id: calA, externalId: calA, timeZone: 'UTC' },
      { summary: 'visible A', ...at },
    );
    await provider.insertEvent(
      { id: calB, externalId: calB, timeZone: 'UTC' },
      { summary: 'secret B', ...at },
    );
    await provider.insertEvent(
      { id: calG, externalId: calG, timeZone: 'UTC' },
      { summary: 'globex G', ...at },
    );
    reader = await connectClient(gw.mcpUrl, acme.secret);
    other = await connectClient(gw.mcpUrl, globex.secret);
  });

  afterAll(async () => {
    await reader.close();
    await other.close();
    await gw.stop();
  });

  it("a key with read on A and nothing on B never sees B's events", async () => {
    const result = await reader.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-11-30T00:00:00Z' },
    });
    const out = result.structuredContent as ListEventsOut;
    expect(out.events.map((e) => e.summary)).toEqual(['visible A']);
    expect(textOf(result)).not.toContain('secret B');
    const calendars = await reader.callTool({ name: 'list_calendars', arguments: {} });
    expect(
      (calendars.structuredContent as { calendars: { id: string }[] }).calendars.map((c) => c.id),
    ).toEqual([calA]);
  });

  it('asking for B by id answers exactly as for a calendar that does not exist', async () => {
    const forB = await reader.callTool({ name: 'list_events', arguments: { calendarId: calB } });
    const forNothing = await reader.callTool({
      name: 'list_events',
      arguments: { calendarId: 'cal_doesNotExist' },
    });
    expect(forB.isError).toBe(true);
    expect(forNothing.isError).toBe(true);
    expect(textOf(forB).replace(calB, 'X')).toBe(textOf(forNothing).replace('cal_doesNotExist', 'X'));
    expect(textOf(forB)).not.toContain('secret B');
  });

  it("two tenants are isolated: neither sees the other's calendars by id", async () => {
    const cross = await reader.callTool({ name: 'list_events', arguments: { calendarId: calG } });
    expect(cross.isError).toBe(true);
    expect(textOf(cross)).toMatch(/was not found/);
    const back = await other.callTool({ name: 'list_events', arguments: { calendarId: calA } });
    expect(back.isError).toBe(true);
    const own = await other.callTool({ name: 'list_events', arguments: { timeMin: '2026-11-30T00:00:00Z' } });
    expect((own.structuredContent as ListEventsOut).events.map((e) => e.summary)).toEqual(['globex G']);
    // A grant across tenants cannot even be recorded.
    await expect(
      gw.runtime.tenancy.setGrant(acme.tenantId, acme.keyId, calG, { read: true, write: false }),
    ).rejects.toThrow(/No calendar/);
  });

  it('a grant change takes effect on the next call of that key', async () => {
    await gw.grant(acme.tenantId, acme.keyId, calB, { read: true, write: false });
    const result = await reader.callTool({
      name: 'list_events',
      arguments: { timeMin: '2026-11-30T00:00:00Z' },
    });
    expect((result.structuredContent as ListEventsOut).events.map((e) => e.summary).sort()).toEqual([
      'secret B',
      'visible A',
    ]);
    await gw.runtime.tenancy.revokeGrant(acme.tenantId, acme.keyId, calB);
    gw.forgetKeys(acme.tenantId);
    const after = await reader.callTool({ name: 'list_events', arguments: { calendarId: calB } });
    expect(after.isError).toBe(true);
  });

  it('a key without any grant sees only the tools that need no calendar', async () => {
    const { secret } = await gw.runtime.keys.create(acme.tenantId, { name: 'bare' });
    const bare = await connectClient(gw.mcpUrl, secret);
    try {
      const { tools } = await bare.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'expand_rrule',
        'get_current_time',
        'list_calendars',
        'set_time_zone',
      ]);
      const calendars = await bare.callTool({ name: 'list_calendars', arguments: {} });
      expect((calendars.structuredContent as { calendars: unknown[] }).calendars).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
