/**
 * The warning a client with a log level gets when a read met a database outage and is being
 * retried once. The gateway reaches Postgres through a relay that the test cuts and restores.
 */
import { createTestDatabase, type Relay, type TestDatabase, until } from '@calgate/testkit';
import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGateway, textOf } from './harness.ts';
import { type GatewayBehindRelay, startGatewayBehindRelay } from './relay-fixture.ts';

describe('MCP logging while the database drops its connections', () => {
  let db: TestDatabase;
  let relay: Relay;
  let gatewayDb: TestDatabase;
  let gw: TestGateway;
  let client: Client;
  let listEvents: GatewayBehindRelay['listEvents'];
  const messages: LoggingMessageNotification['params'][] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // Keys stay cached through the cut, so the call reaches the tool.
    ({ relay, gatewayDb, gw, client, listEvents } = await startGatewayBehindRelay(db));
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
