import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type GoogleEmulator, startGoogleEmulator } from '@calgate/google-emulator';
import { GOOGLE_MIRROR_FORMAT, googleSyncSource } from '@calgate/providers';
import { MirrorChannelRepository, SecretBox } from '@calgate/store';
import { auth, calendar as googleCalendar } from '@googleapis/calendar';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { PUSH_PATH } from '../src/google/push.ts';
import { ChannelTokens, MirrorChannels, reachable, type WatchedCalendar } from '../src/mirror/channels.ts';
import { SyncSources } from '../src/mirror/sources.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

const ANN = 'ann@example.com';
const TEAM = 'team@group.calendar.google.com';
const DAY = 86_400_000;

let emulator: GoogleEmulator;
let gw: TestGateway;
let app: FastifyInstance;
let pushUrl: string;
let store: MirrorChannelRepository;
let channels: MirrorChannels;
let tokens: ChannelTokens;
let calendar: WatchedCalendar;
/** What the receiver handed to onChange, in order. */
const changes: string[] = [];
/** How far the gateway's clock is ahead of real time (kept in step with the emulator's). */
let skew = 0;

const meeting = (summary: string) => ({
  summary,
  start: { dateTime: '2026-12-01T09:00:00Z' },
  end: { dateTime: '2026-12-01T10:00:00Z' },
});

/** Someone editing the calendar in Google directly. */
async function changeUpstream(summary: string): Promise<void> {
  const token = emulator.admin.issueTokens({ email: ANN }).access_token;
  const response = await fetch(`${emulator.url}/calendar/v3/calendars/${encodeURIComponent(TEAM)}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(meeting(summary)),
  });
  expect(response.status).toBe(200);
}

async function waitFor(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error('timed out');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const deliveriesTo = (channelId: string) =>
  emulator.admin.notifications().filter((record) => record.channelId === channelId);

beforeAll(async () => {
  emulator = await startGoogleEmulator({
    seed: {
      accounts: [{ email: ANN, calendars: [{ id: TEAM, summary: 'Team', timeZone: 'UTC', events: [] }] }],
    },
    notificationRetry: { retries: 1, baseDelayMs: 20 },
  });
  gw = await startTestGateway();
  const { tenantId } = await gw.seedTenant('Push');
  await gw.db.prisma.connection.create({
    data: { id: 'con_push', tenantId, provider: 'google', accountEmail: ANN, auth: 'oauth' },
  });
  await gw.db.prisma.calendar.create({
    data: {
      id: 'cal_team',
      tenantId,
      connectionId: 'con_push',
      externalId: TEAM,
      summary: 'Team',
      timeZone: 'UTC',
    },
  });
  calendar = {
    tenantId,
    calendarId: 'cal_team',
    externalId: TEAM,
    connectionId: 'con_push',
    provider: 'google',
    auth: 'oauth',
  };

  store = new MirrorChannelRepository(gw.db);
  tokens = new ChannelTokens(new SecretBox([randomBytes(32)]));
  // The real gateway app, with the push route wired as the runtime will.
  app = buildApp({
    ...gw.runtime.deps,
    mirrorPush: {
      channels: store,
      tokens,
      storeWaitMs: 1_000,
      onChange: (tenant, calendarId) => {
        changes.push(`${tenant}/${calendarId}`);
      },
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const publicUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  pushUrl = `${publicUrl}${PUSH_PATH}`;
  channels = new MirrorChannels({
    publicUrl,
    store,
    tokens,
    now: () => Date.now() + skew,
    sources: new SyncSources([
      {
        provider: 'google',
        label: 'Google',
        push: true,
        format: GOOGLE_MIRROR_FORMAT,
        forConnection: async () => {
          const client = new auth.OAuth2();
          client.setCredentials({ access_token: emulator.admin.issueTokens({ email: ANN }).access_token });
          return googleSyncSource(
            googleCalendar({ version: 'v3', rootUrl: `${emulator.url}/`, auth: client, retry: false }),
          );
        },
      },
    ]),
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await gw?.stop();
  await emulator?.close();
});

describe('reachable: when Google can deliver to PUBLIC_URL', () => {
  it('https on a public name yes; http, loopback or an explicit false no; an explicit true always', () => {
    expect(reachable('https://calgate.example.com')).toBe(true);
    expect(reachable('http://calgate.example.com')).toBe(false);
    expect(reachable('https://localhost:3000')).toBe(false);
    expect(reachable('https://127.0.0.1')).toBe(false);
    expect(reachable('https://[::1]:8443')).toBe(false);
    expect(reachable('https://calgate.example.com', false)).toBe(false);
    expect(reachable('http://127.0.0.1:3000', true)).toBe(true);
  });
});

describe('Google push notifications for a mirrored calendar', () => {
  let first = '';

  it('opening a channel stores it without a secret, and the sync message is accepted', async () => {
    const row = await channels.open(calendar);
    first = row.channelId;
    expect(row.calendarId).toBe('cal_team');
    expect(emulator.admin.channels().map((c) => c.id)).toEqual([first]);
    expect(emulator.admin.channels()[0]?.address).toBe(pushUrl);
    await waitFor(() => deliveriesTo(first).length === 1);
    expect(deliveriesTo(first)[0]).toMatchObject({ state: 'sync', outcome: 'delivered', status: 200 });
    expect((await store.get(first))?.lastMessageNumber).toBe(1);
    expect(changes).toEqual([]);
  });

  it('an upstream change arrives as exists and reaches onChange within 2 s, marking the calendar pushed', async () => {
    const started = Date.now();
    await changeUpstream('Planning');
    await waitFor(() => changes.length === 1);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(changes).toEqual([`${calendar.tenantId}/cal_team`]);
    const { rows } = await gw.db.pool.query(
      'SELECT pushed_at FROM mirror_sync_state WHERE calendar_id = $1',
      ['cal_team'],
    );
    expect(rows[0]?.pushed_at).toBeInstanceOf(Date);
    expect((await store.get(first))?.lastMessageNumber).toBe(2);
  });

  it('a forged token is refused with 401 and no detail, and nothing is called', async () => {
    const response = await notify(first, 'forged', 'exists', 99);
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect(changes).toHaveLength(1);
    expect((await store.get(first))?.lastMessageNumber).toBe(2);
  });

  it("another deployment's token is 401; a channel Calgate does not know is 404", async () => {
    const elsewhere = new ChannelTokens(new SecretBox([randomBytes(32)]));
    expect((await notify(first, elsewhere.sign(first), 'exists', 3)).status).toBe(401);
    const unknown = await notify('gone-channel', tokens.sign('gone-channel'), 'exists', 1);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe('');
    expect(changes).toHaveLength(1);
  });

  it('a sync message that arrives before its channel is stored waits for it and is accepted', async () => {
    // Google sends `sync` as soon as the channel is open; the gateway stores it when the answer
    // to its watch arrives, which under load can be later.
    const early = 'early-channel';
    const answered = notify(early, tokens.sign(early), 'sync', 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await store.insert({
      channelId: early,
      tenantId: calendar.tenantId,
      calendarId: 'cal_team',
      resourceId: 'res-early',
      expiration: Date.now() + DAY,
    });
    expect((await answered).status).toBe(200);
    expect((await store.get(early))?.lastMessageNumber).toBe(1);
    expect(changes).toHaveLength(1);
    await store.delete(early);
  });

  it('a replayed message number is answered 200 and ignored', async () => {
    // Google's own `exists` (message 2) sent again with its real token.
    const replay = await notify(first, tokens.sign(first), 'exists', 2);
    expect(replay.status).toBe(200);
    expect(changes).toHaveLength(1);
    expect((await store.get(first))?.lastMessageNumber).toBe(2);
  });

  it('renews a channel before it expires: a new one opens, the old one stops, changes keep arriving', async () => {
    // Six and a half days on: the 7-day channel is within the renewal window.
    emulator.admin.advanceClock(6.5 * DAY);
    skew = 6.5 * DAY;
    const due = await channels.expiring();
    expect(due.map((c) => c.channelId)).toEqual([first]);
    const fresh = await channels.renew(calendar, due[0] as NonNullable<(typeof due)[0]>);
    expect(emulator.admin.channels().map((c) => c.id)).toEqual([fresh.channelId]);
    expect(await store.get(first)).toBeUndefined();
    await waitFor(() => deliveriesTo(fresh.channelId).length === 1);
    // A day later the old channel would have lapsed; the new one still delivers.
    emulator.admin.advanceClock(DAY);
    await changeUpstream('After renewal');
    await waitFor(() => changes.length === 2);
    expect(deliveriesTo(fresh.channelId).map((d) => d.state)).toEqual(['sync', 'exists']);
    first = fresh.channelId;
  });

  it('after stop no more notifications are sent', async () => {
    const [row] = await store.forCalendar('cal_team');
    expect(row?.channelId).toBe(first);
    await channels.stop(calendar, row as NonNullable<typeof row>);
    expect(emulator.admin.channels()).toEqual([]);
    const before = emulator.admin.notifications().length;
    await changeUpstream('Unwatched');
    await emulator.admin.notificationsIdle();
    expect(emulator.admin.notifications()).toHaveLength(before);
    expect(changes).toHaveLength(2);
  });

  it('deleting the calendar removes its channels', async () => {
    const row = await channels.open(calendar);
    expect(await store.forCalendar('cal_team')).toHaveLength(1);
    await gw.db.prisma.calendar.delete({ where: { id: 'cal_team' } });
    expect(await store.get(row.channelId)).toBeUndefined();
    await channels.stop(calendar, row);
    expect(emulator.admin.channels()).toEqual([]);
  });
});

/** A notification as Google sends it: an empty POST with the X-Goog-* headers. */
function notify(channelId: string, token: string, state: string, messageNumber: number): Promise<Response> {
  return fetch(pushUrl, {
    method: 'POST',
    headers: {
      'x-goog-channel-id': channelId,
      'x-goog-channel-token': token,
      'x-goog-resource-state': state,
      'x-goog-message-number': String(messageNumber),
    },
  });
}
