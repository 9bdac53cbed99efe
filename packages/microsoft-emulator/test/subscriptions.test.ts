import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Loose, start } from './helpers.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A notification receiver: echoes validation tokens (unless told not to) and keeps what it got. */
async function receiver(echo = true) {
  const received: Loose[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const token = url.searchParams.get('validationToken');
    if (token !== null) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(echo ? token : 'something else');
      return;
    }
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(202);
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, received };
}

const soon = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const when = (dateTime: string) => ({ dateTime, timeZone: 'UTC' });

describe('change notifications', () => {
  it('validates the receiver, then notifies it of created, updated and deleted events with its clientState', async () => {
    const { graph, calendarId, emulator } = await start();
    const cal = calendarId('Team');
    const hook = await receiver();
    const sub = await graph('/subscriptions', {
      method: 'POST',
      body: {
        changeType: 'created,updated,deleted',
        notificationUrl: hook.url,
        resource: `me/calendars/${cal}/events`,
        expirationDateTime: soon(60),
        clientState: 'secret-state',
      },
    });
    expect(sub.status).toBe(201);
    expect(sub.body).toMatchObject({ changeType: 'created,updated,deleted', clientState: 'secret-state' });
    const made = await graph(`/me/calendars/${cal}/events`, {
      method: 'POST',
      body: { subject: 'n', start: when('2026-09-01T09:00:00'), end: when('2026-09-01T10:00:00') },
    });
    await graph(`/me/events/${made.body.id}`, { method: 'PATCH', body: { subject: 'n2' } });
    await graph(`/me/events/${made.body.id}`, { method: 'DELETE' });
    // A change in another calendar is not this subscription's.
    await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      body: { subject: 'other', start: when('2026-09-01T09:00:00'), end: when('2026-09-01T10:00:00') },
    });
    await emulator.admin.notificationsIdle();
    const items = hook.received.map((b) => b.value[0]);
    expect(items.map((n) => n.changeType)).toEqual(['created', 'updated', 'deleted']);
    expect(items[0]).toMatchObject({
      subscriptionId: sub.body.id,
      clientState: 'secret-state',
      resourceData: { id: made.body.id, '@odata.type': '#Microsoft.Graph.Event' },
    });
    expect(emulator.admin.notifications().map((n) => n.status)).toEqual([202, 202, 202]);
  });

  it('refuses a receiver that does not echo the token, and expirations past 10,080 minutes', async () => {
    const { graph } = await start();
    const deaf = await receiver(false);
    const refused = await graph('/subscriptions', {
      method: 'POST',
      body: {
        changeType: 'updated',
        notificationUrl: deaf.url,
        resource: 'me/events',
        expirationDateTime: soon(60),
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/validation request failed/);
    const hook = await receiver();
    const tooLong = await graph('/subscriptions', {
      method: 'POST',
      body: {
        changeType: 'updated',
        notificationUrl: hook.url,
        resource: 'me/events',
        expirationDateTime: soon(10_081),
      },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toMatch(/10080 minutes/);
  });

  it('renews by PATCH, stops on DELETE, and loses notifications while paused', async () => {
    const { graph, emulator } = await start();
    const hook = await receiver();
    const sub = await graph('/subscriptions', {
      method: 'POST',
      body: {
        changeType: 'created',
        notificationUrl: hook.url,
        resource: '/me/events',
        expirationDateTime: soon(10),
      },
    });
    const renewed = await graph(`/subscriptions/${sub.body.id}`, {
      method: 'PATCH',
      body: { expirationDateTime: soon(4000) },
    });
    expect(Date.parse(renewed.body.expirationDateTime)).toBeGreaterThan(Date.now() + 3000 * 60_000);
    emulator.admin.pauseNotifications(true);
    await graph('/me/events', {
      method: 'POST',
      body: { subject: 'lost', start: when('2026-09-02T09:00:00'), end: when('2026-09-02T10:00:00') },
    });
    emulator.admin.pauseNotifications(false);
    expect((await graph(`/subscriptions/${sub.body.id}`, { method: 'DELETE' })).status).toBe(204);
    await graph('/me/events', {
      method: 'POST',
      body: { subject: 'unwatched', start: when('2026-09-03T09:00:00'), end: when('2026-09-03T10:00:00') },
    });
    await emulator.admin.notificationsIdle();
    expect(hook.received).toEqual([]);
    expect(emulator.admin.notifications().map((n) => n.status)).toEqual([0]);
    expect((await graph(`/subscriptions/${sub.body.id}`)).status).toBe(404);
  });
});
