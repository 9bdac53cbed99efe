import { randomBytes } from 'node:crypto';
import { startBoss } from '@calgate/scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../src/http/metrics.ts';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import {
  connectClient,
  HIGH_RATE_LIMITS,
  rpc,
  startTestGateway,
  type TestGateway,
  textOf,
} from './harness.ts';

/** A line of the Prometheus text format: a comment, or `name{labels} value`. */
const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? -?[0-9.e+Inf-]+$/;

function expectWellFormed(text: string): void {
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.trimEnd().split('\n')) {
    if (!line.startsWith('# HELP ') && !line.startsWith('# TYPE ')) {
      expect(line).toMatch(SAMPLE);
    }
  }
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  const token = randomBytes(24).toString('hex');
  let gateway: TestGateway;
  let secret: string;

  beforeAll(async () => {
    // A burst of 10 that barely refills: the eleventh request in a row is refused, and a batch of
    // 11 is too large.
    gateway = await startTestGateway({
      METRICS_TOKEN: token,
      RATE_LIMIT_BURST: '10',
      RATE_LIMIT_PER_MINUTE: '1',
    });
    const seeded = await gateway.seedTenant();
    secret = seeded.secret;
    const calendar = await gateway.localCalendar(seeded.tenantId, 'Work');
    await gateway.grant(seeded.tenantId, seeded.keyId, calendar, { read: true, write: false });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  function scrape(authorization?: string): Promise<Response> {
    return fetch(`${gateway.url}/metrics`, {
      headers: authorization === undefined ? {} : { authorization },
    });
  }

  it('refuses a missing or wrong token with 401 and names the header', async () => {
    const missing = await scrape();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain(
      'Authorization: Bearer <METRICS_TOKEN>',
    );
    expect((await scrape(`Bearer ${token}x`)).status).toBe(401);
    expect((await scrape(`Basic ${token}`)).status).toBe(401);
  });

  it('counts tool calls by tool and outcome, their durations, refusals and the prompt queue', async () => {
    const client = await connectClient(gateway.mcpUrl, secret);
    const ok = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect(ok.isError).toBeFalsy();
    // A write tool on a read-only grant: denied.
    const denied = await client.callTool({
      name: 'create_event',
      arguments: { summary: 'x', start: '2030-01-01T10:00:00Z', end: '2030-01-01T11:00:00Z' },
    });
    expect(denied.isError).toBe(true);
    await client.close();

    // Another key spends its burst; the batch is refused before any limiter is asked.
    const other = await gateway.seedTenant('Other');
    const auth = { authorization: `Bearer ${other.secret}` };
    const batch = Array.from({ length: 11 }, (_, index) => ({
      jsonrpc: '2.0',
      id: index + 1,
      method: 'tools/list',
    }));
    expect((await rpc(gateway.mcpUrl, batch, auth)).status).toBe(413);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 11; attempt += 1) {
      const response = await rpc(gateway.mcpUrl, { jsonrpc: '2.0', id: attempt, method: 'tools/list' }, auth);
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);

    // A due prompt no worker has taken (`serve` runs none).
    const boss = await startBoss({ databaseUrl: gateway.db.url, role: 'producer' });
    await boss.send('calgate-prompt-due', { test: true });
    await boss.stop({ graceful: false });

    const response = await scrape(`Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expectWellFormed(text);
    expect(value(text, 'calgate_tool_calls_total{tool="list_calendars",outcome="ok"}')).toBe(1);
    expect(value(text, 'calgate_tool_calls_total{tool="create_event",outcome="denied"}')).toBe(1);
    expect(value(text, 'calgate_tool_call_duration_seconds_count{tool="list_calendars"}')).toBe(1);
    expect(value(text, 'calgate_tool_call_duration_seconds_bucket{tool="list_calendars",le="+Inf"}')).toBe(1);
    expect(value(text, 'calgate_rate_limited_total{reason="batch_too_large"}')).toBe(11);
    expect(value(text, 'calgate_rate_limited_total{reason="key_rate"}')).toBe(1);
    expect(value(text, 'calgate_scheduler_queue_depth')).toBe(1);
    expect(value(text, 'calgate_scheduler_queue_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(text).toContain('# TYPE calgate_tool_call_duration_seconds histogram');
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers 404, as for any unknown path, whatever the token', async () => {
    const response = await fetch(`${gateway.url}/metrics`, {
      headers: { authorization: 'Bearer anything-at-all' },
    });
    expect(response.status).toBe(404);
  });
});

describe('Metrics', () => {
  it('counts upstream failures by reason and escapes label values', async () => {
    const metrics = new Metrics({ version: '1.2.3' });
    metrics.toolCall({
      tool: 'list_events',
      outcome: 'error',
      errorCode: 'upstream_unavailable',
      latencyMs: 30,
    });
    metrics.toolCall({
      tool: 'list_events',
      outcome: 'error',
      errorCode: 'upstream_unavailable',
      latencyMs: 7000,
    });
    metrics.toolCall({ tool: 'list_events', outcome: 'error', errorCode: 'needs_reauth', latencyMs: 5 });
    metrics.toolCall({ tool: 'list_events', outcome: 'error', errorCode: 'invalid_argument', latencyMs: 1 });
    metrics.toolCall({ tool: 'odd"name\\', outcome: 'ok', errorCode: null, latencyMs: 1 });
    const text = await metrics.render();
    expectWellFormed(text);
    expect(
      value(text, 'calgate_upstream_errors_total{provider="google",reason="upstream_unavailable"}'),
    ).toBe(2);
    expect(value(text, 'calgate_upstream_errors_total{provider="google",reason="needs_reauth"}')).toBe(1);
    expect(text).not.toContain('reason="invalid_argument"');
    expect(value(text, 'calgate_tool_calls_total{tool="list_events",outcome="error"}')).toBe(4);
    // Cumulative buckets: 1 ms, 5 ms and 30 ms fall under 0.05 s; 7 s only under 10 s.
    expect(value(text, 'calgate_tool_call_duration_seconds_bucket{tool="list_events",le="0.05"}')).toBe(3);
    expect(value(text, 'calgate_tool_call_duration_seconds_bucket{tool="list_events",le="5"}')).toBe(3);
    expect(value(text, 'calgate_tool_call_duration_seconds_bucket{tool="list_events",le="10"}')).toBe(4);
    expect(value(text, 'calgate_tool_call_duration_seconds_sum{tool="list_events"}')).toBeCloseTo(7.036);
    expect(text).toContain('calgate_tool_calls_total{tool="odd\\"name\\\\",outcome="ok"} 1');
    expect(text).toContain('calgate_build_info{version="1.2.3"} 1');
    expect(text).not.toContain('calgate_scheduler_queue_depth');
  });

  it('leaves the queue out of a scrape when it cannot be read', async () => {
    const metrics = new Metrics({
      version: '1',
      queueDepth: () => Promise.reject(new Error('database away')),
    });
    const text = await metrics.render();
    expect(text).toContain('calgate_build_info');
    expect(text).not.toContain('calgate_scheduler_queue_depth');
  });
});

describe('GET /metrics after real Google failures', () => {
  const token = randomBytes(24).toString('hex');
  const ANN = 'ann@example.com';
  let emulator: TestEmulator;
  let gateway: TestGateway;
  let secret: string;
  let calendarId: string;

  beforeAll(async () => {
    emulator = await startTestEmulator(
      { clientId: 'calgate-test.apps.googleusercontent.com', clientSecret: 'test-client-secret' },
      { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] },
    );
    gateway = await startTestGateway({ ...emulator.env, METRICS_TOKEN: token, ...HIGH_RATE_LIMITS });
    const tenant = await gateway.seedTenant();
    secret = tenant.secret;
    calendarId = await connectGoogleAccount(gateway, emulator, tenant, ANN, 'write');
  });
  afterAll(async () => {
    await gateway?.stop();
    await emulator?.close();
  });

  async function scrape(): Promise<string> {
    const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expectWellFormed(text);
    return text;
  }

  it('counts a call Google fails with 500 as upstream_unavailable, and a revoked account as needs_reauth', async () => {
    const before = await scrape();
    expect(before).not.toContain('calgate_upstream_errors_total{');
    const client = await connectClient(gateway.mcpUrl, secret);
    const event = {
      calendarId,
      summary: 'Planning',
      start: { dateTime: '2030-01-01T10:00:00Z' },
      end: { dateTime: '2030-01-01T11:00:00Z' },
    };

    // Google answers every insert with 500 (more times than any retry would try).
    emulator.admin.script({
      match: { op: 'events.insert', account: ANN },
      times: 50,
      action: { kind: 'error', status: 500, reason: 'backendError' },
    });
    const failed = await client.callTool({ name: 'create_event', arguments: event });
    emulator.admin.clearFaults();
    expect(failed.isError, textOf(failed)).toBe(true);
    expect(
      emulator.admin.requests().some((request) => request.op === 'events.insert' && request.status === 500),
    ).toBe(true);
    const afterOutage = await scrape();
    expect(
      value(afterOutage, 'calgate_upstream_errors_total{provider="google",reason="upstream_unavailable"}'),
    ).toBe(1);
    expect(value(afterOutage, 'calgate_tool_calls_total{tool="create_event",outcome="error"}')).toBe(1);

    // Once Google is back, the same call succeeds and no upstream error is added.
    const created = await client.callTool({ name: 'create_event', arguments: event });
    expect(created.isError, textOf(created)).toBeFalsy();
    const afterRecovery = await scrape();
    expect(value(afterRecovery, 'calgate_tool_calls_total{tool="create_event",outcome="ok"}')).toBe(1);
    expect(
      value(afterRecovery, 'calgate_upstream_errors_total{provider="google",reason="upstream_unavailable"}'),
    ).toBe(1);

    // Google revokes the account's refresh token: the next call fails with needs_reauth.
    emulator.admin.revokeTokens({ email: ANN });
    emulator.admin.expireAccessTokens({ email: ANN });
    const revoked = await client.callTool({ name: 'create_event', arguments: event });
    expect(revoked.isError).toBe(true);
    expect(textOf(revoked)).toMatch(/reconnect/i);
    await client.close();
    const afterRevoke = await scrape();
    expect(value(afterRevoke, 'calgate_upstream_errors_total{provider="google",reason="needs_reauth"}')).toBe(
      1,
    );
    expect(value(afterRevoke, 'calgate_tool_calls_total{tool="create_event",outcome="error"}')).toBe(2);
  }, 60_000);
});
