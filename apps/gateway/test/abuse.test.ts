import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sessionFor } from './api-client.ts';
import { connectClient, rpc, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface RpcAnswer {
  id: number;
  result?: { isError?: boolean; content?: { text: string }[]; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

const expand = (id: number, count: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: {
    name: 'expand_rrule',
    arguments: { rrule: 'FREQ=SECONDLY', dtstart: '2026-01-01T00:00:00', timeZone: 'UTC', count },
  },
});

const answerText = (answer: RpcAnswer | undefined) => answer?.result?.content?.[0]?.text ?? '';

describe('limits count work, not HTTP requests', () => {
  let gw: TestGateway;
  let auth: Record<string, string>;
  let other: Record<string, string>;

  beforeAll(async () => {
    gw = await startTestGateway({
      RATE_LIMIT_PER_MINUTE: '20',
      RATE_LIMIT_BURST: '12',
      MCP_MAX_CONCURRENT_PER_KEY: '2',
      MCP_MAX_QUEUED_PER_KEY: '3',
      MCP_MAX_ANSWER_BYTES: '2000000',
    });
    const tenant = await gw.seedTenant('Abuser');
    auth = { authorization: `Bearer ${tenant.secret}` };
    const bystander = await gw.seedTenant('Bystander');
    other = { authorization: `Bearer ${bystander.secret}` };
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('a batch costs one unit of the rate limit per call, and one larger than the burst is refused whole', async () => {
    const tooBig = await rpc(
      gw.mcpUrl,
      Array.from({ length: 13 }, (_, i) => expand(i, 1)),
      auth,
    );
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { error: { message: string } }).error.message).toBe(
      'A batch of 13 calls is more than this key may send at once (RATE_LIMIT_BURST 12); nothing was done. Send at most 12 calls per request.',
    );
    // Five calls within a burst of 12: all run (the concurrency limit makes them take turns).
    const first = (await (
      await rpc(
        gw.mcpUrl,
        Array.from({ length: 5 }, (_, i) => expand(i, 1)),
        auth,
      )
    ).json()) as RpcAnswer[];
    expect(first.map((answer) => answer.result?.isError ?? false)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    // Eight more do not fit in what is left of the burst (12 - 5 = 7): refused, each as a tool error.
    const second = await rpc(
      gw.mcpUrl,
      Array.from({ length: 8 }, (_, i) => expand(i, 1)),
      auth,
    );
    expect(second.status).toBe(200);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const refused = (await second.json()) as RpcAnswer[];
    expect(refused).toHaveLength(8);
    for (const answer of refused) {
      expect(answer.result?.isError).toBe(true);
      expect(answerText(answer)).toMatch(/^Rate limit of this API key reached; retry in \d+ s\.$/);
    }
    // Another key's budget is its own.
    const bystander = await rpc(gw.mcpUrl, expand(1, 1), other);
    expect(((await bystander.json()) as RpcAnswer).result?.isError).toBeFalsy();
  });
});

describe('a per-request work budget, an answer cap and per-key concurrency', () => {
  let gw: TestGateway;
  let client: Client;
  let auth: Record<string, string>;

  beforeAll(async () => {
    gw = await startTestGateway({
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_BURST: '10000',
      MCP_MAX_CONCURRENT_PER_KEY: '2',
      MCP_MAX_QUEUED_PER_KEY: '3',
      MCP_MAX_INSTANCES_PER_REQUEST: '700',
    });
    const tenant = await gw.seedTenant('Heavy');
    const calendar = await gw.localCalendar(tenant.tenantId, 'Work');
    await gw.grant(tenant.tenantId, tenant.keyId, calendar, { read: true, write: true });
    auth = { authorization: `Bearer ${tenant.secret}` };
    client = await connectClient(gw.mcpUrl, tenant.secret);
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
  });

  it('counts recurrence instances across a batch and refuses the call that would pass the limit, before doing it', async () => {
    const batch = [expand(1, 10_000), expand(2, 10_000), expand(3, 10_000)];
    const answers = (await (await rpc(gw.mcpUrl, batch, auth)).json()) as RpcAnswer[];
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    const refused = [1, 2, 3].filter((id) => byId.get(id)?.result?.isError);
    // A call is charged the page it makes (344 instances): two of the three fit in 700;
    // which two depends on the order they ran in.
    expect(refused).toHaveLength(1);
    expect(answerText(byId.get(refused[0] as number))).toBe(
      'This call would bring the request to 1,032 recurrence instances, with 688 spent by earlier calls in it; the limit is 700 per request (MCP_MAX_INSTANCES_PER_REQUEST). Nothing was done: ask for a smaller count, or spread the calls over several requests.',
    );
    // A new request has a new budget.
    const again = (await (await rpc(gw.mcpUrl, expand(4, 10_000), auth)).json()) as RpcAnswer;
    expect(again.result?.isError).toBeFalsy();
  });

  it('runs at most the concurrency limit of one key’s calls at once, queues a few, refuses the rest', async () => {
    const batch = Array.from({ length: 10 }, (_, i) => expand(i, 1));
    const answers = (await (await rpc(gw.mcpUrl, batch, auth)).json()) as RpcAnswer[];
    const refused = answers.filter((answer) => answer.result?.isError);
    // Two run, three wait their turn, five are refused at once.
    expect(answers.filter((answer) => !answer.result?.isError)).toHaveLength(5);
    expect(refused).toHaveLength(5);
    expect(answerText(refused[0])).toBe(
      'This API key already has 2 calls running and 3 waiting (MCP_MAX_CONCURRENT_PER_KEY 2, MCP_MAX_QUEUED_PER_KEY 3); nothing was done. Wait for answers before sending more.',
    );
  });
});

describe('an answer cap per request', () => {
  let gw: TestGateway;
  let auth: Record<string, string>;

  beforeAll(async () => {
    gw = await startTestGateway({ MCP_MAX_ANSWER_BYTES: '120000' });
    const tenant = await gw.seedTenant('Big answers');
    auth = { authorization: `Bearer ${tenant.secret}` };
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('caps the bytes of answer per request with a clear error', async () => {
    // A page of 344 instances is about 25 kB as structured content and as much again as JSON text.
    const batch = [1, 2, 3].map((id) => ({
      ...expand(id, 1),
      params: {
        name: 'expand_rrule',
        arguments: {
          rrule: 'FREQ=DAILY',
          dtstart: '2026-01-01T09:00:00',
          timeZone: 'Asia/Kathmandu',
          count: 1_000,
        },
      },
    }));
    const answers = (await (await rpc(gw.mcpUrl, batch, auth)).json()) as RpcAnswer[];
    const refused = answers.filter((answer) => answer.result?.isError);
    expect(refused).toHaveLength(1);
    expect(answerText(refused[0])).toMatch(
      /^This call would bring the request to \d\.\d MB of answer, with \d\.\d MB spent by earlier calls in it; the limit is 0\.1 MB per request \(MCP_MAX_ANSWER_BYTES\)\. Nothing was done: ask for less/,
    );
    const total = answers.reduce((sum, answer) => sum + JSON.stringify(answer).length, 0);
    // The cap counts the answers; on the wire their text is JSON-escaped once more.
    expect(total).toBeLessThan(120_000 * 1.1);
  });
});

describe('bad input gets a clean answer, never an internal error', () => {
  let gw: TestGateway;
  let client: Client;
  let auth: Record<string, string>;
  let calendar: string;

  beforeAll(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '10000' });
    const tenant = await gw.seedTenant('Input');
    calendar = await gw.localCalendar(tenant.tenantId, 'Work');
    await gw.grant(tenant.tenantId, tenant.keyId, calendar, { read: true, write: true });
    auth = { authorization: `Bearer ${tenant.secret}` };
    client = await connectClient(gw.mcpUrl, tenant.secret);
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
  });

  it.each([
    ['search_events', { query: 'a\u0000b' }, "'query' contains a NUL character (U+0000)"],
    ['list_events', { calendarId: 'cal_\u0000x' }, "'calendarId' contains a NUL character (U+0000)"],
    ['get_event', { eventId: 'abc\uD800def' }, "'eventId' contains a lone UTF-16 surrogate"],
    [
      'create_event',
      {
        summary: 'Lunch \uDC00',
        start: { dateTime: '2026-12-01T12:00:00Z' },
        end: { dateTime: '2026-12-01T13:00:00Z' },
      },
      "'summary' contains a lone UTF-16 surrogate",
    ],
    [
      'create_event',
      {
        summary: 'Lunch',
        attendees: ['ann@example.com', 'bob\u0000@example.com'],
        start: { dateTime: '2026-12-01T12:00:00Z' },
        end: { dateTime: '2026-12-01T13:00:00Z' },
      },
      "'attendees[1]' contains a NUL character (U+0000)",
    ],
    [
      'book_slot',
      {
        summary: 'Call',
        start: '2026-12-01T12:00:00Z',
        end: '2026-12-01T12:30:00Z',
        idempotencyKey: 'k\u0000',
      },
      "'idempotencyKey' contains a NUL character (U+0000)",
    ],
  ])(
    '%s refuses NUL and lone surrogates, naming the field, and changes nothing',
    async (name, args, problem) => {
      const result = await client.callTool({ name, arguments: { calendarId: calendar, ...args } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `Invalid arguments for ${name}: ${problem}, which cannot be stored; remove it.`,
      );
      const listed = await client.callTool({
        name: 'list_events',
        arguments: { calendarId: calendar, timeMin: '2026-11-30', timeMax: '2026-12-02' },
      });
      expect((listed.structuredContent as { events: unknown[] }).events).toEqual([]);
    },
  );

  it('answers params that do not fit the method with -32602 and a short message', async () => {
    const cases: [unknown, RegExp][] = [
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
        /^Invalid params for tools\/call: params\.name is required \(string\)\.$/,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'get_current_time', arguments: 'now' },
        },
        /^Invalid params for tools\/call: params\.arguments must be an? \w+, not a string\.$/,
      ],
      [
        { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 42 } },
        /^Invalid params for tools\/list: params\.cursor must be a string, not a number\.$/,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'initialize',
          params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        },
        /^Invalid params for initialize: params\.protocolVersion must be a string, not a number\.$/,
      ],
    ];
    for (const [body, message] of cases) {
      const response = await rpc(gw.mcpUrl, body, auth);
      const answer = (await response.json()) as RpcAnswer;
      expect(answer.error?.code, JSON.stringify(answer)).toBe(-32602);
      expect(answer.error?.message).toMatch(message);
      expect(answer.error?.message.length).toBeLessThan(200);
    }
  });
});

describe('the dashboard API refuses text no database can store', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway();
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('answers 400 naming the field for a NUL or a lone surrogate in a body, query or path, and stores nothing', async () => {
    const tenant = await gw.seedTenant('Dashboard');
    const as = await sessionFor(gw, tenant.tenantId);
    const body = await call(gw, 'POST', '/api/v1/keys', { as, body: { name: 'agent\u0000' } });
    expect(body.status).toBe(400);
    expect(body.body.error.message).toBe(
      "'name' contains a NUL character (U+0000), which cannot be stored; remove it.",
    );
    const surrogate = await call(gw, 'POST', '/api/v1/keys', { as, body: { name: 'agent \uD800' } });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.error.message).toMatch(/^'name' contains a lone UTF-16 surrogate/);
    const path = await call(gw, 'POST', '/api/v1/keys/key_%00/rotate', { as });
    expect(path.status).toBe(400);
    expect(path.body.error.message).toMatch(/^'path\.\w+' contains a NUL character/);
    const listed = await call(gw, 'GET', '/api/v1/keys', { as });
    expect(listed.body.keys.map((key: { name: string }) => key.name)).toEqual(['agent']);
  });
});
