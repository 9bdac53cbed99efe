/** Push-notification delivery: retries, give-up, and the admin drop/delay fault. */
import { describe, expect, it } from 'vitest';
import { ANN } from './helpers.ts';
import { summary } from './receiver.ts';
import { meeting, useWatchFixture } from './watch-fixture.ts';

const f = useWatchFixture();

describe('delivery', () => {
  it('retries a receiver that fails twice, then delivers the same message', async () => {
    f.receiver.respondWith(503, 500);
    const channel = await f.watch(f.ann, 'primary');
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '').map(summary)).toEqual([
      { state: 'sync', number: 1, token: channel.token },
      { state: 'sync', number: 1, token: channel.token },
      { state: 'sync', number: 1, token: channel.token },
    ]);
    expect(f.emulator.admin.notifications()).toEqual([
      {
        channelId: channel.id,
        calendarId: ANN,
        messageNumber: 1,
        state: 'sync',
        outcome: 'delivered',
        attempts: 3,
        status: 200,
      },
    ]);
  });

  it('gives up after the retries, and does not retry a 4xx', async () => {
    f.receiver.respondWith(503, 503, 503, 503, 404);
    const channel = await f.watch(f.ann, 'primary');
    await f.ann.events.insert({ calendarId: 'primary', requestBody: meeting('Lost') });
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '')).toHaveLength(5);
    expect(
      f.emulator.admin.notifications().map((d) => [d.messageNumber, d.outcome, d.attempts, d.status]),
    ).toEqual([
      [1, 'failed', 4, 503],
      [2, 'failed', 1, 404],
    ]);
  });

  it('drops or delays notifications on an admin fault, so a polling fallback can be tested', async () => {
    f.emulator.admin.notificationFault({ action: { kind: 'drop' }, match: { calendarId: ANN }, times: 2 });
    const channel = await f.watch(f.ann, 'primary');
    await f.ann.events.insert({ calendarId: 'primary', requestBody: meeting('Dropped') });
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '')).toHaveLength(0);
    f.emulator.admin.notificationFault({ action: { kind: 'delay', ms: 150 } });
    const before = Date.now();
    await f.ann.events.insert({ calendarId: 'primary', requestBody: meeting('Late') });
    await f.settle();
    const late = f.receiver.forChannel(channel.id ?? '');
    // The lost messages still used their numbers: the receiver sees the gap.
    expect(late.map(summary)).toEqual([{ state: 'exists', number: 3, token: channel.token }]);
    expect((late[0]?.at ?? 0) - before).toBeGreaterThanOrEqual(140);
    expect(f.emulator.admin.notifications().map((d) => d.outcome)).toEqual([
      'dropped',
      'dropped',
      'delivered',
    ]);
  });

  it('takes the notification fault and lists channels over the admin HTTP API', async () => {
    const admin = (path: string, init?: RequestInit) => fetch(`${f.emulator.url}/__admin${path}`, init);
    const post = (body: unknown): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect((await admin('/faults/notifications', post({ action: { kind: 'explode' } }))).status).toBe(400);
    expect((await admin('/faults/notifications', post({ action: { kind: 'drop' }, times: 1 }))).status).toBe(
      204,
    );
    const channel = await f.watch(f.ann, 'primary');
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '')).toHaveLength(0);
    const listed = (await (await admin('/channels')).json()) as { items: Record<string, unknown>[] };
    expect(listed.items).toEqual([
      {
        id: channel.id,
        calendarId: ANN,
        address: f.receiver.url,
        resourceId: channel.resourceId,
        expiration: Number(channel.expiration),
        messageNumber: 1,
      },
    ]);
    const log = (await (await admin('/notifications')).json()) as { items: { outcome: string }[] };
    expect(log.items.map((d) => d.outcome)).toEqual(['dropped']);
  });
});
