/**
 * The warning a client with a log level gets when a read met a database outage and is being
 * retried once. The gateway reaches Postgres through a relay that the test cuts and restores.
 */
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore, openDatabase } from '@calgate/store';
import { createTestDatabase, cuttableRelay, type Relay, type TestDatabase, until } from '@calgate/testkit';
import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

describe('MCP logging while the database drops its connections', () => {
  let db: TestDatabase;
  let relay: Relay;
  let gatewayDb: TestDatabase;
  let gw: TestGateway;
  let client: Client;
  let work: string;
  const messages: LoggingMessageNotification['params'][] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    relay = await cuttableRelay(db.url);
    gatewayDb = { ...openDatabase({ url: relay.url }), url: relay.url };
    // Keys stay cached through the cut, so the call reaches the tool.
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, KEY_CACHE_TTL_MS: '5000' }, { db: gatewayDb });
    const owner = await gw.seedTenant('Owner');
    work = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
    await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: true });
    await new LocalCalendarProvider(new LocalEventStore(db)).insertEvent(
      { id: work, externalId: work, timeZone: 'Europe/Berlin' },
      {
        summary: 'Standup',
        start: { dateTime: '2026-12-01T09:00:00Z' },
        end: { dateTime: '2026-12-01T09:15:00Z' },
      },
    );
    client = await connectClient(gw.mcpUrl, owner.secret);
    client.setNotificationHandler('notifications/message', (notification) => {
      messages.push(notification.params);
    });
  });
  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await gatewayDb?.close();
    await relay?.cut();
    await db?.close();
  });

  const listEvents = () =>
    client.callTool({
      name: 'list_events',
      arguments: { calendarId: work, timeMin: '2026-12-01', timeMax: '2026-12-02' },
    });

  it('warns that a read is being retried once, then answers it', async () => {
    await client.setLoggingLevel('warning');
    await listEvents();
    expect(messages).toEqual([]);
    await relay.cut();
    const answer = listEvents();
    // Back as soon as the read met the outage, well within its retry delay.
    await until(() => messages.length > 0, 10_000, 5);
    await relay.restore();
    const result = await answer;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Standup');
    expect(messages).toEqual([
      {
        level: 'warning',
        logger: 'calgate',
        data: {
          tool: 'list_events',
          message: "Calgate's database or cache did not answer; retrying the call once.",
        },
      },
    ]);
  });
});
