import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, rpc, startTestGateway, type TestGateway, textOf } from './harness.ts';

describe('a tool hidden by grants, called anyway', () => {
  let gw: TestGateway;
  let reader: Client;
  let bare: Client;

  beforeAll(async () => {
    gw = await startTestGateway();
    const tenant = await gw.seedTenant('Acme');
    const home = await gw.localCalendar(tenant.tenantId, 'Home');
    const team = await gw.localCalendar(tenant.tenantId, 'Team');
    await gw.grant(tenant.tenantId, tenant.keyId, home, { read: true, write: false });
    await gw.grant(tenant.tenantId, tenant.keyId, team, { read: true, write: false });
    reader = await connectClient(gw.mcpUrl, tenant.secret);
    const { secret } = await gw.runtime.keys.create(tenant.tenantId, { name: 'bare' });
    bare = await connectClient(gw.mcpUrl, secret);
  });
  afterAll(async () => {
    await reader.close();
    await bare.close();
    await gw.stop();
  });

  it('answers a tool error naming the missing Write grant and the calendars the key may only read', async () => {
    expect((await reader.listTools()).tools.map((t) => t.name)).not.toContain('create_event');
    const result = await reader.callTool({
      name: 'create_event',
      arguments: {
        summary: 'x',
        start: { dateTime: '2027-01-05T09:00:00Z' },
        end: { dateTime: '2027-01-05T10:00:00Z' },
      },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "create_event needs Write on at least one calendar; this key has Read only on 'Home', 'Team'. Ask the owner to tick Write in the dashboard.",
    );
  });

  it('answers a tool error naming the missing Read grant for a key without grants', async () => {
    const result = await bare.callTool({ name: 'list_events', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'list_events needs Read on at least one calendar; this key has no calendar grants. Ask the owner to tick Read in the dashboard.',
    );
  });

  it('keeps a truly unknown tool a protocol error listing the tools there are', async () => {
    await expect(reader.callTool({ name: 'create_events', arguments: {} })).rejects.toThrow(
      /Unknown tool 'create_events'.*list_events/,
    );
  });
});

describe('rate limit of a key, as SDK clients see it', () => {
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;

  beforeAll(async () => {
    // One token a minute after a burst of 8: nothing refills while the test runs.
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '8' });
    tenant = await gw.seedTenant('Busy');
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('turns an over-limit tools/call into a tool error with Retry-After, and other requests into 429', async () => {
    const client = await connectClient(gw.mcpUrl, tenant.secret);
    try {
      // connect spent up to three tokens (initialize, initialized, the GET stream).
      const texts: string[] = [];
      for (let i = 0; i < 8; i++) {
        const result = await client.callTool({ name: 'get_current_time', arguments: {} });
        texts.push(result.isError ? textOf(result) : 'ok');
      }
      const first = texts.findIndex((text) => text !== 'ok');
      expect(first).toBeGreaterThanOrEqual(5);
      expect(texts.slice(first)).toEqual(
        texts
          .slice(first)
          .map(() => expect.stringMatching(/^Rate limit of this API key reached; retry in \d+ s\.$/)),
      );
      // The SDK surfaces any other over-limit request as an HTTP error.
      await expect(client.listTools()).rejects.toThrow(/Too many requests for this API key/);
    } finally {
      await client.close();
    }

    const auth = { authorization: `Bearer ${tenant.secret}` };
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_current_time', arguments: {} },
    };
    const single = await rpc(gw.mcpUrl, call, auth);
    expect(single.status).toBe(200);
    const seconds = Number(single.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(await single.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {
        isError: true,
        content: [{ type: 'text', text: `Rate limit of this API key reached; retry in ${seconds} s.` }],
      },
    });

    const batch = await rpc(
      gw.mcpUrl,
      [
        call,
        { jsonrpc: '2.0', id: 8, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } },
      ],
      auth,
    );
    expect(batch.status).toBe(200);
    expect(batch.headers.get('retry-after')).toMatch(/^\d+$/);
    const answers = (await batch.json()) as {
      id: number;
      result?: { isError: boolean };
      error?: { message: string };
    }[];
    expect(answers.map((answer) => answer.id)).toEqual([7, 8]);
    expect(answers[0]?.result?.isError).toBe(true);
    expect(answers[1]?.error?.message).toMatch(/^Rate limit of this API key reached; retry in \d+ s\.$/);

    const list = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, auth);
    expect(list.status).toBe(429);
    expect(list.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await list.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
  });
});
