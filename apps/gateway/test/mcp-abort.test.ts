import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'abort.apps.googleusercontent.com', clientSecret: 'abort-secret' };
const ANN = 'ann@example.com';

describe('a client that goes away mid-call', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let calendarId: string;

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [
        {
          email: ANN,
          timeZone: 'Europe/Berlin',
          events: [
            {
              summary: 'Planning',
              start: { dateTime: '2026-12-01T09:00:00Z' },
              end: { dateTime: '2026-12-01T10:00:00Z' },
            },
          ],
        },
      ],
    });
    gw = await startTestGateway(emulator.env);
    tenant = await gw.seedTenant('Abort');
    calendarId = await connectGoogleAccount(gw, emulator, tenant, ANN, 'read');
  });
  afterAll(async () => {
    await gw.stop();
    await emulator.close();
  });

  const listEvents = (id: number, signal?: AbortSignal) =>
    fetch(gw.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${tenant.secret}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'list_events',
          arguments: { calendarId, timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-31T00:00:00Z' },
        },
      }),
      ...(signal === undefined ? {} : { signal }),
    });

  it('stops the call, records it, and leaves the gateway answering', async () => {
    // Google answers only after two seconds; the client gives up after a quarter of one.
    emulator.admin.setLatency({ ms: 2_000 });
    const started = Date.now();
    await expect(listEvents(1, AbortSignal.timeout(250))).rejects.toThrow();
    emulator.admin.setLatency(null);
    // The call ends when the client goes, not when Google would have answered.
    let rows: { tool: string; outcome: string }[] = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      await gw.runtime.deps.audit.flush();
      ({ rows } = await gw.db.pool.query('SELECT tool, outcome FROM audit_log WHERE tenant_id = $1', [
        tenant.tenantId,
      ]));
      if (rows.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tool).toBe('list_events');
    const next = await listEvents(2);
    expect(next.status).toBe(200);
    const message = (await next.json()) as {
      id: number;
      result: { structuredContent: { events: unknown[] } };
    };
    expect(message.id).toBe(2);
    expect(message.result.structuredContent.events).toHaveLength(1);
  });
});
