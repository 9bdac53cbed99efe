/**
 * A worker publishes the calendars the mirror saw change only while some gateway has a
 * subscriptions/listen stream open: with none, nothing goes out on Redis; a stream that has just
 * opened hears a change made right after its listen request was answered. The gateway and worker
 * use a Redis database of their own so other test files' listeners do not count here (pub/sub
 * channels are shared by all databases; messages are told apart by tenant).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connectRedis, redisReady } from '@calgate/locks';
import { redisUrl, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CALENDAR_CHANGES_CHANNEL,
  CALENDAR_CHANGES_FEED,
  decodeCalendarChanges,
} from '../src/calendar-changes.ts';
import { connectClient2026, startTestGateway, type TestGateway } from './harness.ts';
import { startWorker } from './workers.ts';

const encryptionKey = randomBytes(32).toString('base64');
const REDIS = `${redisUrl()}/11`;
const workers = new Set<ChildProcess>();
const clients: Client[] = [];
let gw: TestGateway;
let subscriber: Redis;
/** Every calendar-change message on Redis, decoded. */
const published: { tenantId: string; calendarId: string }[][] = [];

beforeAll(async () => {
  subscriber = connectRedis(redisUrl(), { name: 'calendar-changes-test' });
  await redisReady(subscriber, 5_000);
  subscriber.on('message', (_channel: string, payload: string) =>
    published.push(decodeCalendarChanges(payload)),
  );
  await subscriber.subscribe(CALENDAR_CHANGES_CHANNEL);
  gw = await startTestGateway({ ENCRYPTION_KEY: encryptionKey, REDIS_URL: REDIS });
  await startWorker({ DATABASE_URL: gw.db.url, ENCRYPTION_KEY: encryptionKey, REDIS_URL: REDIS }, workers);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await Promise.all(
    [...workers].map(
      (child) =>
        new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGTERM');
        }),
    ),
  );
  subscriber?.disconnect();
  await gw?.stop();
});

async function change(tenantId: string, calendarId: string): Promise<bigint> {
  const { rows } = await gw.db.pool.query(
    `INSERT INTO mirror_changes (tenant_id, calendar_id, event_id, kind) VALUES ($1, $2, 'evt_1', 'upsert') RETURNING id`,
    [tenantId, calendarId],
  );
  return BigInt(rows[0].id);
}

/** Waits until the publisher's feed cursor has handled change `id` (it publishes before it moves). */
async function handled(id: bigint): Promise<void> {
  await until(async () => {
    const { rows } = await gw.db.pool.query('SELECT last_id FROM mirror_feed_cursors WHERE consumer = $1', [
      CALENDAR_CHANGES_FEED,
    ]);
    return rows.length > 0 && BigInt(rows[0].last_id) >= id;
  }, 15_000);
}

const publishesFor = (tenantId: string) =>
  published.filter((changes) => changes.some((entry) => entry.tenantId === tenantId)).length;

describe('calendar changes are published only while a gateway listens', () => {
  it('with no listen stream open anywhere, a change is handled and nothing is published', async () => {
    const { tenantId } = await gw.seedTenant('Nobody listens');
    const calendarId = await gw.localCalendar(tenantId, 'Quiet');
    for (let i = 0; i < 3; i++) {
      await handled(await change(tenantId, calendarId));
    }
    // Published messages arrive within milliseconds; give them time anyway.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(publishesFor(tenantId)).toBe(0);
  }, 40_000);

  it('a stream that has just opened hears a change made right after its listen was answered', async () => {
    const owner = await gw.seedTenant('Someone listens');
    const calendarId = await gw.localCalendar(owner.tenantId, 'Team');
    await gw.grant(owner.tenantId, owner.keyId, calendarId, { read: true, write: false });
    const uri = `calgate://calendars/${encodeURIComponent(calendarId)}`;
    const client = await connectClient2026(gw.mcpUrl, owner.secret);
    clients.push(client);
    const heard: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      heard.push(notification.params.uri);
    });
    await client.listen({ resourceSubscriptions: [uri] });
    // No pause: the change is in the feed as soon as the stream is open.
    const id = await change(owner.tenantId, calendarId);
    await until(async () => heard.length > 0, 10_000);
    expect(heard).toEqual([uri]);
    await handled(id);
    expect(publishesFor(owner.tenantId)).toBe(1);
  }, 40_000);
});
