/**
 * Outlook mailboxes' Graph limits across processes (real Redis): at most 4 requests in flight
 * per mailbox and 10,000 per 10 minutes, however many gateways and workers call Graph for it.
 * Two SharedMailboxLimits on two Redis connections stand for two processes against a counting
 * loopback server; a killed process (a real child) gives its slots back when their leases lapse;
 * and over MCP, a gateway waits for the slots another process holds and refuses, naming when to
 * try again, once another process has spent the mailbox's budget.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { connectRedis, redisReady } from '@calgate/locks';
import { type AccessTokenSource, GraphClient, MailboxLimiters } from '@calgate/providers';
import { freePort, redisUrl, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SharedMailboxLimits, type SharedMailboxLimitsOptions } from '../src/microsoft/mailbox-limits.ts';
import { OutageLog } from '../src/outage-log.ts';
import { connectClient, textOf } from './harness.ts';
import { type OutlookCalendarGateway, startOutlookCalendarGateway } from './microsoft-fixture.ts';
import { testDays } from './test-days.ts';
import { startWorker } from './workers.ts';

const HOLDER = fileURLToPath(new URL('./mailbox-holder.ts', import.meta.url));
const quiet = { warn: () => {}, info: () => {} };
const outage = () => new OutageLog(quiet, { dependency: 'redis', down: 'down', up: 'up' });
const tokens: AccessTokenSource = { token: async () => 'test-token', invalidate: () => {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another Calgate process using the mailbox's limits (mailbox-holder.ts), started and ready. */
async function startHolder(args: string[], ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [HOLDER, redisUrl(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk) => (err += String(chunk)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`holder not ${ready}: ${out} ${err}`)), 15_000);
    child.stdout?.on('data', (chunk) => {
      out += String(chunk);
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`holder exited (${code}): ${out} ${err}`));
    });
  });
  return child;
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('Graph limits per mailbox across processes (real Redis, counting loopback server)', () => {
  let server: Server;
  let origin: string;
  let inFlight = 0;
  let maxInFlight = 0;
  let seen = 0;
  let delayMs = 40;
  let first: Redis;
  let second: Redis;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    server = createServer((_request, response) => {
      seen += 1;
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"ok":true}');
      }, delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    first = connectRedis(redisUrl());
    second = connectRedis(redisUrl());
    await Promise.all([redisReady(first), redisReady(second)]);
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(killed));
  });
  afterAll(async () => {
    first.disconnect();
    second.disconnect();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const reset = (delay = 40) => {
    seen = 0;
    inFlight = 0;
    maxInFlight = 0;
    delayMs = delay;
  };
  const mailbox = () => `con_limits${Math.random().toString(36).slice(2)}`;
  /** Two processes' limits: the same Redis, two connections, nothing else shared. */
  const twoProcesses = (options: SharedMailboxLimitsOptions = {}) =>
    [
      new SharedMailboxLimits(first, outage(), options),
      new SharedMailboxLimits(second, outage(), options),
    ] as const;
  const graph = (limits: SharedMailboxLimits | MailboxLimiters, box: string) =>
    new GraphClient({ graphUrl: `${origin}/v1.0`, tokens, limiter: limits.for(box) });
  const get = (client: GraphClient, i: number) =>
    client.request({ path: `/me/events/e${i}`, operation: 'events.get' });

  it('never lets two processes have more than 4 requests of one mailbox in flight, and uses all 4', async () => {
    reset();
    const [a, b] = twoProcesses();
    const box = mailbox();
    const clients = [graph(a, box), graph(b, box), graph(a, box), graph(b, box)];
    await Promise.all(Array.from({ length: 40 }, (_, i) => get(clients[i % 4] as GraphClient, i)));
    expect(seen).toBe(40);
    expect(maxInFlight).toBe(4);

    // The same two processes' own limits, as before Redis kept them: 8 in flight.
    reset();
    const local = [new MailboxLimiters(), new MailboxLimiters()];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(graph(local[i % 2] as MailboxLimiters, box), i)),
    );
    expect(maxInFlight).toBe(8);

    // Another mailbox has its own 4 beside the first's.
    reset(60);
    const other = mailbox();
    await Promise.all(
      Array.from({ length: 16 }, (_, i) => get(graph(i % 2 === 0 ? a : b, i < 8 ? box : other), i)),
    );
    expect(maxInFlight).toBe(8);
  });

  it('holds a request while the budget frees within the wait a Retry-After would get, refuses beyond, naming when', async () => {
    reset(5);
    // A short window: the fourth request waits for it to pass (about 1 s), then goes.
    const [a, b] = twoProcesses({ budget: { limit: 3, windowMs: 900 } });
    const box = mailbox();
    const started = Date.now();
    await get(graph(a, box), 1);
    await get(graph(b, box), 2);
    await get(graph(a, box), 3);
    expect(Date.now() - started).toBeLessThan(800);
    await get(graph(b, box), 4);
    expect(seen).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    // A window of a minute: the budget is spent across both processes, and the eleventh request
    // is refused at once, with nothing sent.
    reset(5);
    const [c, d] = twoProcesses({ budget: { limit: 10, windowMs: 60_000 } });
    const spent = mailbox();
    await Promise.all(Array.from({ length: 10 }, (_, i) => get(graph(i % 2 === 0 ? c : d, spent), i)));
    expect(seen).toBe(10);
    const before = Date.now();
    for (const limits of [c, d]) {
      const refused = await get(graph(limits, spent), 11).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'rate_limited', retry: true });
      const { message, retryAfterMs } = refused as { message: string; retryAfterMs: number };
      expect(message).toMatch(
        /^Microsoft 365 allows 10 requests per mailbox every 1 minute, and this account's are spent; nothing was sent to Microsoft\. Try again in (1 min( \d+ s)?|\d+ s) \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\.$/,
      );
      expect(retryAfterMs).toBeGreaterThan(50_000);
      expect(retryAfterMs).toBeLessThanOrEqual(61_000);
    }
    expect(Date.now() - before).toBeLessThan(1000);
    expect(seen).toBe(10);
    // Another mailbox's budget is its own.
    await get(graph(c, mailbox()), 12);
    expect(seen).toBe(11);
  });

  it('keeps both limits within the process while Redis does not answer, noting the outage once', async () => {
    reset();
    const port = await freePort();
    const away = connectRedis(`redis://127.0.0.1:${port}`);
    const warnings: string[] = [];
    const log = {
      warn: (...args: unknown[]) => {
        warnings.push(String(args[1]));
      },
      info: () => {},
    };
    const limits = new SharedMailboxLimits(
      away,
      new OutageLog(log, { dependency: 'redis', down: 'Redis away', up: 'back' }),
      {
        budget: { limit: 12, windowMs: 60_000 },
      },
    );
    const box = mailbox();
    try {
      await Promise.all(Array.from({ length: 12 }, (_, i) => get(graph(limits, box), i)));
      expect(seen).toBe(12);
      expect(maxInFlight).toBe(4);
      await expect(get(graph(limits, box), 13)).rejects.toMatchObject({ code: 'rate_limited' });
      expect(seen).toBe(12);
      expect(warnings).toEqual(['Redis away']);
    } finally {
      away.disconnect();
    }
  });

  it("recovers a killed process's slots once their leases lapse, and not before", async () => {
    reset(5);
    const box = mailbox();
    const holder = await startHolder([box, 'hold', '4', '1000'], 'held');
    children.push(holder);
    const [a] = twoProcesses();
    let done = false;
    const waiting = get(graph(a, box), 1).then(() => {
      done = true;
    });
    // The holder renews its leases while it lives: three lease lengths later it still has them.
    await sleep(3000);
    expect(done).toBe(false);
    expect(seen).toBe(0);
    const killedAt = Date.now();
    await killed(holder);
    await waiting;
    expect(seen).toBe(1);
    expect(Date.now() - killedAt).toBeLessThan(2500);
    // All 4 slots came back.
    reset(60);
    await Promise.all(Array.from({ length: 8 }, (_, i) => get(graph(a, box), i)));
    expect(maxInFlight).toBe(4);
  });
});

describe('over MCP: a gateway keeps the mailbox limits other processes share', () => {
  const ANN = 'ann@contoso.com';
  const { at } = testDays(3);
  let setup: OutlookCalendarGateway;
  let client: Client;
  let calendarId: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    setup = await startOutlookCalendarGateway({
      seed: {
        users: [
          {
            email: ANN,
            timeZone: 'W. Europe Standard Time',
            calendars: [{ name: 'Calendar', events: [] }],
          },
        ],
      },
      // Listings ask Graph (no mirror), so each one is a Graph request of the mailbox.
      env: { MIRROR_READS: 'false' },
      connect: { email: ANN, access: 'write' },
    });
    client = await connectClient(setup.gw.mcpUrl, setup.tenant.secret);
    calendarId = setup.outlook.calendars.Calendar as string;
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(killed));
  });
  afterAll(async () => {
    await client?.close();
    await setup?.gw.stop();
    await setup?.ms.close();
  });

  const list = () =>
    client.callTool({
      name: 'list_events',
      arguments: { calendarId, timeMin: at(0, 0), timeMax: at(2, 0) },
    });

  it('waits for the slots another process holds, and gets them when that process dies and its leases lapse', async () => {
    const warm = await list();
    expect(warm.isError, textOf(warm)).toBeFalsy();
    const holder = await startHolder([setup.outlook.connectionId, 'hold', '4', '1500'], 'held');
    children.push(holder);
    const requests = setup.ms.admin.requests().length;
    let settled = false;
    const pending = list().then((result) => {
      settled = true;
      return result;
    });
    await sleep(2500);
    expect(settled).toBe(false);
    // Nothing reached Graph while the other process held every slot (the emulator would have refused a fifth).
    expect(setup.ms.admin.requests().length).toBe(requests);
    const killedAt = Date.now();
    await killed(holder);
    const result = await pending;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(Date.now() - killedAt).toBeLessThan(3500);
    expect(setup.ms.admin.requests().filter((request) => request.status === 429)).toEqual([]);
  });

  it('refuses a listing once another process has spent the mailbox budget, naming when to try again, with nothing sent', async () => {
    const holder = await startHolder([setup.outlook.connectionId, 'spend', '10000'], 'spent');
    children.push(holder);
    const requests = setup.ms.admin.requests().length;
    const result = await list();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /Microsoft 365 allows 10,000 requests per mailbox every 10 minutes, and this account's are spent; nothing was sent to Microsoft\. Try again in \d+ min( \d+ s)? \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\./,
    );
    expect(setup.ms.admin.requests().length).toBe(requests);
  });
});

describe('a `calgate worker` keeps the mailbox limits the gateways share', () => {
  const ANN = 'ann@contoso.com';
  let setup: OutlookCalendarGateway;
  const running = new Set<ChildProcess>();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    setup = await startOutlookCalendarGateway({
      seed: {
        users: [
          { email: ANN, timeZone: 'W. Europe Standard Time', calendars: [{ name: 'Calendar', events: [] }] },
        ],
      },
      connect: { email: ANN, access: 'read' },
    });
  });
  afterAll(async () => {
    await Promise.all([...children, ...running].map(killed));
    await setup?.gw.stop();
    await setup?.ms.close();
  });

  it("syncs the mailbox's calendar only once the slots another process held come back", {
    timeout: 90_000,
  }, async () => {
    const calendarId = setup.outlook.calendars.Calendar as string;
    const syncedAt = async () =>
      (
        await setup.gw.db.pool.query<{ synced_at: Date | null }>(
          'SELECT synced_at FROM mirror_sync_state WHERE calendar_id = $1',
          [calendarId],
        )
      ).rows[0]?.synced_at ?? null;
    const requests = (op: string) => setup.ms.admin.requests().filter((request) => request.op === op).length;
    const holder = await startHolder([setup.outlook.connectionId, 'hold', '4', '1500'], 'held');
    children.push(holder);
    // The worker plans the calendar's first sync as it starts.
    await startWorker(
      { ...setup.ms.env, DATABASE_URL: setup.gw.db.url, REDIS_URL: redisUrl(), MIRROR_PUSH: 'false' },
      running,
    );
    // Its first Graph request waits in the mailbox's queue in Redis (SharedMailboxLimits' keys).
    const redis = connectRedis(redisUrl());
    try {
      await redisReady(redis);
      await until(
        async () => (await redis.zcard(`calgate:graph:slots:{${setup.outlook.connectionId}}:w`)) > 0,
        30_000,
      );
    } finally {
      redis.disconnect();
    }
    await sleep(2500);
    expect(requests('calendarView.delta')).toBe(0);
    expect(await syncedAt()).toBeNull();
    await killed(holder);
    await until(async () => (await syncedAt()) !== null, 30_000);
    expect(requests('calendarView.delta')).toBeGreaterThan(0);
    expect(setup.ms.admin.requests().filter((request) => request.status === 429)).toEqual([]);
  });
});
