/**
 * A mirror's life with the account it belongs to, through a real gateway whose worker runs in
 * process, Postgres, pg-boss and the Google emulator over HTTP: connecting queues the first sync
 * (gateways only enqueue), the worker syncs and then opens a push channel; a calendar found on
 * reconnecting gets its own; a disabled calendar's channel is stopped; disconnecting stops every
 * channel at Google and leaves no mirror row behind.
 */
import { until } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meeting, type PushStack, ROBOT, startPushStack } from './mirror-push-fixture.ts';

const ANN = 'ann@example.com';
const SHARED = 'shared@group.calendar.google.com';
const MIRROR_TABLES = [
  'mirror_events',
  'mirror_sync_state',
  'mirror_changes',
  'mirror_reads',
  'mirror_channels',
];

let stack: PushStack;

const channelsUpstream = (externalId: string) =>
  stack.emulator.admin.channels().filter((channel) => channel.calendarId === externalId);

async function channelRows(calendarId: string): Promise<{ channel_id: string }[]> {
  const { rows } = await stack.gw.db.pool.query<{ channel_id: string }>(
    'SELECT channel_id FROM mirror_channels WHERE calendar_id = $1',
    [calendarId],
  );
  return rows;
}

/** Waits until the calendar is synced and watched: one channel here, the same one at Google. */
async function watched(calendarId: string, externalId: string): Promise<string> {
  await until(
    async () => (await channelRows(calendarId)).length === 1 && channelsUpstream(externalId).length === 1,
    20_000,
  );
  const [row] = await channelRows(calendarId);
  const [upstream] = channelsUpstream(externalId);
  expect(upstream?.id).toBe(row?.channel_id);
  expect(upstream?.address).toBe(`${stack.url}/api/google/push`);
  return row?.channel_id as string;
}

beforeAll(async () => {
  stack = await startPushStack({
    accounts: [
      { email: ANN, events: [meeting('Planning', 1), meeting('Review', 2), meeting('Café', 3)] },
      {
        email: 'dora@example.com',
        calendars: [
          {
            id: SHARED,
            summary: 'Shared with the robot',
            shares: [{ email: ROBOT, role: 'writer' }],
            events: [meeting('Robot standup', 4)],
          },
        ],
      },
    ],
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('mirror lifecycle', () => {
  let annCalendar = '';

  it('connecting an account queues its first sync at once; the worker syncs it and opens a push channel', async () => {
    const { gw, tenantId } = stack;
    await gw.runtime.google.connectOAuth(
      tenantId,
      { email: ANN, refreshToken: stack.refreshToken(ANN) },
      { access: 'read', keyIds: [] },
    );
    annCalendar = await stack.calendarIdOf(ANN);
    // Queued by the connect itself (the planner's next pass is up to a minute away).
    expect(await stack.syncReasons(annCalendar)).toEqual(['initial']);
    await watched(annCalendar, ANN);
    expect(await stack.summaries(annCalendar)).toEqual(['Café', 'Planning', 'Review']);
    const { rows } = await gw.db.pool.query(
      'SELECT status, full_sync_at IS NOT NULL AS full FROM mirror_sync_state WHERE calendar_id = $1',
      [annCalendar],
    );
    expect(rows).toEqual([{ status: 'ok', full: true }]);
  }, 60_000);

  it('a calendar shared with the service account is synced and watched through the service account', async () => {
    await stack.gw.runtime.google.connectServiceAccountCalendar(stack.tenantId, SHARED, {
      access: 'read',
      keyIds: [],
    });
    const calendarId = await stack.calendarIdOf(SHARED);
    expect(await stack.syncReasons(calendarId)).toEqual(['initial']);
    await watched(calendarId, SHARED);
    expect(await stack.summaries(calendarId)).toEqual(['Robot standup']);
  }, 60_000);

  it('a calendar found when the account is connected again gets its first sync; known ones a reconnect sync', async () => {
    const created = await stack.asAccount(ANN, 'POST', '/calendars', { summary: 'Side project' });
    expect(created.status).toBe(200);
    const { id: externalId } = (await created.json()) as { id: string };
    const added = await stack.asAccount(
      ANN,
      'POST',
      `/calendars/${encodeURIComponent(externalId)}/events`,
      meeting('Kick-off', 5),
    );
    expect(added.status).toBe(200);
    await stack.gw.runtime.google.connectOAuth(
      stack.tenantId,
      { email: ANN, refreshToken: stack.refreshToken(ANN) },
      { access: 'read', keyIds: [] },
    );
    const calendarId = await stack.calendarIdOf(externalId);
    expect(await stack.syncReasons(calendarId)).toEqual(['initial']);
    expect((await stack.syncReasons(annCalendar)).at(-1)).toBe('reconnect');
    await watched(calendarId, externalId);
    expect(await stack.summaries(calendarId)).toEqual(['Kick-off']);
    // The known calendar kept its one channel: a sync after a reconnect opens no second one.
    await watched(annCalendar, ANN);
  }, 60_000);

  it('a calendar taken out of the mirror (disabled) has its channel stopped at Google by the next pass', async () => {
    const sharedId = await stack.calendarIdOf(SHARED);
    await stack.gw.db.pool.query('UPDATE calendars SET enabled = false WHERE id = $1', [sharedId]);
    await stack.planPass();
    await until(
      async () => channelsUpstream(SHARED).length === 0 && (await channelRows(sharedId)).length === 0,
      20_000,
    );
    // Enabled again: the next pass opens a channel again.
    await stack.gw.db.pool.query('UPDATE calendars SET enabled = true WHERE id = $1', [sharedId]);
    await stack.planPass();
    await watched(sharedId, SHARED);
  }, 60_000);

  it('disconnecting stops every channel of the account at Google and deletes its mirror', async () => {
    const { gw, tenantId } = stack;
    const { rows } = await gw.db.pool.query<{ id: string; connection_id: string }>(
      'SELECT id, connection_id FROM calendars WHERE tenant_id = $1 AND connection_id = (SELECT connection_id FROM calendars WHERE id = $2)',
      [tenantId, annCalendar],
    );
    expect(rows.length).toBe(2);
    for (const row of rows) {
      expect(await stack.count('mirror_events', row.id)).toBeGreaterThan(0);
    }
    const before = stack.emulator.admin.channels().filter((channel) => channel.calendarId !== SHARED);
    expect(before).toHaveLength(2);

    await gw.runtime.google.disconnect(tenantId, rows[0]?.connection_id as string);
    // The disconnect stopped both channels and deleted the mirror itself (not only by cascade).
    const cleanup = gw.logs.find((line) => line.includes('mirror of the account deleted'));
    expect(cleanup).toContain('"channels":2');
    expect(cleanup).toMatch(/"events":[1-9]/);
    // Stopped at Google (before the token was revoked), not left to run out.
    expect(stack.emulator.admin.channels().map((channel) => channel.calendarId)).toEqual([SHARED]);
    for (const row of rows) {
      for (const table of MIRROR_TABLES) {
        expect(await stack.count(table, row.id), `${table} of ${row.id}`).toBe(0);
      }
    }
    // A change upstream now reaches nobody: no channel of Ann's is left to deliver it.
    const sent = stack.emulator.admin.notifications().length;
    expect(
      (await stack.asAccount(ANN, 'POST', `/calendars/${encodeURIComponent(ANN)}/events`, meeting('After')))
        .status,
    ).toBe(200);
    await stack.emulator.admin.notificationsIdle();
    expect(stack.emulator.admin.notifications()).toHaveLength(sent);
    // The service account's calendar is untouched.
    const sharedId = await stack.calendarIdOf(SHARED);
    await until(async () => (await stack.count('mirror_events', sharedId)) === 1, 5_000);
  }, 60_000);
});
