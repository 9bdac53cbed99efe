import { migrate, openDatabase } from '@calgate/store';
import type { Relay, TestDatabase } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc, type TestGateway, textOf } from './harness.ts';
import { type GatewayBehindRelay, startGatewayBehindRelay } from './relay-fixture.ts';
import { type RestartableServer, restartablePostgres } from './restartable-servers.ts';

interface LogLine {
  level: number;
  msg: string;
  dependency?: string;
}

const UNAVAILABLE = /Calgate is briefly unavailable .*; try again in a few seconds \(request req_\w+\)\.$/;

describe('tool calls and key checks while Postgres restarts', () => {
  let postgres: RestartableServer;
  let relay: Relay;
  let db: TestDatabase;
  let gatewayDb: TestDatabase;
  let gw: TestGateway;
  let client: Client;
  let owner: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let work: string;
  let listEvents: GatewayBehindRelay['listEvents'];

  beforeAll(async () => {
    postgres = await restartablePostgres();
    db = { ...openDatabase({ url: postgres.url }), url: postgres.url };
    await migrate(db.pool);
    // The gateway reaches Postgres through a relay, so a test can also drop its connections.
    ({ relay, gatewayDb, gw, owner, work, client, listEvents } = await startGatewayBehindRelay(db));
  });
  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await gatewayDb?.close();
    await db?.close();
    await relay?.cut();
    await postgres?.destroy();
  });

  function logLines(): LogLine[] {
    return gw.logs.flatMap((chunk) =>
      chunk
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as LogLine),
    );
  }

  it('retries a read once when its connection drops, and answers normally', async () => {
    await listEvents();
    await relay.cut();
    const answer = listEvents();
    // Back well within the read's retry delay.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await relay.restore();
    const result = await answer;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('Standup');
  });

  it('does not repeat a write, but says the service is briefly unavailable and to try again', async () => {
    await listEvents();
    await relay.cut();
    const result = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: work,
        summary: 'Retro',
        start: { dateTime: '2026-12-01T15:00:00Z' },
        end: { dateTime: '2026-12-01T16:00:00Z' },
      },
    });
    await relay.restore();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(UNAVAILABLE);
    expect(textOf(result)).toContain('create_event');
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM local_events WHERE summary = 'Retro'",
    );
    expect(rows[0].n).toBe(0);
  });

  it('while Postgres is down: reads say to try again, unknown keys get 503 with Retry-After', async () => {
    const other = await gw.seedTenant('Other');
    await listEvents();
    await postgres.stop();
    try {
      const started = Date.now();
      const result = await listEvents();
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(UNAVAILABLE);
      expect(textOf(result)).not.toContain('failed to complete');
      // It was retried once after a short delay before giving up.
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);

      const response = await rpc(
        gw.mcpUrl,
        { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} },
        { authorization: `Bearer ${other.secret}` },
      );
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const body = (await response.json()) as { error: { message: string } };
      expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000 } });
      expect(body.error.message).toMatch(/briefly unavailable.*Try again in a few seconds/);
      expect(JSON.stringify(body)).not.toContain(other.secret);
    } finally {
      await postgres.start();
    }
    const after = await listEvents();
    expect(textOf(after)).toContain('Standup');

    const lines = logLines();
    expect(lines.filter((line) => line.msg === 'request failed' || line.msg === 'tool failed')).toEqual([]);
    expect(lines.filter((line) => line.dependency === 'postgres').map((line) => line.level)).toContain(40);
    await gw.runtime.deps.audit.flush();
    const { rows } = await db.pool.query(
      "SELECT tool, error_code FROM audit_log WHERE tenant_id = $1 AND outcome = 'error' ORDER BY id",
      [owner.tenantId],
    );
    expect(rows).toEqual([
      { tool: 'create_event', error_code: 'unavailable' },
      { tool: 'list_events', error_code: 'unavailable' },
    ]);
  });
});
