/**
 * Availability of Google calendars answered from the mirror, end to end over HTTP with the MCP
 * SDK client: over randomised calendars in several zones (timed events in their own zones,
 * all-day events, transparent, declined, cancelled and private events, series with moved and
 * cancelled occurrences, a calendar shared read-only), find_free_time, find_free_slots (with
 * working hours), check_availability and get_availability answer from the mirror exactly as
 * from Google's free/busy, say which sync they reflect, and ask Google nothing. book_slot's
 * conflict check still asks Google: a mirror a moment behind never decides a booking.
 *
 * Two gateways share one database: `gw` syncs (its worker runs in process) and reads from the
 * mirror with a staleness bound of an hour, so what it shows changes only by its own writes;
 * `direct` has MIRROR_READS=false and asks Google's free/busy. SEED=<n> replays a run.
 */
import { parseDateTime } from '@calgate/core';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccountByCli, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { mirrorComparison } from './mirror-compare.ts';
import {
  DAY,
  date,
  type Random,
  random,
  randomEvents,
  randomWindow,
  SEED,
  wall,
} from './random-calendars.ts';
import { callOk } from './tool-calls.ts';

const CLIENT = { clientId: 'avail-mirror.apps.googleusercontent.com', clientSecret: 'avail-mirror-secret' };
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';

/** Calendars and their zones: Ann's own (primary and two more) and Bob's, shared read-only. */
const CALENDARS = [
  { id: ANN, owner: ANN, zone: 'America/Los_Angeles' },
  { id: 'delhi@group.calendar.google.com', owner: ANN, zone: 'Asia/Kolkata' },
  { id: 'auckland@group.calendar.google.com', owner: ANN, zone: 'Pacific/Auckland' },
  { id: BOB, owner: BOB, zone: 'Europe/Berlin' },
];
const ZONES = [
  'America/Los_Angeles',
  'Asia/Kolkata',
  'Pacific/Auckland',
  'Europe/Berlin',
  'America/Sao_Paulo',
  'UTC',
];
/** Five weeks across the DST changes of 2027 (US 14 March, EU 28 March, NZ 4 April). */
const WEEKS = { day0: Date.parse('2027-03-08T00:00:00Z'), days: 35 };
const SHAPE = {
  ...WEEKS,
  zones: ZONES,
  firstDay: -2,
  lastDay: 1,
  allDay: 0.15,
  series: 0.15,
  maxQuarters: 16,
};

/**
 * The zone a timed event is written in: its own, unless the start falls in a DST gap and moves
 * past a short event's end there (Google refuses an empty range); such an event is written in UTC.
 */
function zoneFor(start: number, end: number, zone: string): string {
  const at = (ms: number) => {
    const read = parseDateTime(wall(ms), zone);
    return read.ok ? read.value : Number.NaN;
  };
  return at(end) < at(start) ? 'UTC' : zone;
}

/** Events of one calendar: single, all-day and recurring, with the flags free/busy reads. */
function eventsFor(rng: Random, calendar: (typeof CALENDARS)[number], n: number) {
  const flags = (i: number) => {
    const extra: Record<string, unknown> = { summary: `E${i} ${calendar.zone}` };
    if (rng.chance(0.15)) {
      extra.transparency = 'transparent';
    }
    if (rng.chance(0.12)) {
      extra.attendees = [
        { email: calendar.id, responseStatus: rng.chance(0.7) ? 'declined' : 'accepted' },
        { email: 'carol@example.org', responseStatus: 'accepted' },
      ];
    }
    if (rng.chance(0.15)) {
      extra.visibility = 'private';
    }
    return extra;
  };
  return randomEvents(rng, n, SHAPE, flags, ({ index, kind, zone, start, end, flags: extra }) => {
    if (kind === 'allDay') {
      return { ...extra, start: { date: date(start) }, end: { date: date(end) } };
    }
    if (kind === 'series') {
      const rule = rng.pick([
        `RRULE:FREQ=DAILY;COUNT=${rng.int(3, 12)}`,
        `RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=${rng.int(4, 14)}`,
        `RRULE:FREQ=WEEKLY;UNTIL=${date(start + 30 * DAY).replace(/-/g, '')}T000000Z`,
      ]);
      return {
        ...extra,
        id: `series${calendar.zone.replace(/[^a-z]/gi, '').toLowerCase()}${index}`,
        recurrence: [rule],
        start: { dateTime: wall(start), timeZone: zoneFor(start, end, zone) },
        end: { dateTime: wall(end), timeZone: zoneFor(start, end, zone) },
      };
    }
    // Timed in their own zone, or as an instant with an offset.
    return rng.chance(0.7)
      ? {
          ...extra,
          start: { dateTime: wall(start), timeZone: zoneFor(start, end, zone) },
          end: { dateTime: wall(end), timeZone: zoneFor(start, end, zone) },
        }
      : { ...extra, start: { dateTime: `${wall(start)}Z` }, end: { dateTime: `${wall(end)}Z` } };
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`availability from the mirror of Google calendars (SEED=${SEED})`, () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let direct: TestGateway;
  let viaMirror: Client;
  let viaGoogle: Client;
  let secret: string;
  const ids: string[] = [];
  const rng = random(SEED);

  /** A Calendar API request with the owner's own token: a change made in Google, not through Calgate. */
  const inGoogle = (owner: string, calendarId: string, method: string, path: string, body?: unknown) =>
    fetch(`${emulator.url}/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events${path}`, {
      method,
      headers: {
        authorization: `Bearer ${emulator.admin.issueTokens({ email: owner, scopes: ['https://www.googleapis.com/auth/calendar'] }).access_token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const call = callOk;
  const freeBusyQueries = () => emulator.admin.requests().filter((r) => r.op === 'freebusy.query').length;

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [
        {
          email: ANN,
          timeZone: 'America/Los_Angeles',
          events: eventsFor(rng, CALENDARS[0] as (typeof CALENDARS)[number], 45),
          calendars: CALENDARS.slice(1, 3).map((calendar) => ({
            id: calendar.id,
            summary: calendar.zone,
            timeZone: calendar.zone,
            events: eventsFor(rng, calendar, 45),
          })),
        },
        {
          email: BOB,
          timeZone: 'Europe/Berlin',
          events: eventsFor(rng, CALENDARS[3] as (typeof CALENDARS)[number], 45),
          shares: [{ email: ANN, role: 'reader' }],
        },
      ],
    });
    // Changes made in Google: occurrences of series moved or cancelled, single events cancelled.
    for (const calendar of CALENDARS) {
      const listed = (await (
        await inGoogle(calendar.owner, calendar.id, 'GET', '?maxResults=2500')
      ).json()) as { items: { id: string; recurrence?: string[] }[] };
      for (const event of listed.items) {
        if (event.recurrence === undefined) {
          if (rng.chance(0.1)) {
            expect((await inGoogle(calendar.owner, calendar.id, 'DELETE', `/${event.id}`)).status).toBe(204);
          }
          continue;
        }
        const instances = (await (
          await inGoogle(calendar.owner, calendar.id, 'GET', `/${event.id}/instances`)
        ).json()) as { items: { id: string; start: { dateTime?: string } }[] };
        for (const instance of instances.items) {
          const choice = rng.next();
          if (choice < 0.15) {
            expect((await inGoogle(calendar.owner, calendar.id, 'DELETE', `/${instance.id}`)).status).toBe(
              204,
            );
          } else if (choice < 0.3 && instance.start.dateTime !== undefined) {
            const start = Date.parse(instance.start.dateTime) + rng.int(-8, 8) * 1_800_000;
            const patched = await inGoogle(calendar.owner, calendar.id, 'PATCH', `/${instance.id}`, {
              start: { dateTime: new Date(start).toISOString() },
              end: { dateTime: new Date(start + rng.int(1, 6) * 1_800_000).toISOString() },
              ...(rng.chance(0.3) ? { transparency: 'transparent' } : {}),
            });
            expect(patched.status).toBe(200);
          }
        }
      }
    }

    const env = { ...emulator.env, ...HIGH_RATE_LIMITS };
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: '3600',
      MIRROR_POLL_INTERVAL: '3600',
    });
    direct = await startTestGateway({ ...env, MIRROR_READS: 'false' }, { db: gw.db });
    const tenant = await gw.seedTenant('Acme');
    await connectGoogleAccountByCli(gw, emulator, ANN, 'write');
    direct.forgetKeys(tenant.tenantId);
    secret = tenant.secret;
    viaMirror = await connectClient(gw.mcpUrl, tenant.secret);
    viaGoogle = await connectClient(direct.mcpUrl, tenant.secret);
    const listed = (await call(viaGoogle, 'list_calendars', {})).calendars as { id: string }[];
    ids.push(...listed.map((calendar) => calendar.id));
    expect(ids).toHaveLength(CALENDARS.length);
    // The first reads find no mirror (Google answers) and queue the first syncs.
    const until = Date.now() + 30_000;
    for (const calendarId of ids) {
      while ((await call(viaMirror, 'list_events', { calendarId, maxResults: 1 })).syncedAt === undefined) {
        if (Date.now() > until) {
          throw new Error('the first syncs did not complete within 30 s');
        }
        await sleep(200);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await viaMirror?.close();
    await viaGoogle?.close();
    await direct?.stop();
    await gw?.stop();
    await emulator?.close();
  });

  /** A random window inside the five weeks (or overlapping their ends), read in a random zone. */
  const anyWindow = (maxHours: number) => randomWindow(rng, WEEKS, ZONES, maxHours);

  /**
   * The same call through both gateways: equal answers. The mirror's says which sync it reflects
   * and asked Google nothing, except for Bob's calendar, whose private events Ann sees only as
   * times (not whether they are free, declined or repeat): only Google's free/busy knows.
   */
  const compared = mirrorComparison({
    viaMirror: () => viaMirror,
    viaUpstream: () => viaGoogle,
    upstream: 'Google',
    upstreamReads: freeBusyQueries,
  });
  const compare = (name: string, args: Record<string, unknown>) => {
    const bob = ids[CALENDARS.findIndex((calendar) => calendar.id === BOB)];
    const own = (args.calendarIds as string[]).filter((id) => id !== bob);
    return compared(name, args, {
      asksUpstream: own.length !== (args.calendarIds as string[]).length,
      synced: own.length > 0,
    });
  };

  it('find_free_time answers from the mirror exactly as Google does, in every zone', async () => {
    let busy = 0;
    for (let i = 0; i < 16; i++) {
      const answer = await compare('find_free_time', {
        ...anyWindow(i < 4 ? 24 * 20 : 72),
        calendarIds: ids,
        ...(rng.chance(0.5) ? { minDurationMinutes: rng.int(15, 120) } : {}),
      });
      busy += (answer.busy as unknown[]).length;
    }
    // The calendars are busy somewhere in the windows read: the comparison compared something.
    expect(busy).toBeGreaterThan(20);
  });

  it('find_free_slots with working hours and buffers answers as Google does', async () => {
    for (let i = 0; i < 10; i++) {
      const { timeZone: _zone, ...slots } = anyWindow(24 * 7);
      await compare('find_free_slots', {
        ...slots,
        calendarIds: rng.chance(0.5) ? ids : [rng.pick(ids)],
        minDurationMinutes: rng.pick([15, 30, 60]),
        workingHours: {
          days: ['mon', 'tue', 'wed', 'thu', 'fri'],
          start: rng.pick(['08:00', '09:00', '09:30']),
          end: rng.pick(['17:00', '18:30']),
          timeZone: rng.pick(ZONES),
        },
        ...(rng.chance(0.5) ? { bufferMinutes: rng.pick([5, 10, 30]) } : {}),
      });
    }
  });

  it('check_availability and get_availability name the same events, hiding what the key may not read', async () => {
    let named = 0;
    let hidden = 0;
    for (let i = 0; i < 12; i++) {
      const asked = anyWindow(i < 6 ? 6 : 24 * 5);
      const checked = await compare('check_availability', { ...asked, calendarIds: ids });
      for (const conflict of (checked.conflicts ?? []) as { kind: string; summary?: string }[]) {
        named += conflict.kind === 'event' ? 1 : 0;
        hidden += conflict.kind === 'busy' ? 1 : 0;
      }
      await compare('get_availability', {
        ...asked,
        calendarIds: ids,
        privacy: rng.pick(['opaque', 'full']),
        minDurationMinutes: rng.pick([15, 30, 60]),
      });
    }
    expect(named).toBeGreaterThan(0);
    // Bob's private events show to Ann as busy time without a name.
    const bob = ids[CALENDARS.findIndex((calendar) => calendar.id === BOB)];
    const week = {
      timeMin: new Date(WEEKS.day0).toISOString(),
      timeMax: new Date(WEEKS.day0 + WEEKS.days * DAY).toISOString(),
    };
    const full = await compare('get_availability', { ...week, calendarIds: [bob], privacy: 'full' });
    const kinds = (full.busy as { events: { kind: string; summary?: string }[] }[]).flatMap(
      (block) => block.events,
    );
    expect(kinds.some((item) => item.kind === 'event' && item.summary !== undefined)).toBe(true);
    expect(hidden + kinds.filter((item) => item.kind === 'busy').length).toBeGreaterThan(0);
  });

  it('a window asked again reflects every change of the mirror: written through at once, synced by another process once announced', async () => {
    const primary = ids[0] as string;
    const start = Date.parse('2027-05-10T15:00:00Z');
    const args = {
      calendarIds: [primary],
      timeMin: new Date(start).toISOString(),
      timeMax: new Date(start + 4 * 3_600_000).toISOString(),
      timeZone: 'Europe/Berlin',
    };
    const busyOf = async () =>
      ((await call(viaMirror, 'find_free_time', args)).busy as { start: string }[]).map((b) => b.start);
    /**
     * A change synced by another process shows once Postgres has announced it to this gateway
     * (moments after the commit); until then the answer is the one before, never anything else.
     */
    const busySoon = async (before: string[], after: string[]) => {
      const until = Date.now() + 2_000;
      for (;;) {
        const now = await busyOf();
        if (JSON.stringify(now) === JSON.stringify(after) || Date.now() > until) {
          expect(now).toEqual(after);
          return;
        }
        expect(now).toEqual(before);
        await sleep(20);
      }
    };
    expect(await busyOf()).toEqual([]);
    expect(await busyOf()).toEqual([]);
    // A gateway that syncs before every read (staleness 0) stands for another process's sync.
    const syncer = await startTestGateway(
      { ...emulator.env, ...HIGH_RATE_LIMITS, MIRROR_MAX_STALENESS: '0' },
      { db: gw.db },
    );
    const viaSyncer = await connectClient(syncer.mcpUrl, secret);
    try {
      const added = await inGoogle(ANN, ANN, 'POST', '', {
        summary: 'Added in Google',
        start: { dateTime: new Date(start + 3_600_000).toISOString() },
        end: { dateTime: new Date(start + 7_200_000).toISOString() },
      });
      expect(added.status).toBe(200);
      const addedId = ((await added.json()) as { id: string }).id;
      // Not synced yet: the mirror (an hour's staleness allowed) still answers as before.
      expect(await busyOf()).toEqual([]);
      const listing = { calendarId: primary, timeMin: args.timeMin, timeMax: args.timeMax };
      const synced = await call(viaSyncer, 'list_events', listing);
      expect(typeof synced.syncedAt).toBe('string');
      await busySoon([], ['2027-05-10T18:00:00+02:00']);
      await compare('find_free_time', args);

      // Written through by this gateway: shown at once.
      await call(viaMirror, 'create_event', {
        calendarId: primary,
        summary: 'Written through',
        start: { dateTime: new Date(start).toISOString() },
        end: { dateTime: new Date(start + 1_800_000).toISOString() },
      });
      expect(await busyOf()).toEqual(['2027-05-10T17:00:00+02:00', '2027-05-10T18:00:00+02:00']);

      // Removed in Google and synced elsewhere: gone.
      expect((await inGoogle(ANN, ANN, 'DELETE', `/${addedId}`)).status).toBe(204);
      await call(viaSyncer, 'list_events', listing);
      await busySoon(
        ['2027-05-10T17:00:00+02:00', '2027-05-10T18:00:00+02:00'],
        ['2027-05-10T17:00:00+02:00'],
      );
      await compare('find_free_time', args);

      // The connection that hears of changes is cut: what was heard before is trusted no more,
      // so a change made meanwhile still shows.
      const { rows } = await gw.db.pool.query<{ stopped: boolean }>(
        `SELECT pg_terminate_backend(pid) AS stopped FROM pg_stat_activity
         WHERE query = 'LISTEN mirror_versions' AND datname = current_database()`,
      );
      expect(rows.map((row) => row.stopped)).toContain(true);
      const again = await inGoogle(ANN, ANN, 'POST', '', {
        summary: 'Added while not heard',
        start: { dateTime: new Date(start + 2 * 3_600_000).toISOString() },
        end: { dateTime: new Date(start + 3 * 3_600_000).toISOString() },
      });
      expect(again.status).toBe(200);
      await call(viaSyncer, 'list_events', listing);
      await busySoon(
        ['2027-05-10T17:00:00+02:00'],
        ['2027-05-10T17:00:00+02:00', '2027-05-10T19:00:00+02:00'],
      );
      await compare('find_free_time', args);
    } finally {
      await viaSyncer.close();
      await syncer.stop();
    }
  });

  it('book_slot asks Google, not the mirror: an event added in Google refuses the slot the mirror shows free', async () => {
    const primary = ids[0] as string;
    const start = Date.parse('2027-05-03T16:00:00Z');
    const slot = {
      timeMin: new Date(start).toISOString(),
      timeMax: new Date(start + 3_600_000).toISOString(),
    };
    // Someone books the hour in Google; the mirror (an hour's staleness allowed, no push) lags.
    const added = await inGoogle(ANN, ANN, 'POST', '', {
      summary: 'Booked in Google',
      start: { dateTime: slot.timeMin },
      end: { dateTime: slot.timeMax },
    });
    expect(added.status).toBe(200);
    const seen = await call(viaMirror, 'check_availability', { ...slot, calendarIds: [primary] });
    expect(seen.available).toBe(true);
    expect(typeof seen.syncedAt).toBe('string');
    const queries = freeBusyQueries();
    const refused = await viaMirror.callTool({
      name: 'book_slot',
      arguments: { calendarId: primary, start: slot.timeMin, end: slot.timeMax, summary: 'Calgate booking' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^Not booked: the slot overlaps the event 'Booked in Google' from /);
    expect(freeBusyQueries()).toBeGreaterThan(queries);

    // And the other way: an event the mirror still holds, deleted in Google, no longer blocks.
    const later = start + DAY;
    const other = {
      timeMin: new Date(later).toISOString(),
      timeMax: new Date(later + 3_600_000).toISOString(),
    };
    const made = await call(viaMirror, 'create_event', {
      calendarId: primary,
      summary: 'Soon gone',
      start: { dateTime: other.timeMin },
      end: { dateTime: other.timeMax },
    });
    const busyNow = await call(viaMirror, 'check_availability', { ...other, calendarIds: [primary] });
    expect(busyNow.available).toBe(false);
    const eventId = (made.event as { id: string }).id;
    expect((await inGoogle(ANN, ANN, 'DELETE', `/${eventId}`)).status).toBe(204);
    expect(
      (await call(viaMirror, 'check_availability', { ...other, calendarIds: [primary] })).available,
    ).toBe(false);
    const booked = await viaMirror.callTool({
      name: 'book_slot',
      arguments: {
        calendarId: primary,
        start: other.timeMin,
        end: other.timeMax,
        summary: 'Booked after all',
      },
    });
    expect(booked.isError, textOf(booked)).toBeFalsy();
  });
});
