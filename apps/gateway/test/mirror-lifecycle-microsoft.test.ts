/**
 * Graph subscriptions over a mirrored Outlook calendar's life, through a real gateway whose worker
 * runs in process, Postgres, pg-boss and the Graph emulator over HTTP, read with the MCP SDK client:
 * - a PUBLIC_URL that is not public (http on loopback) opens no subscription, and one Graph cannot
 *   reach (push forced on, nothing listening there) fails Graph's validation and opens none
 *   either; both times the mirror follows changes made in Outlook by polling;
 * - with push on, a subscription near its end is renewed by the planner's pass (the new one opens
 *   before the old one is deleted at Graph) and notifications arrive on the new one;
 * - a calendar taken out of the mirror has its subscription deleted at Graph, and disconnecting
 *   the account (the dashboard's DELETE /api/v1/connections/:id) deletes every subscription of
 *   the account at Graph and leaves no mirror row behind.
 */
import { startBoss } from '@calgate/scheduler';
import { freePort, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIRROR_SYNC_QUEUE } from '../src/mirror/jobs.ts';
import { MIRROR_PLAN_QUEUE } from '../src/mirror/planner.ts';
import { call, sessionFor } from './api-client.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
import { testDays } from './test-days.ts';
import { callOk } from './tool-calls.ts';

const ANN = 'ann@contoso.com';
const POLL_S = 5;
const MIRROR_TABLES = [
  'mirror_events',
  'mirror_sync_state',
  'mirror_changes',
  'mirror_reads',
  'mirror_channels',
];
const { at, outlookTimed } = testDays(7);
const window = { timeMin: at(-1, 0), timeMax: at(30, 0) };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Stack {
  ms: TestMicrosoftEmulator;
  gw: TestGateway;
  /** Where the gateway listens (its PUBLIC_URL only when push can reach it). */
  url: string;
  tenant: { tenantId: string; keyId: string; secret: string };
  outlook: ConnectedOutlook;
  client: Client;
  boss: PgBoss;
  close(): Promise<void>;
}

/**
 * The emulator with Ann's two calendars, a gateway (worker in process, polling every POLL_S
 * seconds, reads never waiting for a sync) whose PUBLIC_URL is `publicUrl(own address)`, and Ann
 * connected with write access. Each calendar is read once, which queues its first sync (and
 * makes it a recently read calendar the planner polls); returns once both are synced.
 */
async function startStack(publicUrl: (own: string) => string, env: Record<string, string>): Promise<Stack> {
  const ms = await startTestMicrosoftEmulator({
    users: [
      {
        email: ANN,
        timeZone: 'UTC',
        calendars: [
          { name: 'Calendar', events: [outlookTimed('Planning', 0, 9, 10)] },
          { name: 'Side', events: [outlookTimed('Side meeting', 1, 9, 10)] },
        ],
      },
    ],
  });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const gw = await startTestGateway({
    ...ms.env,
    ...HIGH_RATE_LIMITS,
    PORT: String(port),
    PUBLIC_URL: publicUrl(url),
    WORKER_IN_PROCESS: 'true',
    MIRROR_POLL_INTERVAL: String(POLL_S),
    MIRROR_MAX_STALENESS: '3600',
    ...env,
  });
  const tenant = await gw.seedTenant('Acme');
  const outlook = await connectOutlookAccount(gw, ms, tenant.tenantId, [tenant.keyId], ANN, 'write');
  const client = await connectClient(gw.mcpUrl, tenant.secret);
  const boss = await startBoss({ databaseUrl: gw.db.url, role: 'producer' });
  const stack: Stack = {
    ms,
    gw,
    url,
    tenant,
    outlook,
    client,
    boss,
    async close() {
      await client.close();
      await boss.stop({ graceful: false });
      await gw.stop();
      await ms.close();
    },
  };
  for (const name of ['Calendar', 'Side']) {
    await until(async () => (await listed(stack, name)).syncedAt !== undefined, 20_000, 200);
  }
  return stack;
}

/** list_events of one of Ann's calendars over MCP: its summaries and when the mirror last synced. */
async function listed(stack: Stack, name: string): Promise<{ summaries: string[]; syncedAt?: string }> {
  const out = (await callOk(stack.client, 'list_events', {
    calendarId: stack.outlook.calendars[name],
    ...window,
    format: 'json',
  })) as { events: { summary?: string }[]; syncedAt?: string };
  return {
    summaries: out.events.map((event) => event.summary ?? ''),
    ...(out.syncedAt === undefined ? {} : { syncedAt: out.syncedAt }),
  };
}

async function syncReasons(stack: Stack, calendarId: string): Promise<string[]> {
  const { rows } = await stack.gw.db.pool.query<{ reason: string }>(
    `SELECT data->>'reason' AS reason FROM pgboss.job WHERE name = $1 AND singleton_key = $2 ORDER BY created_on`,
    [MIRROR_SYNC_QUEUE, calendarId],
  );
  return rows.map((row) => row.reason);
}

async function count(stack: Stack, table: string, calendarId: string): Promise<number> {
  const { rows } = await stack.gw.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE calendar_id = $1`,
    [calendarId],
  );
  return rows[0]?.n ?? 0;
}

async function channelRows(stack: Stack, calendarId: string) {
  const { rows } = await stack.gw.db.pool.query<{
    channel_id: string;
    resource_id: string;
    expiration: Date;
  }>('SELECT channel_id, resource_id, expiration FROM mirror_channels WHERE calendar_id = $1', [calendarId]);
  return rows;
}

/** Asks for a planner pass and waits until one that started after the request has completed. */
async function planPass(stack: Stack): Promise<void> {
  const asked = (await stack.gw.db.pool.query<{ at: Date }>('SELECT now() AS at')).rows[0]?.at;
  await stack.boss.send(MIRROR_PLAN_QUEUE, {});
  await until(async () => {
    const { rows } = await stack.gw.db.pool.query(
      `SELECT 1 FROM pgboss.job WHERE name = $1 AND state = 'completed' AND started_on > $2`,
      [MIRROR_PLAN_QUEUE, asked],
    );
    return rows.length > 0;
  }, 20_000);
}

/** Someone adds an event in Outlook itself. */
async function addInOutlook(stack: Stack, name: string, subject: string, day: number): Promise<void> {
  const created = await stack.ms.editDirectly(
    ANN,
    'POST',
    `/me/calendars/${stack.outlook.externalIds[name]}/events`,
    outlookTimed(subject, day, 14, 15),
  );
  expect(created.status).toBe(201);
}

/**
 * A change made in Outlook is not in a read at once (reads never wait for a sync here), and is
 * after the poll interval has passed and the planner's pass has polled the calendar.
 */
async function followedByPolling(stack: Stack, subject: string): Promise<void> {
  const calendarId = stack.outlook.calendars.Calendar as string;
  const polls = (await syncReasons(stack, calendarId)).filter((reason) => reason === 'poll').length;
  await addInOutlook(stack, 'Calendar', subject, 2);
  expect((await listed(stack, 'Calendar')).summaries).toEqual(['Planning']);
  await sleep(POLL_S * 1000 + 500);
  await planPass(stack);
  await until(async () => (await listed(stack, 'Calendar')).summaries.includes(subject), 20_000, 200);
  expect((await listed(stack, 'Calendar')).summaries).toEqual(['Planning', subject]);
  expect((await syncReasons(stack, calendarId)).filter((reason) => reason === 'poll').length).toBeGreaterThan(
    polls,
  );
}

describe('a PUBLIC_URL that is not public (http on loopback, MIRROR_PUSH unset)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack((own) => own, {});
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('opens no Graph subscription, and the mirror follows changes made in Outlook by polling', async () => {
    expect(
      stack.gw.logs.some(
        (line) => line.includes('"push":false') && line.includes('calendar mirror work started'),
      ),
    ).toBe(true);
    await followedByPolling(stack, 'Polled from Outlook');
    expect(stack.ms.admin.subscriptions()).toEqual([]);
    expect(stack.ms.admin.requests({ op: 'subscriptions.create' })).toEqual([]);
    for (const calendarId of Object.values(stack.outlook.calendars)) {
      expect(await count(stack, 'mirror_channels', calendarId)).toBe(0);
    }
  }, 60_000);
});

describe('a PUBLIC_URL Graph cannot reach (MIRROR_PUSH=true, nothing listening there)', () => {
  let stack: Stack;

  beforeAll(async () => {
    const nobody = await freePort();
    stack = await startStack(() => `http://127.0.0.1:${nobody}`, { MIRROR_PUSH: 'true' });
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
  });

  it("Graph's validation of the notification URL fails, no subscription is kept, and polling follows changes", async () => {
    // The worker tried once after each first sync; Graph refused: its validation request found nobody.
    await until(() => stack.ms.admin.requests({ op: 'subscriptions.create' }).length >= 2, 20_000);
    expect(
      stack.ms.admin.requests({ op: 'subscriptions.create' }).every((entry) => entry.status === 400),
    ).toBe(true);
    expect(stack.gw.logs.some((line) => line.includes('push channel not opened'))).toBe(true);
    const attempts = stack.ms.admin.requests({ op: 'subscriptions.create' }).length;
    expect(attempts).toBe(2);
    await followedByPolling(stack, 'Polled although unreachable');
    expect(stack.ms.admin.subscriptions()).toEqual([]);
    // Polls do not ask Graph again each time (nor does the pass): a failed open waits 15 minutes.
    expect(stack.ms.admin.requests({ op: 'subscriptions.create' })).toHaveLength(attempts);
    for (const calendarId of Object.values(stack.outlook.calendars)) {
      expect(await count(stack, 'mirror_channels', calendarId)).toBe(0);
      const { rows } = await stack.gw.db.pool.query(
        'SELECT status FROM mirror_sync_state WHERE calendar_id = $1',
        [calendarId],
      );
      expect(rows).toEqual([{ status: 'ok' }]);
    }
  }, 60_000);
});

describe('push on: subscriptions renewed, and deleted when a calendar or the account goes', () => {
  let stack: Stack;
  let calendarId = '';
  let sideId = '';

  /** Waits until the calendar has one subscription here and the same one at Graph; returns its id. */
  const subscribed = async (id: string, name: string): Promise<string> => {
    const externalId = stack.outlook.externalIds[name];
    await until(async () => {
      const rows = await channelRows(stack, id);
      const upstream = stack.ms.admin.subscriptions().filter((sub) => sub.calendarId === externalId);
      return rows.length === 1 && upstream.length === 1 && upstream[0]?.id === rows[0]?.resource_id;
    }, 20_000);
    return (await channelRows(stack, id))[0]?.resource_id as string;
  };
  const deletedAtGraph = (id: string) =>
    stack.ms.admin
      .requests({ op: 'subscriptions.delete' })
      .filter((entry) => entry.path.endsWith(`/subscriptions/${id}`))
      .map((entry) => entry.status);

  beforeAll(async () => {
    stack = await startStack((own) => own, { MIRROR_PUSH: 'true' });
    calendarId = stack.outlook.calendars.Calendar as string;
    sideId = stack.outlook.calendars.Side as string;
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('each synced calendar gets a subscription that ends when Graph says, within what Graph allows', async () => {
    const id = await subscribed(calendarId, 'Calendar');
    await subscribed(sideId, 'Side');
    const [row] = await channelRows(stack, calendarId);
    const upstream = stack.ms.admin.subscriptions().find((sub) => sub.id === id);
    expect(row?.expiration.getTime()).toBe(Date.parse(upstream?.expirationDateTime ?? ''));
    const left = (row?.expiration.getTime() ?? 0) - Date.now();
    // Days, not minutes: more than the day ahead of its end at which it is renewed.
    expect(left).toBeGreaterThan(2 * 86_400_000);
    expect(left).toBeLessThanOrEqual(4_230 * 60_000);
  }, 60_000);

  it('a subscription near its end is renewed by the pass: the new one opens, the old one is deleted at Graph', async () => {
    const old = await subscribed(calendarId, 'Calendar');
    // Within the renewal window: an hour left.
    await stack.gw.db.pool.query(
      `UPDATE mirror_channels SET expiration = now() + interval '1 hour' WHERE calendar_id = $1`,
      [calendarId],
    );
    await planPass(stack);
    await until(async () => {
      const rows = await channelRows(stack, calendarId);
      return rows.length === 1 && rows[0]?.resource_id !== old && deletedAtGraph(old).length === 1;
    }, 20_000);
    const fresh = await subscribed(calendarId, 'Calendar');
    expect(fresh).not.toBe(old);
    expect(deletedAtGraph(old)).toEqual([204]);
    expect(stack.ms.admin.subscriptions().some((sub) => sub.id === old)).toBe(false);
    // Changes in Outlook arrive on the new subscription (polling alone would wait for a pass).
    await addInOutlook(stack, 'Calendar', 'After renewal', 3);
    await stack.ms.admin.notificationsIdle();
    expect(
      stack.ms.admin
        .notifications()
        .filter((record) => record.subscriptionId === fresh)
        .map((record) => [record.changeType, record.status]),
    ).toEqual([['created', 202]]);
    await until(
      async () => (await listed(stack, 'Calendar')).summaries.includes('After renewal'),
      20_000,
      200,
    );
  }, 60_000);

  it('a calendar taken out of the mirror (disabled) has its subscription deleted at Graph by the next pass', async () => {
    const id = await subscribed(sideId, 'Side');
    await stack.gw.db.pool.query('UPDATE calendars SET enabled = false WHERE id = $1', [sideId]);
    await planPass(stack);
    await until(
      async () => (await channelRows(stack, sideId)).length === 0 && deletedAtGraph(id).length === 1,
      20_000,
    );
    expect(deletedAtGraph(id)).toEqual([204]);
    expect(stack.ms.admin.subscriptions().map((sub) => sub.calendarId)).toEqual([
      stack.outlook.externalIds.Calendar,
    ]);
    // Enabled again: the next pass subscribes again.
    await stack.gw.db.pool.query('UPDATE calendars SET enabled = true WHERE id = $1', [sideId]);
    await planPass(stack);
    expect(await subscribed(sideId, 'Side')).not.toBe(id);
  }, 60_000);

  it('disconnecting the account deletes its subscriptions at Graph and its mirror', async () => {
    const ids = [await subscribed(calendarId, 'Calendar'), await subscribed(sideId, 'Side')];
    for (const id of [calendarId, sideId]) {
      expect(await count(stack, 'mirror_events', id)).toBeGreaterThan(0);
    }
    const browser = await sessionFor(stack.gw, stack.tenant.tenantId);
    const removed = await call(stack.gw, 'DELETE', `/api/v1/connections/${stack.outlook.connectionId}`, {
      as: browser,
      // The dashboard's origin is PUBLIC_URL, the gateway's own address here.
      headers: { origin: stack.url },
    });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    // Deleted at Graph while the token still worked, not left to run out.
    for (const id of ids) {
      expect(deletedAtGraph(id)).toEqual([204]);
    }
    expect(stack.ms.admin.subscriptions()).toEqual([]);
    const cleanup = stack.gw.logs.find((line) => line.includes('mirror of the account deleted'));
    expect(cleanup).toContain('"channels":2');
    for (const id of [calendarId, sideId]) {
      for (const table of MIRROR_TABLES) {
        expect(await count(stack, table, id), `${table} of ${id}`).toBe(0);
      }
    }
    // A change in Outlook now notifies nobody.
    const sent = stack.ms.admin.notifications().length;
    await addInOutlook(stack, 'Calendar', 'After disconnecting', 4);
    await stack.ms.admin.notificationsIdle();
    expect(stack.ms.admin.notifications()).toHaveLength(sent);
  }, 60_000);

  it("connecting the account again (as the dashboard does) queues its calendars' first syncs at once, and subscribes them again", async () => {
    const connected = await stack.gw.runtime.deps.dashboard.microsoft.connectOAuth(
      stack.tenant.tenantId,
      { refreshToken: stack.ms.refreshToken(ANN) },
      { access: 'read', keyIds: [stack.tenant.keyId] },
    );
    expect(connected.accountEmail).toBe(ANN);
    const { rows } = await stack.gw.db.pool.query<{ id: string; external_id: string }>(
      'SELECT id, external_id FROM calendars WHERE connection_id = $1',
      [connected.connectionId],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      // Queued by the connect itself, not left to the planner's next pass.
      expect(await syncReasons(stack, row.id)).toEqual(['initial']);
      await until(
        async () =>
          (await channelRows(stack, row.id)).length === 1 &&
          stack.ms.admin.subscriptions().some((sub) => sub.calendarId === row.external_id),
        20_000,
      );
    }
  }, 60_000);
});
