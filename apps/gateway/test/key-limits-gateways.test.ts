import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectRedis, RedisKeyTurns, redisReady } from '@calgate/locks';
import { freePort, redisUrl, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  type GatewayProcess,
  HIGH_RATE_LIMITS,
  spawnGatewayProcess,
  startTestGateway,
  type TestGateway,
  textOf,
} from './harness.ts';

const ICS = (uid: string) =>
  `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\nBEGIN:VEVENT\r\nUID:${uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20261201T090000Z\r\nDTEND:20261201T100000Z\r\nSUMMARY:Imported ${uid}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`;

/**
 * A feed server whose answers wait until the test lets them go: an import_events call holds its
 * key's slot for exactly as long as the test wants.
 */
async function heldFeeds(): Promise<{
  url: string;
  server: Server;
  seen: string[];
  release(path: string): void;
}> {
  const seen: string[] = [];
  const held = new Map<string, ServerResponse>();
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    seen.push(path);
    held.set(path, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    seen,
    release(path) {
      held
        .get(path)
        ?.writeHead(200, { 'content-type': 'text/calendar' })
        .end(ICS(path.slice(1)));
      held.delete(path);
    },
  };
}

const LIMITS = {
  ...HIGH_RATE_LIMITS,
  MCP_MAX_CONCURRENT_PER_KEY: '1',
  MCP_MAX_QUEUED_PER_KEY: '1',
  OUTBOUND_ALLOW_PRIVATE: 'true',
};

describe("a key's concurrent-call limit across two gateway processes sharing Redis", () => {
  let a: TestGateway;
  let b: GatewayProcess;
  let feeds: Awaited<ReturnType<typeof heldFeeds>>;
  let onA: Client;
  let onB: Client;
  let calendarId: string;
  let keyId: string;

  beforeAll(async () => {
    feeds = await heldFeeds();
    a = await startTestGateway(LIMITS);
    // A separate OS process sharing only Postgres and Redis with the first gateway.
    b = await spawnGatewayProcess({ ...LIMITS, DATABASE_URL: a.db.url, REDIS_URL: redisUrl() });
    const tenant = await a.seedTenant('Acme');
    keyId = tenant.keyId;
    await a.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { toolsets: ['calendar', 'ics'] });
    calendarId = await a.localCalendar(tenant.tenantId, 'Imports', 'UTC');
    await a.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    [onA, onB] = await Promise.all([
      connectClient(a.mcpUrl, tenant.secret),
      connectClient(b.mcpUrl, tenant.secret),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([onA?.close(), onB?.close()]);
    await b?.stop();
    await a?.stop();
    feeds?.server.closeAllConnections();
    feeds?.server.close();
  });

  const importFrom = (client: Client, path: string) =>
    client.callTool({ name: 'import_events', arguments: { calendarId, url: `${feeds.url}${path}` } });

  it('one call running on one gateway makes the other gateway queue, then refuse, the same key', async () => {
    const first = importFrom(onA, '/first');
    await until(() => feeds.seen.includes('/first'), 10_000);
    // The second call, on the other gateway, waits for the key's one slot (its fetch does not start).
    const second = importFrom(onB, '/second');
    const redis = connectRedis(redisUrl());
    await redisReady(redis);
    await until(async () => (await redis.zcard(`calgate:turns:{${keyId}}:w`)) === 1, 10_000);
    redis.disconnect();
    // The queue (one waiting call) is full across both gateways: a third call is refused at once.
    const third = await importFrom(onA, '/third');
    expect(third.isError).toBe(true);
    expect(textOf(third)).toBe(
      'This API key already has 1 calls running and 1 waiting (MCP_MAX_CONCURRENT_PER_KEY 1, MCP_MAX_QUEUED_PER_KEY 1); nothing was done. Wait for answers before sending more.',
    );
    expect(feeds.seen).toEqual(['/first']);
    feeds.release('/first');
    expect((await first).isError).toBeFalsy();
    // The slot passes to the waiting call on the other gateway.
    await until(() => feeds.seen.includes('/second'), 10_000);
    feeds.release('/second');
    const done = await second;
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ imported: 1 });
    expect(feeds.seen).toEqual(['/first', '/second']);
  });

  it("paces a key's CPU-bound calls across gateways: none runs while the key's turn is held elsewhere", async () => {
    // A late page of a COUNT rule makes every instance before it again: a CPU-bound call (the
    // first pages cost less than a turn, and take none).
    const rule = {
      rrule: 'FREQ=DAILY;COUNT=10000',
      dtstart: '2026-01-01T09:00:00',
      timeZone: 'UTC',
      count: 10_000,
    };
    let pageToken: string | undefined;
    for (let page = 0; page < 5; page++) {
      const answer = await onB.callTool({
        name: 'expand_rrule',
        arguments: { ...rule, ...(pageToken === undefined ? {} : { pageToken }) },
      });
      pageToken = (answer.structuredContent as { nextPageToken: string }).nextPageToken;
    }
    // Another gateway running one of this key's expand_rrule calls holds the key's CPU turn.
    const redis = connectRedis(redisUrl());
    await redisReady(redis);
    const elsewhere = new RedisKeyTurns(
      redis,
      { limit: 1, queued: 10, pace: { maxPauseMs: 250 }, describe: () => 'busy' },
      'calgate:cputurns:',
    );
    const held = await elsewhere.acquire(keyId);
    // A page that costs less than a turn does not wait for one.
    const cheap = await onB.callTool({ name: 'expand_rrule', arguments: { ...rule, count: 20 } });
    expect((cheap.structuredContent as { instances: unknown[] }).instances).toHaveLength(20);
    const heldAt = performance.now();
    let answeredAt: number | undefined;
    const call = onB
      .callTool({
        name: 'expand_rrule',
        arguments: { ...rule, pageToken },
      })
      .then((result) => {
        answeredAt = performance.now();
        return result;
      });
    // The call waits for the key's turn however long the other gateway keeps it.
    await until(() => performance.now() - heldAt > 400, 5_000);
    expect(answeredAt).toBeUndefined();
    const releasedAt = performance.now();
    held();
    const result = await call;
    redis.disconnect();
    expect(result.isError, textOf(result)).toBeFalsy();
    // The page after the first 1,720 instances is there: the call ran in full once it had its turn.
    expect((result.structuredContent as { instances: { start: string }[] }).instances[0]?.start).toBe(
      '2030-09-17T09:00:00Z',
    );
    // After a turn of 400 ms the key's next turn waits the pause (at most 250 ms).
    expect((answeredAt ?? 0) - releasedAt).toBeGreaterThanOrEqual(200);
  });
});

describe('while Redis is unreachable, each gateway still limits the key by itself', () => {
  let gateway: TestGateway;
  let feeds: Awaited<ReturnType<typeof heldFeeds>>;
  let client: Client;
  let calendarId: string;

  beforeAll(async () => {
    feeds = await heldFeeds();
    gateway = await startTestGateway({
      ...LIMITS,
      MCP_MAX_QUEUED_PER_KEY: '0',
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    });
    const tenant = await gateway.seedTenant('Acme');
    await gateway.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { toolsets: ['calendar', 'ics'] });
    calendarId = await gateway.localCalendar(tenant.tenantId, 'Imports', 'UTC');
    await gateway.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
    client = await connectClient(gateway.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.stop();
    feeds?.server.closeAllConnections();
    feeds?.server.close();
  });

  it('answers calls and refuses the one past the limit with the per-gateway message', async () => {
    const first = client.callTool({
      name: 'import_events',
      arguments: { calendarId, url: `${feeds.url}/one` },
    });
    await until(() => feeds.seen.includes('/one'), 10_000);
    const second = await client.callTool({
      name: 'import_events',
      arguments: { calendarId, url: `${feeds.url}/two` },
    });
    expect(second.isError).toBe(true);
    expect(textOf(second)).toMatch(
      /^This API key already has 1 calls running and 0 waiting \(MCP_MAX_CONCURRENT_PER_KEY 1/,
    );
    feeds.release('/one');
    const done = await first;
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(gateway.logs.join('')).toContain('per-key concurrency is limited per gateway');
  });
});
