import { connectRedis, redisReady } from '@calgate/locks';
import { redisUrl } from '@calgate/testkit';
import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionFor } from './api-client.ts';
import {
  annWithTeam,
  connectGoogleAccountByConsent,
  startTestEmulator,
  type TestEmulator,
} from './google-fixture.ts';
import { connectClient, connectClient2026, rpc, startTestGateway, type TestGateway } from './harness.ts';

const CLIENT = { clientId: 'calgate-test.apps.googleusercontent.com', clientSecret: 'test-client-secret' };
const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const WINDOW = { timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-02T00:00:00Z' };

interface EventsOut {
  events: { summary?: string }[];
  errors?: { calendarId: string; code: string }[];
}

type LogMessage = LoggingMessageNotification['params'];

/** A client whose log messages are collected. */
async function loggingClient(
  mcpUrl: string,
  secret: string,
): Promise<{ client: Client; messages: LogMessage[] }> {
  const client = await connectClient(mcpUrl, secret);
  const messages: LogMessage[] = [];
  client.setNotificationHandler('notifications/message', (notification) => {
    messages.push(notification.params);
  });
  return { client, messages };
}

describe('MCP logging: levels per API key, messages about calendars a read left out and Google retries', () => {
  let emulator: TestEmulator;
  let a: TestGateway;
  let b: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  const clients: { close(): Promise<void> }[] = [];

  const failTeamOnce = () =>
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 1,
      action: { kind: 'error', status: 403, reason: 'forbidden' },
    });

  async function open(gw: TestGateway, secret = tenant.secret) {
    const opened = await loggingClient(gw.mcpUrl, secret);
    clients.push(opened.client);
    return opened;
  }

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [annWithTeam(ANN, TEAM)],
    });
    a = await startTestGateway(emulator.env);
    // A second gateway behind the same load balancer: the same database and Redis.
    b = await startTestGateway(emulator.env, { db: a.db });
    tenant = await a.seedTenant('Acme');
    const { cookie } = await sessionFor(a, tenant.tenantId);
    expect((await connectGoogleAccountByConsent(a, emulator, cookie, ANN, 'read')).status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await b?.stop();
    await a?.stop();
    await emulator?.close();
  });

  it('advertises logging and sends nothing to a key that set no level, answering plain JSON', async () => {
    const { client, messages } = await open(a);
    expect(client.getServerCapabilities()?.logging).toEqual({});
    failTeamOnce();
    const result = await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect((result.structuredContent as EventsOut).errors?.map((e) => e.code)).toEqual(['permission_denied']);
    expect(messages).toEqual([]);
    const raw = await rpc(
      a.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_current_time', arguments: {} } },
      { authorization: `Bearer ${tenant.secret}` },
    );
    expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('refuses an unknown level with invalid params naming the levels', async () => {
    const response = await rpc(
      a.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'loud' } },
      { authorization: `Bearer ${tenant.secret}` },
    );
    const answer = (await response.json()) as { error?: { code: number; message: string } };
    expect(answer.error).toEqual({
      code: -32602,
      message:
        'Unknown log level "loud"; use one of debug, info, notice, warning, error, critical, alert, emergency.',
    });
  });

  it('accepts a level, keeps it for the key in Redis for a day, and warns about a calendar a read left out', async () => {
    const setter = await open(a);
    await expect(setter.client.setLoggingLevel('warning')).resolves.toEqual({});

    const redis = connectRedis(redisUrl(), { name: 'calgate-test' });
    try {
      await redisReady(redis, 5_000);
      expect(await redis.get(`calgate:loglevel:${tenant.keyId}`)).toBe('warning');
      const ttl = await redis.ttl(`calgate:loglevel:${tenant.keyId}`);
      expect(ttl).toBeGreaterThan(24 * 3600 - 60);
      expect(ttl).toBeLessThanOrEqual(24 * 3600);
    } finally {
      redis.disconnect();
    }

    // A later connection of the same key, on the other gateway: no session carries the level.
    const { client, messages } = await open(b);
    failTeamOnce();
    const result = await client.callTool({ name: 'list_events', arguments: WINDOW });
    const out = result.structuredContent as EventsOut;
    expect(out.events.map((e) => e.summary)).toEqual(['Ann 09:00']);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      level: 'warning',
      logger: 'calgate',
      data: { tool: 'list_events', code: 'permission_denied' },
    });
    expect(messages[0]?.data).toMatchObject({ calendarId: out.errors?.[0]?.calendarId });

    // A read that loses nothing sends nothing.
    const clean = await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect((clean.structuredContent as EventsOut).errors).toBeUndefined();
    expect(messages).toHaveLength(1);
  });

  it('adds the partial-result notice at level notice', async () => {
    const { client, messages } = await open(b);
    await client.setLoggingLevel('notice');
    failTeamOnce();
    await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect(messages.map((message) => message.level)).toEqual(['warning', 'notice']);
    expect(messages[1]?.data).toMatchObject({ tool: 'list_events', partial: true });
  });

  it('sends nothing below the level set, set on one gateway and read on the other', async () => {
    const setter = await open(b);
    await setter.client.setLoggingLevel('error');
    const { client, messages } = await open(a);
    failTeamOnce();
    const result = await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect((result.structuredContent as EventsOut).errors?.map((e) => e.code)).toEqual(['permission_denied']);
    expect(messages).toEqual([]);
  });

  it('warns while a Google call is retried, then answers in full', async () => {
    const { rows } = await a.db.pool.query<{ id: string }>(
      'SELECT id FROM calendars WHERE external_id = $1 AND tenant_id = $2',
      [TEAM, tenant.tenantId],
    );
    const teamId = rows[0]?.id;
    const { client, messages } = await open(a);
    await client.setLoggingLevel('warning');
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 1,
      action: { kind: 'error', status: 503 },
    });
    const result = await client.callTool({ name: 'list_events', arguments: WINDOW });
    const out = result.structuredContent as EventsOut;
    expect(result.isError).toBeFalsy();
    expect(out.events.map((e) => e.summary).sort()).toEqual(['Ann 09:00', 'Team 11:00']);
    expect(out.errors).toBeUndefined();
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      level: 'warning',
      logger: 'calgate',
      data: {
        tool: 'list_events',
        operation: 'events.list',
        calendarId: teamId,
        status: 503,
        attempt: 2,
        maxAttempts: 5,
      },
    });
    const { message, retryInMs } = (messages[0]?.data ?? {}) as { message?: string; retryInMs?: number };
    expect(message).toMatch(
      /^Google answered events\.list with HTTP 503 backendError for calendar 'Team'; retrying (in \d+ ms|at once) \(attempt 2 of 5\)\.$/,
    );
    expect(retryInMs).toBeLessThan(200);
    // Statuses and codes only: neither Google's own text nor its ids of calendars.
    expect(JSON.stringify(messages)).not.toMatch(/Backend Error|group\.calendar\.google\.com/);
  });

  it('tells a rate limit apart, with the wait Google asked for', async () => {
    const { client, messages } = await open(a);
    await client.setLoggingLevel('info');
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 1,
      action: { kind: 'error', status: 429, retryAfterSeconds: 1 },
    });
    const result = await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect((result.structuredContent as EventsOut).events).toHaveLength(2);
    expect(messages.map((m) => (m.data as { message: string }).message)).toEqual([
      "Google is rate-limiting events.list (HTTP 429 rateLimitExceeded) for calendar 'Team'; retrying in 1 s (attempt 2 of 5).",
    ]);
  });

  it('sends nothing about a retry to a key whose level is above warning', async () => {
    const { client, messages } = await open(a);
    await client.setLoggingLevel('error');
    emulator.admin.clearRequests();
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 1,
      action: { kind: 'error', status: 503 },
    });
    const result = await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect((result.structuredContent as EventsOut).events).toHaveLength(2);
    expect(messages).toEqual([]);
    // The call did meet the fault and retry: it is the level that kept the warning back.
    const team = emulator.admin
      .requests()
      .filter((entry) => entry.op === 'events.list' && entry.calendarId === TEAM);
    expect(team.map((entry) => entry.status)).toEqual([503, 200]);
  });

  it("keeps one key's level away from another key", async () => {
    await (await open(a)).client.setLoggingLevel('debug');
    const other = await a.runtime.keys.create(tenant.tenantId, { name: 'other' });
    const { client, messages } = await open(a, other.secret);
    await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(messages).toEqual([]);
    const raw = await rpc(
      a.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_current_time', arguments: {} } },
      { authorization: `Bearer ${other.secret}` },
    );
    expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('takes the level of a 2026-07-28 request from its own _meta, ignoring the level the key set', async () => {
    // The key's stored level (from the tests above) is below warning; a 2026 request without a
    // level hears nothing, and one that names warning hears the warning.
    const client = await connectClient2026(a.mcpUrl, tenant.secret);
    clients.push(client);
    const messages: LogMessage[] = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      messages.push(notification.params);
    });
    failTeamOnce();
    await client.callTool({ name: 'list_events', arguments: WINDOW });
    expect(messages).toEqual([]);
    failTeamOnce();
    const result = await client.callTool({
      name: 'list_events',
      arguments: WINDOW,
      _meta: { 'io.modelcontextprotocol/logLevel': 'warning' },
    });
    expect((result.structuredContent as EventsOut).errors?.map((e) => e.code)).toEqual(['permission_denied']);
    expect(messages.map((message) => [message.level, (message.data as { tool?: string }).tool])).toEqual([
      ['warning', 'list_events'],
    ]);
  });
});

describe('MCP logging without Redis', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({}, { withoutRedis: true });
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('remembers the level in the process across requests', async () => {
    const tenant = await gw.seedTenant('Solo');
    const setter = await loggingClient(gw.mcpUrl, tenant.secret);
    await setter.client.setLoggingLevel('info');
    await setter.client.close();
    expect(await gw.runtime.deps.logLevels?.get(tenant.keyId)).toBe('info');
    // A tool call of the key now answers on an event stream, where log messages can travel.
    const raw = await rpc(
      gw.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_current_time', arguments: {} } },
      { authorization: `Bearer ${tenant.secret}` },
    );
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await raw.text()).toContain('"result"');
  });
});
