import { describe, expect, it } from 'vitest';
import { ANN, BOB, failure, reasonOf, TEAM } from './helpers.ts';
import { summary } from './receiver.ts';
import { meeting, useWatchFixture } from './watch-fixture.ts';

const G = 'https://www.googleapis.com/auth/';
const DAY_MS = 86_400_000;
const f = useWatchFixture();
let n = 0;

describe('events.watch', () => {
  it('answers with a Channel and sends a sync notification at once, with Google’s headers', async () => {
    const channel = await f.watch(f.ann, 'primary');
    expect(channel.kind).toBe('api#channel');
    expect(channel.id).toMatch(/^chan-\d+$/);
    expect(channel.token).toBe(channel.id?.replace('chan-', 'tok-'));
    expect(channel.resourceId).toMatch(/^[\w-]{10,}$/);
    expect(channel.resourceUri).toBe(
      `${f.emulator.url}/calendar/v3/calendars/${encodeURIComponent(ANN)}/events?alt=json`,
    );
    // Default lifetime: params.ttl 604800 s, as an int64 string.
    const expiration = Number(channel.expiration);
    expect(Math.abs(expiration - (Date.now() + 7 * DAY_MS))).toBeLessThan(5_000);
    await f.settle();
    expect(f.receiver.received).toHaveLength(1);
    const sync = f.receiver.received[0];
    expect(sync?.method).toBe('POST');
    expect(sync?.path).toBe('/webhooks/google');
    expect(sync?.body).toBe('');
    expect(sync?.headers).toMatchObject({
      'x-goog-channel-id': channel.id,
      'x-goog-channel-token': channel.token,
      'x-goog-channel-expiration': new Date(expiration).toUTCString(),
      'x-goog-resource-id': channel.resourceId,
      'x-goog-resource-uri': channel.resourceUri,
      'x-goog-resource-state': 'sync',
      'x-goog-message-number': '1',
    });
    // The same resource gets the same resourceId on every channel.
    const second = await f.watch(f.ann, ANN, { token: undefined });
    expect(second.resourceId).toBe(channel.resourceId);
    expect(second.token).toBeUndefined();
    await f.settle();
    expect(f.receiver.forChannel(second.id ?? '')[0]?.headers['x-goog-channel-token']).toBeUndefined();
  });

  it('sends exists on create, update, delete and admin seeding, numbered upwards, with the token', async () => {
    const channel = await f.watch(f.ann, 'primary');
    const created = await f.ann.events.insert({ calendarId: 'primary', requestBody: meeting('Plan') });
    await f.settle();
    await f.ann.events.patch({
      calendarId: 'primary',
      eventId: created.data.id ?? '',
      requestBody: { summary: 'Replan' },
    });
    await f.settle();
    await f.ann.events.delete({ calendarId: 'primary', eventId: created.data.id ?? '' });
    await f.settle();
    f.emulator.admin.seed({
      accounts: [{ email: ANN, timeZone: 'Europe/Berlin', events: [meeting('Seeded')] }],
    });
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '').map(summary)).toEqual([
      { state: 'sync', number: 1, token: channel.token },
      { state: 'exists', number: 2, token: channel.token },
      { state: 'exists', number: 3, token: channel.token },
      { state: 'exists', number: 4, token: channel.token },
      { state: 'exists', number: 5, token: channel.token },
    ]);
    // Changes elsewhere do not reach this channel.
    await f.bob.events.insert({ calendarId: TEAM, requestBody: meeting('Other calendar') });
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '')).toHaveLength(5);
  });

  it('notifies both calendars of a move, and not_exists when the watched calendar is deleted', async () => {
    const source = await f.watch(f.bob, 'primary');
    const target = await f.watch(f.bob, TEAM);
    const event = await f.bob.events.insert({ calendarId: 'primary', requestBody: meeting('Moving') });
    await f.bob.events.move({ calendarId: 'primary', eventId: event.data.id ?? '', destination: TEAM });
    await f.settle();
    expect(f.receiver.forChannel(source.id ?? '').map((r) => summary(r).state)).toEqual([
      'sync',
      'exists',
      'exists',
    ]);
    expect(f.receiver.forChannel(target.id ?? '').map((r) => summary(r).state)).toEqual(['sync', 'exists']);
    await f.bob.calendars.delete({ calendarId: TEAM });
    await f.settle();
    expect(
      f.receiver
        .forChannel(target.id ?? '')
        .map(summary)
        .at(-1),
    ).toMatchObject({ state: 'not_exists', number: 3 });
    expect(f.emulator.admin.channels().map((c) => c.id)).toEqual([source.id]);
  });

  it('refuses a reused channel id and a channel type other than web_hook', async () => {
    const channel = await f.watch(f.ann, 'primary');
    const reused = await failure(
      f.ann.events.watch({
        calendarId: 'primary',
        requestBody: { id: channel.id ?? '', type: 'web_hook', address: f.receiver.url },
      }),
    );
    expect(reused.status).toBe(400);
    expect(reasonOf(reused.data)).toBe('channelIdNotUnique');
    const wrongType = await failure(
      f.ann.events.watch({
        calendarId: 'primary',
        requestBody: { id: 'other', type: 'email', address: f.receiver.url },
      }),
    );
    expect(wrongType.status).toBe(400);
    expect(reasonOf(wrongType.data)).toBe('invalid');
    const noAddress = await failure(
      f.ann.events.watch({ calendarId: 'primary', requestBody: { id: 'x', type: 'web_hook' } }),
    );
    expect(reasonOf(noAddress.data)).toBe('required');
  });
});

describe('channels.stop and expiration', () => {
  it('stops a channel: 204, then silence; stopping it again or an unknown channel is 404', async () => {
    const channel = await f.watch(f.ann, 'primary');
    await f.settle();
    const stopped = await f.ann.channels.stop({
      requestBody: { id: channel.id ?? '', resourceId: channel.resourceId ?? '' },
    });
    expect(stopped.status).toBe(204);
    await f.ann.events.insert({ calendarId: 'primary', requestBody: meeting('Unheard') });
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '').map((r) => summary(r).state)).toEqual(['sync']);
    const again = await failure(
      f.ann.channels.stop({ requestBody: { id: channel.id ?? '', resourceId: channel.resourceId ?? '' } }),
    );
    expect(again.status).toBe(404);
    expect(reasonOf(again.data)).toBe('notFound');
  });

  it('only lets the caller who opened a channel stop it, with the right resourceId', async () => {
    const channel = await f.watch(f.bob, TEAM);
    const byAnn = await failure(
      f.ann.channels.stop({ requestBody: { id: channel.id ?? '', resourceId: channel.resourceId ?? '' } }),
    );
    expect(byAnn.status).toBe(404);
    const wrongResource = await failure(
      f.bob.channels.stop({ requestBody: { id: channel.id ?? '', resourceId: 'nope' } }),
    );
    expect(wrongResource.status).toBe(404);
    expect(f.emulator.admin.channels().map((c) => c.id)).toEqual([channel.id]);
  });

  it('honours a requested expiration: the channel falls silent once it has passed', async () => {
    const expiration = Date.now() + 60_000;
    const channel = await f.watch(f.ann, 'primary', { expiration: String(expiration) });
    expect(channel.expiration).toBe(String(expiration));
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '')[0]?.headers['x-goog-channel-expiration']).toBe(
      new Date(expiration).toUTCString(),
    );
    f.emulator.admin.advanceClock(61_000);
    await f.ann.events.insert({ calendarId: 'primary', requestBody: meeting('After expiry') });
    await f.settle();
    expect(f.receiver.forChannel(channel.id ?? '')).toHaveLength(1);
    expect(f.emulator.admin.channels()).toEqual([]);
    const past = await failure(
      f.ann.events.watch({
        calendarId: 'primary',
        requestBody: {
          id: 'late',
          type: 'web_hook',
          address: f.receiver.url,
          expiration: String(Date.now() - 1),
        },
      }),
    );
    expect(past.status).toBe(400);
  });

  it('takes params.ttl and caps long expirations at 30 days', async () => {
    // Compared with each other: an earlier test moved the emulator's clock on.
    const byDefault = Number((await f.watch(f.ann, 'primary')).expiration);
    const short = Number((await f.watch(f.ann, 'primary', { params: { ttl: '120' } })).expiration);
    const long = Number(
      (await f.watch(f.ann, 'primary', { expiration: String(Date.now() + 365 * DAY_MS) })).expiration,
    );
    expect(Math.abs(byDefault - short - (7 * DAY_MS - 120_000))).toBeLessThan(5_000);
    expect(Math.abs(long - short - (30 * DAY_MS - 120_000))).toBeLessThan(5_000);
  });
});

describe('auth and scopes, as events.list', () => {
  async function raw(scopes: string[] | null, calendarId: string, body: unknown): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (scopes !== null) {
      headers.authorization = `Bearer ${f.emulator.admin.issueTokens({ email: ANN, scopes }).access_token}`;
    }
    return fetch(`${f.emulator.url}/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events/watch`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
  }
  const body = () => ({ id: `scoped-${++n}`, type: 'web_hook', address: f.receiver.url });

  it('answers 401 without a token and 403 insufficientPermissions without an events-read scope', async () => {
    expect((await raw(null, ANN, body())).status).toBe(401);
    const denied = await raw([`${G}calendar.calendarlist.readonly`], ANN, body());
    expect(denied.status).toBe(403);
    expect(reasonOf((await denied.json()) as Record<string, unknown>)).toBe('insufficientPermissions');
    for (const scope of ['calendar.readonly', 'calendar.events.readonly', 'calendar.events']) {
      expect((await raw([`${G}${scope}`], ANN, body())).status).toBe(200);
    }
  });

  it('answers 404 for a calendar the caller cannot see, as events.list does', async () => {
    const watched = await failure(f.ann.events.watch({ calendarId: BOB, requestBody: body() }));
    const listed = await failure(f.ann.events.list({ calendarId: BOB }));
    expect(watched.status).toBe(404);
    expect(watched.status).toBe(listed.status);
    expect(reasonOf(watched.data)).toBe(reasonOf(listed.data));
    expect(f.emulator.admin.channels()).toEqual([]);
  });
});
