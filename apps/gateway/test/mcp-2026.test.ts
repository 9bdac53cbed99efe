/**
 * MCP 2026-07-28 beside 2025-11-25 on /api/mcp: the v2 SDK client pinned to 2026-07-28 or
 * negotiating, the v1 client on 2025-11-25, and raw requests for what the SDK client never sends
 * (bad envelopes, header mismatches, removed methods).
 */
import type { Client as Client2026 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  connectClient2026,
  connectClientV1,
  rpc,
  startTestGateway,
  type TestGateway,
  textOf,
} from './harness.ts';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
};

interface RpcAnswer {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

describe('MCP 2026-07-28 beside 2025-11-25 on /api/mcp', () => {
  let gw: TestGateway;
  let owner: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let work: string;
  const clients: { close(): Promise<void> }[] = [];

  /** A POST as a 2026-07-28 client writes it: standard headers from the body unless given. */
  async function post(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const params = body.params as { name?: string; uri?: string } | undefined;
    const response = await fetch(gw.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': String(body.method),
        ...(params?.name === undefined && params?.uri === undefined
          ? {}
          : { 'mcp-name': String(params.name ?? params.uri) }),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    });
    return { status: response.status, body: (await response.json()) as RpcAnswer };
  }

  async function modern(mode: 'auto' | 'pin' = 'pin'): Promise<Client2026> {
    const client = await connectClient2026(gw.mcpUrl, owner.secret, mode);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    owner = await gw.seedTenant('Owner');
    work = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
    await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: true });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await gw?.stop();
  });

  it('answers server/discover and serves tools, resources and prompts to a client pinned to 2026-07-28', async () => {
    const client = await modern();
    expect(client.getProtocolEra()).toBe('modern');
    const discover = client.getDiscoverResult();
    expect(client.getServerVersion()).toMatchObject({ name: 'calgate', title: 'Calgate' });
    expect(discover?.supportedVersions).toContain('2026-07-28');
    expect(discover?.capabilities.tools).toBeDefined();
    expect(discover?.instructions).toMatch(/list_calendars/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('list_calendars');
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(listed.isError).not.toBe(true);
    expect(textOf(listed)).toContain('Work');
    const created = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: 'Work',
        summary: 'Planning',
        start: { dateTime: '2026-12-01T09:00:00Z' },
        end: { dateTime: '2026-12-01T10:00:00Z' },
      },
    });
    expect(created.isError, textOf(created)).not.toBe(true);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain(`calgate://calendars/${work}`);
    const { prompts } = await client.listPrompts();
    expect(prompts.length).toBeGreaterThan(0);
  });

  it('lets a negotiating v2 client choose 2026-07-28, and keeps the v1 client and a default v2 client on 2025-11-25', async () => {
    const client = await modern('auto');
    expect(client.getProtocolEra()).toBe('modern');
    const old = await connectClientV1(gw.mcpUrl, owner.secret);
    clients.push(old);
    expect(old.getServerVersion()).toMatchObject({ name: 'calgate' });
    const legacy = await connectClient(gw.mcpUrl, owner.secret);
    clients.push(legacy);
    expect(legacy.getProtocolEra()).toBe('legacy');
    expect(textOf(await legacy.callTool({ name: 'list_calendars', arguments: {} }))).toContain('Work');
    const listed = await old.callTool({ name: 'list_calendars', arguments: {} });
    expect(textOf(listed)).toContain('Work');
  });

  it('answers a plain tool call with resultType and the server identity in _meta', async () => {
    const answer = await post({
      id: 7,
      method: 'tools/call',
      params: { name: 'list_calendars', arguments: {}, _meta: ENVELOPE },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe(7);
    expect(answer.body.result?.resultType).toBe('complete');
    expect(answer.body.result?.isError).not.toBe(true);
    expect(answer.body.result?._meta).toMatchObject({
      'io.modelcontextprotocol/serverInfo': { name: 'calgate' },
    });
  });

  it('answers the common tool call on its fast path exactly as the SDK path does', async () => {
    const call = (meta: Record<string, unknown>) =>
      post({ id: 11, method: 'tools/call', params: { name: 'list_calendars', arguments: {}, _meta: meta } });
    // A progress token takes the SDK path; the tool sends no progress, so the answer is the same JSON.
    const [fast, full] = await Promise.all([call(ENVELOPE), call({ ...ENVELOPE, progressToken: 'p' })]);
    expect(fast.status).toBe(200);
    expect(full.status).toBe(200);
    expect(fast.body).toEqual(full.body);
    expect(fast.body.result?.structuredContent).toMatchObject({ calendars: [{ id: work }] });
    // A name header that differs from the body is refused on either path, with nothing done.
    const mismatch = await post(
      { id: 12, method: 'tools/call', params: { name: 'list_calendars', arguments: {}, _meta: ENVELOPE } },
      { 'mcp-name': 'delete_event' },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ id: 12, error: { code: -32020 } });
  });

  it('refuses a request whose _meta envelope is incomplete with -32602 and the request id', async () => {
    const answer = await post({
      id: 'bad-envelope',
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    });
    expect(answer.body.id).toBe('bad-envelope');
    expect(answer.body.error?.code).toBe(-32602);
    expect(answer.body.error?.message).not.toMatch(/^MCP error/);
  });

  it('refuses an Mcp-Method header that differs from the body with -32020, and a revision it does not serve', async () => {
    const mismatch = await post(
      { id: 3, method: 'tools/list', params: { _meta: ENVELOPE } },
      { 'mcp-method': 'prompts/list' },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.id).toBe(3);
    expect(mismatch.body.error?.code).toBe(-32020);
    const future = await post(
      {
        id: 4,
        method: 'tools/list',
        params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      },
      { 'mcp-protocol-version': '2099-01-01' },
    );
    expect(future.body.id).toBe(4);
    expect(future.body.error?.code).toBe(-32022);
    expect(future.body.error?.data).toMatchObject({ supported: ['2026-07-28'] });
  });

  it('answers methods 2026-07-28 removed, and unknown ones, with -32601', async () => {
    const setLevel = await post({
      id: 5,
      method: 'logging/setLevel',
      params: { level: 'debug', _meta: ENVELOPE },
    });
    expect(setLevel.body).toMatchObject({ id: 5, error: { code: -32601 } });
    const unknown = await post({ id: 6, method: 'calendars/teleport', params: { _meta: ENVELOPE } });
    expect(unknown.body).toMatchObject({ id: 6, error: { code: -32601 } });
  });

  it('answers an unknown resource with -32602 and its URI for 2026-07-28, -32002 for 2025-11-25', async () => {
    const uri = 'calgate://calendars/cal_nope';
    const answer = await post({ id: 8, method: 'resources/read', params: { uri, _meta: ENVELOPE } });
    expect(answer.body).toMatchObject({ id: 8, error: { code: -32602, data: { uri } } });
    // The v1 client shows the code as sent (the v2 client reads -32002 as its -32602 error).
    const old = await connectClientV1(gw.mcpUrl, owner.secret);
    clients.push(old);
    const refused = await old.readResource({ uri }).catch((error: { code?: number }) => error);
    expect((refused as { code?: number }).code).toBe(-32002);
  });

  it('writes JSON-RPC error messages without the SDK\'s "MCP error -32602:" prefix, in both revisions', async () => {
    const { key, secret } = await gw.runtime.keys.create(owner.tenantId, {
      name: 'rules',
      toolsets: ['calendar', 'rules'],
    });
    await gw.grant(owner.tenantId, key.id, work, { read: true, write: false });
    const uri = 'calgate://timesheet.csv?timeMin=2026-04-20&timeMax=2026-04-26&bogus=1';
    const expected =
      /^Invalid timesheet URI: unknown parameter\(s\) bogus\. Use calgate:\/\/timesheet\.csv\?timeMin=2026-04-20&timeMax=2026-04-26 \(optional groupBy, timeZone, calendarIds\)\.$/;
    const legacy = await rpc(
      gw.mcpUrl,
      { jsonrpc: '2.0', id: 21, method: 'resources/read', params: { uri } },
      { authorization: `Bearer ${secret}` },
    );
    const old = (await legacy.json()) as RpcAnswer;
    expect(old.id).toBe(21);
    expect(old.error?.code).toBe(-32602);
    expect(old.error?.message).toMatch(expected);
    const modern = await post(
      { id: 22, method: 'resources/read', params: { uri, _meta: ENVELOPE } },
      { authorization: `Bearer ${secret}` },
    );
    expect(modern.body.id).toBe(22);
    expect(modern.body.error?.code).toBe(-32602);
    expect(modern.body.error?.message).toMatch(expected);
  });

  it('points a 2026-07-28 GET to subscriptions/listen', async () => {
    const response = await fetch(gw.mcpUrl, {
      headers: {
        authorization: `Bearer ${owner.secret}`,
        accept: 'text/event-stream',
        'mcp-protocol-version': '2026-07-28',
      },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      "Unsupported MCP-Protocol-Version '2026-07-28'. MCP 2026-07-28 has no GET stream; POST subscriptions/listen instead.",
    );
  });

  it('says how long list and read results may be kept, and for whom', async () => {
    const tools = await post({ id: 9, method: 'tools/list', params: { _meta: ENVELOPE } });
    // The tool list follows the key's grants: only this client may keep it, and only until told.
    expect(tools.body.result).toMatchObject({ cacheScope: 'private', ttlMs: 0 });
    const discover = await post({ id: 10, method: 'server/discover', params: { _meta: ENVELOPE } });
    expect(discover.body.result).toMatchObject({ cacheScope: 'public' });
    expect(discover.body.result?.ttlMs).toBeGreaterThan(0);
  });

  it('tells a subscriptions/listen stream when grant changes alter the key’s tools or calendars', async () => {
    const client = await modern();
    const heard: string[] = [];
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      heard.push('tools');
    });
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      heard.push('resources');
    });
    const until = async (count: number) => {
      for (let waited = 0; heard.length < count && waited < 5000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const subscription = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true, resourcesListChanged: true });
    // Read on one more calendar: the same tools, one more calendar resource.
    const other = await gw.localCalendar(owner.tenantId, 'Other');
    await gw.grant(owner.tenantId, owner.keyId, other, { read: true, write: false });
    await until(1);
    expect(heard).toEqual(['resources']);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toContain(
      `calgate://calendars/${other}`,
    );
    // Write taken away: the write tools go, the calendars stay.
    await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: false });
    await until(2);
    expect(heard).toEqual(['resources', 'tools']);
    await subscription.close();
  });
});

describe('MCP 2026-07-28 over the per-key rate limit', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_BURST: '3' });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('tells a 2026-07-28 client the wait as a tool result its SDK accepts', async () => {
    const owner = await gw.seedTenant('Busy');
    const client = await connectClient2026(gw.mcpUrl, owner.secret);
    let text = '';
    for (let call = 0; call < 5 && !text.startsWith('Rate limit'); call++) {
      const result = await client.callTool({ name: 'get_current_time', arguments: {} });
      text = textOf(result);
      if (text.startsWith('Rate limit')) {
        expect(result.isError).toBe(true);
      }
    }
    expect(text).toMatch(/^Rate limit of this API key reached; retry in \d+ s\.$/);
    await client.close();
  });
});
