/**
 * A `calgate worker` process, not the gateway, sees the mirror's change: it publishes the calendar
 * on Redis, and the gateway (which runs no worker) tells the listen stream of a key that may read
 * it — not the stream of a key without the grant. The change is appended to the mirror's change
 * feed as a sync or write-through appends it.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { redisUrl, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient2026, startTestGateway, type TestGateway } from './harness.ts';
import { startWorker } from './workers.ts';

const encryptionKey = randomBytes(32).toString('base64');
const workers = new Set<ChildProcess>();
const clients: Client[] = [];
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ ENCRYPTION_KEY: encryptionKey });
  await startWorker(
    { DATABASE_URL: gw.db.url, ENCRYPTION_KEY: encryptionKey, REDIS_URL: redisUrl() },
    workers,
  );
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
  await gw?.stop();
});

describe('resource updates from a worker process', () => {
  it('reach the listen stream of a key that reads the calendar, and no other', async () => {
    const owner = await gw.seedTenant('Worker changes');
    const calendarId = await gw.localCalendar(owner.tenantId, 'Team');
    await gw.grant(owner.tenantId, owner.keyId, calendarId, { read: true, write: false });
    const { key: other, secret: otherSecret } = await gw.runtime.keys.create(owner.tenantId, {
      name: 'other',
    });
    expect(other.id).not.toBe(owner.keyId);
    const uri = `calgate://calendars/${encodeURIComponent(calendarId)}`;

    const heard = new Map<string, string[]>();
    for (const [name, secret] of [
      ['reader', owner.secret],
      ['other', otherSecret],
    ] as const) {
      const client = await connectClient2026(gw.mcpUrl, secret);
      clients.push(client);
      heard.set(name, []);
      client.setNotificationHandler('notifications/resources/updated', (notification) => {
        heard.get(name)?.push(notification.params.uri);
      });
      await client.listen({ resourceSubscriptions: [uri] });
    }

    await gw.db.pool.query(
      `INSERT INTO mirror_changes (tenant_id, calendar_id, event_id, kind) VALUES ($1, $2, 'evt_1', 'upsert')`,
      [owner.tenantId, calendarId],
    );
    await until(async () => (heard.get('reader')?.length ?? 0) > 0, 10_000);
    expect(heard.get('reader')).toEqual([uri]);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(heard.get('other')).toEqual([]);
  }, 30_000);
});
