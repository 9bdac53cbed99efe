/**
 * Availability of Outlook calendars answered from the mirror, end to end over HTTP with the MCP
 * SDK client: over randomised calendars (timed events in several Windows zones, all-day events in
 * zones other than the calendar's, every `showAs`, private and cancelled events, invitations the
 * mailbox accepted, declined or left unanswered, daily and weekly series with deleted, cancelled
 * and moved occurrences) in a mailbox of a random zone, find_free_time, find_free_slots and
 * get_availability answer from the mirror exactly as from Graph (calendarView, which Calgate's
 * Outlook free/busy reads), say which sync they reflect and ask Graph nothing; the default
 * calendar's busy time is also Graph's getSchedule's. A window beyond what the mirror keeps is
 * asked of Graph. SEED=<n> replays a run.
 *
 * Graph's rules checked here: an all-day event is busy from midnight to midnight in its own zone
 * (not the mailbox's or the calendar's), and an event the mailbox declined is free whatever its
 * `showAs`. The connection has no MailboxSettings.Read, so the calendars take the tenant's zone.
 *
 * Two gateways share one database: `gw` syncs (its worker runs in process) and reads from the
 * mirror with an hour's staleness bound; `direct` has MIRROR_READS=false and asks Graph.
 */
import type { SeedEvent } from '@calgate/microsoft-emulator';
import { MICROSOFT_WRITE_SCOPES } from '@calgate/providers';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import {
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
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

const ANN = 'ann@contoso.com';
const MAILBOX_ZONES = ['W. Europe Standard Time', 'Pacific Standard Time', 'India Standard Time', 'UTC'];
const EVENT_ZONES = [
  'W. Europe Standard Time',
  'Pacific Standard Time',
  'India Standard Time',
  'New Zealand Standard Time',
  'E. South America Standard Time',
  'UTC',
];
/** The zones windows are read in. */
const WINDOW_ZONES = ['Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata', 'UTC'];
const SHOW_AS = ['busy', 'busy', 'tentative', 'oof', 'workingElsewhere', 'free'];
const ORGANIZER = 'olga@fabrikam.com';
/** The mailbox's own answer to an invitation (Graph's responseStatus.response). */
const RESPONSES = ['declined', 'declined', 'accepted', 'tentativelyAccepted', 'notResponded'];
/** Four weeks from a week ahead. */
const WEEKS = { day0: Math.floor(Date.now() / DAY) * DAY + 7 * DAY, days: 28 };
const FAR = WEEKS.day0 + 800 * DAY;
/** A UTC midnight for the fixed cases of the third calendar. */
const FIXED = WEEKS.day0 + 35 * DAY;
const HOUR = 3_600_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

type Extra = Pick<SeedEvent, 'subject' | 'showAs' | 'sensitivity' | 'organizerAddress' | 'responseStatus'> &
  Record<string, unknown>;

/**
 * Graph event bodies of one calendar. All-day events are in any zone (one made in Outlook while
 * travelling, or sent by an organizer elsewhere, keeps its own); a quarter of the events are
 * invitations from another organizer that the mailbox answered (or not), with any `showAs`.
 */
function eventsFor(rng: Random, n: number, mailboxZone: string): SeedEvent[] {
  const shape = {
    ...WEEKS,
    zones: EVENT_ZONES,
    firstDay: -1,
    lastDay: 0,
    allDay: 0.15,
    series: 0.2,
    maxQuarters: 12,
    allDayZone: (zone: string) => (rng.chance(0.25) ? mailboxZone : zone),
  };
  const flags = (i: number): Extra => {
    const extra: Extra = { subject: `E${i}`, showAs: rng.pick(SHOW_AS) };
    if (rng.chance(0.15)) {
      extra.sensitivity = 'private';
    }
    if (rng.chance(0.25)) {
      extra.organizerAddress = ORGANIZER;
      extra.responseStatus = { response: rng.pick(RESPONSES) };
      // The invitation names the mailbox (or reached it through a list and does not).
      extra.attendees = rng.chance(0.6)
        ? [{ emailAddress: { address: ANN }, type: 'required' }]
        : [{ emailAddress: { address: 'team@fabrikam.com' }, type: 'required' }];
    }
    return extra;
  };
  return randomEvents(rng, n, shape, flags, ({ kind, zone, start, end, flags: extra }): SeedEvent => {
    if (kind === 'allDay') {
      return {
        ...extra,
        isAllDay: true,
        start: { dateTime: `${date(start)}T00:00:00`, timeZone: zone },
        end: { dateTime: `${date(end)}T00:00:00`, timeZone: zone },
      };
    }
    const times = {
      start: { dateTime: wall(start), timeZone: zone },
      end: { dateTime: wall(end), timeZone: zone },
    };
    if (kind === 'single') {
      return { ...extra, ...times, ...(rng.chance(0.08) ? { isCancelled: true } : {}) };
    }
    const count = rng.int(4, 10);
    const weekly = rng.chance(0.5);
    const occurrences = Array.from({ length: count }, (_, k) => start + k * (weekly ? 7 : 1) * DAY);
    const series: SeedEvent = {
      ...extra,
      ...times,
      recurrence: {
        pattern: weekly
          ? { type: 'weekly', interval: 1, daysOfWeek: [WEEKDAYS[new Date(start).getUTCDay()]] }
          : { type: 'daily', interval: 1 },
        range: { type: 'numbered', startDate: date(start), numberOfOccurrences: count },
      },
    };
    const deleted: string[] = [];
    const cancelled: string[] = [];
    const exceptions: NonNullable<SeedEvent['exceptions']> = [];
    for (const at of occurrences.slice(1)) {
      const choice = rng.next();
      if (choice < 0.12) {
        deleted.push(wall(at));
      } else if (choice < 0.24) {
        cancelled.push(wall(at));
      } else if (choice < 0.36) {
        const moved = at + rng.int(-6, 6) * 1_800_000;
        exceptions.push({
          originalStart: wall(at),
          start: { dateTime: wall(moved), timeZone: zone },
          end: { dateTime: wall(moved + rng.int(1, 4) * 1_800_000), timeZone: zone },
          ...(rng.chance(0.3) ? { showAs: 'free' } : {}),
        });
      }
    }
    return {
      ...series,
      ...(deleted.length > 0 ? { deletedOccurrences: deleted } : {}),
      ...(cancelled.length > 0 ? { cancelledOccurrences: cancelled } : {}),
      ...(exceptions.length > 0 ? { exceptions } : {}),
    };
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`availability from the mirror of Outlook calendars (SEED=${SEED})`, () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let direct: TestGateway;
  let viaMirror: Client;
  let viaGraph: Client;
  let ids: string[] = [];
  let travel = '';
  const rng = random(SEED);
  const mailboxZone = rng.pick(MAILBOX_ZONES);

  const call = callOk;
  const graphReads = () =>
    ms.admin.requests().filter((r) => r.op === 'calendarView.list' || r.op === 'calendar.getSchedule').length;

  /** The same call through both gateways: equal answers; the mirror's says its sync and asks Graph nothing. */
  const compare = mirrorComparison({
    viaMirror: () => viaMirror,
    viaUpstream: () => viaGraph,
    upstream: 'Graph',
    upstreamReads: graphReads,
  });

  /** A random window inside the four weeks (or overlapping their ends), read in a random zone. */
  const anyWindow = (maxHours: number) => randomWindow(rng, WEEKS, WINDOW_ZONES, maxHours);

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [
        {
          email: ANN,
          timeZone: mailboxZone,
          calendars: [
            {
              name: 'Calendar',
              isDefaultCalendar: true,
              events: [
                ...eventsFor(rng, 40, mailboxZone),
                // Beyond the window the mirror keeps (760 days ahead at most).
                {
                  subject: 'Far away',
                  start: { dateTime: wall(FAR + DAY + 10 * 3_600_000), timeZone: 'UTC' },
                  end: { dateTime: wall(FAR + DAY + 11 * 3_600_000), timeZone: 'UTC' },
                },
              ],
            },
            { name: 'Projects', events: eventsFor(rng, 40, mailboxZone) },
            {
              name: 'Travel',
              events: [
                // India Standard Time is UTC+05:30 all year: midnight there is 18:30 UTC the day before.
                {
                  subject: 'Holiday in Bangalore',
                  isAllDay: true,
                  start: { dateTime: `${date(FIXED)}T00:00:00`, timeZone: 'India Standard Time' },
                  end: { dateTime: `${date(FIXED + DAY)}T00:00:00`, timeZone: 'India Standard Time' },
                },
                {
                  subject: 'Declined review',
                  organizerAddress: ORGANIZER,
                  responseStatus: { response: 'declined' },
                  showAs: 'busy',
                  attendees: [{ emailAddress: { address: ANN }, type: 'required' }],
                  start: { dateTime: wall(FIXED + 2 * DAY + 10 * HOUR), timeZone: 'UTC' },
                  end: { dateTime: wall(FIXED + 2 * DAY + 11 * HOUR), timeZone: 'UTC' },
                },
                {
                  subject: 'Declined through a list',
                  organizerAddress: ORGANIZER,
                  responseStatus: { response: 'declined' },
                  showAs: 'tentative',
                  attendees: [{ emailAddress: { address: 'team@fabrikam.com' }, type: 'required' }],
                  start: { dateTime: wall(FIXED + 2 * DAY + 14 * HOUR), timeZone: 'UTC' },
                  end: { dateTime: wall(FIXED + 2 * DAY + 15 * HOUR), timeZone: 'UTC' },
                },
                {
                  subject: 'Accepted review',
                  organizerAddress: ORGANIZER,
                  responseStatus: { response: 'accepted' },
                  showAs: 'busy',
                  attendees: [{ emailAddress: { address: ANN }, type: 'required' }],
                  start: { dateTime: wall(FIXED + 2 * DAY + 12 * HOUR), timeZone: 'UTC' },
                  end: { dateTime: wall(FIXED + 2 * DAY + 13 * HOUR), timeZone: 'UTC' },
                },
              ],
            },
          ],
        },
      ],
    });
    const env = { ...ms.env, ...HIGH_RATE_LIMITS };
    gw = await startTestGateway({
      ...env,
      WORKER_IN_PROCESS: 'true',
      MIRROR_MAX_STALENESS: '3600',
      MIRROR_POLL_INTERVAL: '3600',
    });
    direct = await startTestGateway({ ...env, MIRROR_READS: 'false' }, { db: gw.db });
    const tenant = await gw.seedTenant('Acme');
    // Without MailboxSettings.Read the calendars take the tenant's zone: all-day events of
    // other zones must still be placed in their own.
    const outlook = await connectOutlookAccount(
      gw,
      ms,
      tenant.tenantId,
      [tenant.keyId],
      ANN,
      'write',
      MICROSOFT_WRITE_SCOPES,
    );
    direct.forgetKeys(tenant.tenantId);
    ids = [outlook.calendars.Calendar as string, outlook.calendars.Projects as string];
    travel = outlook.calendars.Travel as string;
    viaMirror = await connectClient(gw.mcpUrl, tenant.secret);
    viaGraph = await connectClient(direct.mcpUrl, tenant.secret);
    const until = Date.now() + 30_000;
    for (const calendarId of [...ids, travel]) {
      const window = {
        calendarId,
        timeMin: new Date(WEEKS.day0).toISOString(),
        timeMax: new Date(WEEKS.day0 + DAY).toISOString(),
      };
      while ((await call(viaMirror, 'list_events', window)).syncedAt === undefined) {
        if (Date.now() > until) {
          throw new Error('the first syncs did not complete within 30 s');
        }
        await sleep(200);
      }
    }
  }, 90_000);

  afterAll(async () => {
    await viaMirror?.close();
    await viaGraph?.close();
    await direct?.stop();
    await gw?.stop();
    await ms?.close();
  });

  it('find_free_time answers from the mirror exactly as Graph does, and as getSchedule for the default calendar', async () => {
    let busy = 0;
    for (let i = 0; i < 14; i++) {
      const window = anyWindow(i < 4 ? 24 * 14 : 72);
      const answer = await compare('find_free_time', { ...window, calendarIds: ids, timeZone: 'UTC' });
      busy += (answer.busy as unknown[]).length;
      // Graph's own free/busy of the mailbox's default calendar: its schedule items, merged.
      const schedule = await ms.editDirectly(ANN, 'POST', '/me/calendar/getSchedule', {
        schedules: [ANN],
        startTime: { dateTime: window.timeMin.slice(0, 19), timeZone: 'UTC' },
        endTime: { dateTime: window.timeMax.slice(0, 19), timeZone: 'UTC' },
        availabilityViewInterval: 30,
      });
      expect(schedule.status).toBe(200);
      const items = (
        (await schedule.json()) as {
          value: { scheduleItems: { start: { dateTime: string }; end: { dateTime: string } }[] }[];
        }
      ).value[0]?.scheduleItems;
      const from = Date.parse(window.timeMin);
      const to = Date.parse(window.timeMax);
      const spans = (items ?? [])
        .map((item) => ({
          start: Math.max(from, Date.parse(`${item.start.dateTime.slice(0, 19)}Z`)),
          end: Math.min(to, Date.parse(`${item.end.dateTime.slice(0, 19)}Z`)),
        }))
        .filter((s) => s.end > s.start)
        .sort((a, b) => a.start - b.start);
      const merged: { start: number; end: number }[] = [];
      for (const span of spans) {
        const last = merged.at(-1);
        if (last !== undefined && span.start <= last.end) {
          last.end = Math.max(last.end, span.end);
        } else {
          merged.push({ ...span });
        }
      }
      const mine = (answer.busy as { calendarId: string; start: string; end: string }[])
        .filter((b) => b.calendarId === ids[0])
        .map((b) => ({ start: Date.parse(b.start), end: Date.parse(b.end) }));
      expect(mine, `getSchedule ${JSON.stringify(window)}`).toEqual(merged);
    }
    expect(busy).toBeGreaterThan(10);
  });

  it('an all-day event is busy midnight to midnight in its own zone; a declined invitation is free', async () => {
    const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
    const expected = [
      { calendarId: travel, start: iso(FIXED - 5.5 * HOUR), end: iso(FIXED + DAY - 5.5 * HOUR) },
      { calendarId: travel, start: iso(FIXED + 2 * DAY + 12 * HOUR), end: iso(FIXED + 2 * DAY + 13 * HOUR) },
    ];
    for (const window of [
      { timeMin: FIXED - DAY, timeMax: FIXED + 3 * DAY },
      // Only the hours of the day before that the all-day event covers in its own zone.
      { timeMin: FIXED - 6 * HOUR, timeMax: FIXED },
    ]) {
      const answer = await compare('find_free_time', {
        calendarIds: [travel],
        timeMin: iso(window.timeMin),
        timeMax: iso(window.timeMax),
        timeZone: 'UTC',
      });
      const clip = (ms: number) => Math.min(window.timeMax, Math.max(window.timeMin, ms));
      expect(answer.busy).toEqual(
        expected
          .map((b) => ({ ...b, start: iso(clip(Date.parse(b.start))), end: iso(clip(Date.parse(b.end))) }))
          .filter((b) => b.end > b.start),
      );
    }
    // A listing of those hours has the holiday too, from the mirror as from Graph's calendarView.
    const listed = await compare('list_events', {
      calendarId: travel,
      timeMin: iso(FIXED - 6 * HOUR),
      timeMax: iso(FIXED),
    });
    expect((listed.events as { summary: string }[]).map((e) => e.summary)).toEqual(['Holiday in Bangalore']);
  });

  it('find_free_slots with working hours and get_availability answer as Graph does', async () => {
    for (let i = 0; i < 8; i++) {
      const { timeZone: _zone, ...window } = anyWindow(24 * 7);
      await compare('find_free_slots', {
        ...window,
        calendarIds: rng.chance(0.5) ? ids : [rng.pick(ids)],
        minDurationMinutes: rng.pick([15, 30, 60]),
        workingHours: {
          days: ['mon', 'tue', 'wed', 'thu', 'fri'],
          start: rng.pick(['08:00', '09:00']),
          end: rng.pick(['17:00', '18:30']),
          timeZone: rng.pick(['Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata']),
        },
      });
      await compare('get_availability', {
        ...anyWindow(24 * 5),
        calendarIds: ids,
        privacy: rng.pick(['opaque', 'full']),
      });
    }
  });

  it('a window beyond what the mirror keeps is asked of Graph', async () => {
    const args = {
      calendarIds: [ids[0]],
      timeMin: new Date(FAR).toISOString(),
      timeMax: new Date(FAR + 7 * DAY).toISOString(),
      timeZone: 'UTC',
    };
    const before = graphReads();
    const answer = await call(viaMirror, 'find_free_time', args);
    expect(answer.syncedAt).toBeUndefined();
    expect(graphReads()).toBeGreaterThan(before);
    expect(answer.busy).toEqual([
      {
        calendarId: ids[0],
        start: new Date(FAR + DAY + 10 * 3_600_000).toISOString().replace('.000Z', 'Z'),
        end: new Date(FAR + DAY + 11 * 3_600_000).toISOString().replace('.000Z', 'Z'),
      },
    ]);
    expect(answer).toEqual(await call(viaGraph, 'find_free_time', args));
  });
});
