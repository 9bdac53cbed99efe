import { icsEventId } from '@calgate/providers';
import { BookingRepository } from '@calgate/store';
import { catalogue } from '@calgate/tools';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { connectCaldav } from '../src/caldav/connect.ts';
import { subscribeIcs } from '../src/ics/subscriptions.ts';
import { HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';
import { type FeedServer, startFeedServer, vcalendar } from './ics-feed-server.ts';
import {
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
import {
  busyOf,
  fakeIds,
  foreignStrings,
  type Ids,
  type KeyName,
  leaked,
  leaves,
  masked,
  type ProbingKey,
  refused,
  rulesOf,
  schedulesOf,
  seeded,
  seedWorld,
  snapshot,
  type World,
} from './no-leak-fixture.ts';

/** The Outlook account holding tenant B's calendar in the second run. */
const NARWHAL = 'narwhal@contoso.com';

type Args = Record<string, unknown>;

/**
 * Whom a probe must be refused to. 'calendar': every target. 'unreadable': targets the key cannot
 * read (filing an occurrence needs Write on some calendar and Read on its own, so filing one of a
 * calendar the key reads but cannot write is allowed). 'tenant': targets of another tenant
 * (projects, rules and delivery targets belong to the tenant and are shared by its keys). 'key':
 * every target, as a scheduled prompt belongs to the key that made it (a seeding key, never the
 * probing one).
 */
type Reach = 'calendar' | 'unreadable' | 'tenant' | 'key';

/** One call shape; `t` is the target's ids, or fakes of the same shape. */
interface Probe {
  label: string;
  args(t: Ids, key: ProbingKey, world: World): Args;
  reach: Reach;
}

interface ToolRow {
  /** Calls naming a calendar, event, booking, document, project or rule the key must not reach. */
  probes: Probe[];
  /** Calls looking for the target's words: answered exactly as for words nothing holds. */
  lookups?: Probe[];
  /** A call over everything the key can read, whose whole answer is scanned for foreign data. */
  scan?: (key: ProbingKey, world: World) => Args;
}

const probe = (label: string, args: Probe['args'], reach: Reach = 'calendar'): Probe => ({
  label,
  args,
  reach,
});
/** The project and rule of the key's own tenant. */
const own = (key: ProbingKey, world: World) => rulesOf(world, key.tenantId);
const later = (world: World, hour: string) => {
  const day = new Date(Date.parse(`${world.day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return `${day}T${hour}:00Z`;
};
const intrusion = { summary: 'Intruder' };

/** A read over calendarIds: the target alone, and the target beside a calendar the key can read. */
const overCalendars = (extra: (world: World) => Args, reach: Reach = 'calendar'): Probe[] => [
  probe('calendarIds [target]', (t, _k, w) => ({ calendarIds: [t.calendarId], ...extra(w) }), reach),
  probe(
    'calendarIds [own, target]',
    (t, k, w) => ({ calendarIds: [k.home, t.calendarId], ...extra(w) }),
    reach,
  ),
  probe('calendarIds [target name]', (t, _k, w) => ({ calendarIds: [t.calendarName], ...extra(w) }), reach),
];
const range = (world: World) => world.range;

const intruderPrompt = { prompt: 'Intruder prompt' };
/** A prompt scheduled to the target's tenant's delivery target. */
const toTarget = (when: (world: World) => Args): Probe[] => [
  probe('targetId', (t, _k, w) => ({ ...intruderPrompt, ...when(w), targetId: t.targetId }), 'tenant'),
  probe(
    'targetId, agentId',
    (t, _k, w) => ({ ...intruderPrompt, ...when(w), targetId: t.targetId, agentId: 'agent-intruder' }),
    'tenant',
  ),
];
const aroundStandups = { query: 'title:standup', offsetMinutes: -15 };

/** Every tool of the catalogue; a tool missing here fails the coverage test. */
/** An iCalendar file an intruder would import into someone else's calendar. */
const INTRUDER_ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Intruder//EN',
  'BEGIN:VEVENT',
  'UID:intruder@example.com',
  'DTSTAMP:20260101T000000Z',
  'DTSTART:20260601T100000Z',
  'DTEND:20260601T110000Z',
  'SUMMARY:Intruder',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

const MATRIX: Record<string, ToolRow> = {
  list_calendars: { probes: [], scan: () => ({}) },
  list_events: {
    probes: [
      probe('calendarId', (t, _k, w) => ({ calendarId: t.calendarId, ...w.range })),
      probe('calendar name', (t, _k, w) => ({ calendarId: t.calendarName, ...w.range })),
      probe('calendarId, occurrences', (t, _k, w) => ({
        calendarId: t.calendarId,
        singleEvents: true,
        ...w.range,
      })),
    ],
    lookups: [probe('query for its title word', (t, _k, w) => ({ query: t.code, ...w.range }))],
    scan: (_k, w) => ({ ...w.range, singleEvents: true, maxResults: 500 }),
  },
  get_event: {
    probes: [
      probe('calendarId + eventId', (t) => ({ calendarId: t.calendarId, eventId: t.eventId })),
      probe('eventId, calendar found', (t) => ({ eventId: t.eventId })),
      probe('eventId in own calendar', (t, k) => ({ calendarId: k.home, eventId: t.eventId })),
      probe('occurrence id, calendar found', (t) => ({ eventId: t.instanceId })),
      probe('calendarId + occurrence id', (t) => ({ calendarId: t.calendarId, eventId: t.instanceId })),
      probe('booking event id, calendar found', (t) => ({ eventId: t.bookingEventId })),
    ],
    scan: (k, w) => ({ calendarId: k.home, eventId: seeded(w, k.home).eventId }),
  },
  search_events: {
    probes: overCalendars((w) => ({ query: 'standup', ...w.range })),
    lookups: [probe('query for its title word', (t, _k, w) => ({ query: t.code, ...w.range }))],
    scan: (_k, w) => ({ query: 'e', ...w.range, maxResults: 250 }),
  },
  find_free_time: { probes: overCalendars(range), scan: (_k, w) => ({ ...w.range }) },
  get_current_time: {
    probes: [
      probe('calendarId', (t) => ({ calendarId: t.calendarId })),
      probe('calendar name', (t) => ({ calendarId: t.calendarName })),
    ],
    scan: () => ({}),
  },
  list_colors: { probes: [probe('calendarId', (t) => ({ calendarId: t.calendarId }))], scan: () => ({}) },
  search: {
    probes: [],
    lookups: [probe('query for its title word', (t) => ({ query: t.code }))],
    scan: () => ({ query: '' }),
  },
  fetch: {
    probes: [
      probe('event id', (t) => ({ id: `${t.calendarId}:${t.eventId}` })),
      probe('occurrence id', (t) => ({ id: `${t.calendarId}:${t.instanceId}` })),
      probe('booking event id', (t) => ({ id: `${t.calendarId}:${t.bookingEventId}` })),
      probe('its event under own calendar', (t, k) => ({ id: `${k.home}:${t.eventId}` })),
    ],
    scan: (k, w) => ({ id: `${k.home}:${seeded(w, k.home).instanceId}` }),
  },
  create_event: {
    probes: [
      probe('calendarId', (t, _k, w) => ({
        calendarId: t.calendarId,
        ...intrusion,
        start: { dateTime: later(w, '15:00') },
        end: { dateTime: later(w, '16:00') },
      })),
      probe('calendar name, with requestId', (t, _k, w) => ({
        calendarId: t.calendarName,
        ...intrusion,
        requestId: 'intrusion-1',
        start: { dateTime: later(w, '15:00') },
        end: { dateTime: later(w, '16:00') },
      })),
    ],
  },
  quick_add_event: {
    probes: [
      probe('calendarId', (t) => ({ calendarId: t.calendarId, text: 'Intruder lunch tomorrow at noon' })),
    ],
  },
  update_event: {
    probes: [
      probe('calendarId + eventId', (t) => ({ calendarId: t.calendarId, eventId: t.eventId, ...intrusion })),
      probe('eventId, calendar found', (t) => ({ eventId: t.eventId, ...intrusion })),
      probe('eventId in own calendar', (t, k) => ({
        calendarId: k.writable,
        eventId: t.eventId,
        ...intrusion,
      })),
      probe('occurrence, whole series', (t) => ({
        calendarId: t.calendarId,
        eventId: t.instanceId,
        scope: 'all',
        ...intrusion,
      })),
      probe('booking event moved, calendar found', (t, _k, w) => ({
        eventId: t.bookingEventId,
        start: { dateTime: later(w, '17:00') },
      })),
    ],
  },
  batch_update_events: {
    probes: [
      probe('item calendarId', (t) => ({
        updates: [{ calendarId: t.calendarId, eventId: t.eventId, ...intrusion }],
      })),
      probe('batch calendarId', (t) => ({
        calendarId: t.calendarId,
        updates: [{ eventId: t.eventId, ...intrusion }],
      })),
      probe('eventId in own calendar', (t, k) => ({
        calendarId: k.writable,
        updates: [{ eventId: t.eventId, status: 'cancelled' }],
      })),
    ],
  },
  manage_attendees: {
    probes: [
      probe('calendarId + eventId', (t) => ({
        calendarId: t.calendarId,
        eventId: t.eventId,
        addAttendees: ['mallory@example.com'],
      })),
      probe('eventId, calendar found', (t) => ({ eventId: t.eventId, removeAttendees: [t.guest] })),
    ],
  },
  respond_to_event: {
    probes: [
      probe('calendarId + eventId', (t) => ({
        calendarId: t.calendarId,
        eventId: t.eventId,
        response: 'declined',
      })),
      probe('occurrence, calendar found', (t) => ({ eventId: t.instanceId, response: 'declined' })),
    ],
  },
  delete_event: {
    probes: [
      probe('calendarId + eventId', (t) => ({ calendarId: t.calendarId, eventId: t.eventId })),
      probe('eventId, calendar found', (t) => ({ eventId: t.eventId })),
      probe('eventId in own calendar', (t, k) => ({ calendarId: k.writable, eventId: t.eventId })),
      probe('series from an occurrence on', (t) => ({
        calendarId: t.calendarId,
        eventId: t.instanceId,
        scope: 'thisAndFollowing',
      })),
      probe('whole series', (t) => ({ calendarId: t.calendarId, eventId: t.seriesId, scope: 'all' })),
      probe('booking event, calendar found', (t) => ({ eventId: t.bookingEventId })),
    ],
  },
  import_events: {
    probes: [
      probe('calendarId', (t) => ({ calendarId: t.calendarId, ics: INTRUDER_ICS })),
      probe('calendar name', (t) => ({ calendarId: t.calendarName, ics: INTRUDER_ICS })),
    ],
  },
  // Sets the calling key's own zone: it names nothing of anyone else's to probe with.
  set_time_zone: { probes: [] },
  create_calendar: {
    probes: [
      probe('onAccountOf', (t) => ({ summary: 'Intruder', onAccountOf: t.calendarId })),
      probe('onAccountOf by name', (t) => ({ summary: 'Intruder', onAccountOf: t.calendarName })),
    ],
  },
  book_slot: {
    probes: [
      probe('calendarId', (t, _k, w) => ({
        calendarId: t.calendarId,
        ...intrusion,
        start: later(w, '18:00'),
        end: later(w, '18:30'),
      })),
      probe('calendarId, its idempotencyKey', (t, _k, w) => ({
        calendarId: t.calendarId,
        ...intrusion,
        start: later(w, '18:00'),
        end: later(w, '18:30'),
        idempotencyKey: t.idempotencyKey,
      })),
    ],
  },
  list_bookings: {
    probes: overCalendars(() => ({})),
    scan: () => ({ maxResults: 500 }),
  },
  cancel_booking: {
    probes: [
      probe('bookingId', (t) => ({ bookingId: t.bookingId })),
      probe("another key's idempotencyKey", (t) => ({ idempotencyKey: t.idempotencyKey })),
    ],
  },
  find_free_slots: {
    probes: overCalendars(range),
    scan: (_k, w) => ({ ...w.range, minDurationMinutes: 15 }),
  },
  check_availability: {
    probes: overCalendars((w) => ({ timeMin: `${w.day}T09:00:00Z`, timeMax: `${w.day}T15:00:00Z` })),
    scan: (_k, w) => ({ timeMin: `${w.day}T09:00:00Z`, timeMax: `${w.day}T15:00:00Z` }),
  },
  get_availability: {
    probes: overCalendars((w) => ({ ...w.range, privacy: 'full' })),
    scan: (_k, w) => ({ ...w.range, privacy: 'full' }),
  },
  expand_rrule: {
    // Takes no calendar, event or booking: nothing to probe, only its answer to scan.
    probes: [],
    scan: () => ({ rrule: 'FREQ=WEEKLY;COUNT=3', dtstart: '2026-12-01T09:00:00', timeZone: 'UTC' }),
  },
  preview_rule: {
    probes: [
      ...overCalendars((w) => ({ query: 'standup', ...w.range })),
      probe('projectId', (t, _k, w) => ({ query: 'standup', projectId: t.projectId, ...w.range }), 'tenant'),
    ],
    lookups: [probe('query for its title word', (t, _k, w) => ({ query: t.code, ...w.range }))],
    scan: (k, w) => ({
      query: 'is-all-day:no',
      projectId: own(k, w).projectId,
      ...w.range,
      maxResults: 2500,
    }),
  },
  create_project: {
    // Takes only a name, client and colour: nothing to probe (names are unique per tenant, so
    // another tenant's project name is free to use).
    probes: [],
  },
  list_projects: { probes: [], scan: () => ({ includeArchived: true }) },
  create_rule: {
    probes: [probe('projectId', (t) => ({ query: 'title:Intruder', projectId: t.projectId }), 'tenant')],
  },
  create_classification_rule: {
    probes: [
      probe(
        'projectId',
        (t) => ({ projectId: t.projectId, conditions: [{ property: 'title', value: 'Intruder' }] }),
        'tenant',
      ),
    ],
  },
  update_rule: {
    probes: [
      probe('ruleId, weight', (t) => ({ ruleId: t.ruleId, weight: 7 }), 'tenant'),
      probe(
        'ruleId, query',
        (t) => ({ ruleId: t.ruleId, query: 'title:Intruder', enabled: false }),
        'tenant',
      ),
      probe(
        'own rule into its project',
        (t, k, w) => ({ ruleId: own(k, w).ruleId, projectId: t.projectId }),
        'tenant',
      ),
    ],
  },
  delete_rule: { probes: [probe('ruleId', (t) => ({ ruleId: t.ruleId }), 'tenant')] },
  list_rules: {
    probes: [],
    lookups: [probe('projectId', (t) => ({ projectId: t.projectId }), 'tenant')],
    scan: () => ({}),
  },
  classify_event: {
    probes: [
      probe(
        'calendarId + eventId, own project',
        (t, k, w) => ({ calendarId: t.calendarId, eventId: t.eventId, projectId: own(k, w).projectId }),
        'unreadable',
      ),
      probe(
        'calendarId + occurrence id, skip',
        (t) => ({ calendarId: t.calendarId, eventId: t.instanceId, skip: true }),
        'unreadable',
      ),
      probe(
        'calendar name + booking event, skip',
        (t) => ({ calendarId: t.calendarName, eventId: t.bookingEventId, skip: true }),
        'unreadable',
      ),
      probe('eventId in own calendar', (t, k) => ({ calendarId: k.home, eventId: t.eventId, skip: true })),
      probe(
        'own event into its project',
        (t, k, w) => ({ calendarId: k.home, eventId: seeded(w, k.home).eventId, projectId: t.projectId }),
        'tenant',
      ),
    ],
  },
  apply_rules: { probes: overCalendars(range, 'unreadable') },
  get_time_summary: {
    probes: overCalendars(range),
    scan: (_k, w) => ({ ...w.range, groupBy: 'project', includeDeclined: true, roundingMinutes: 0 }),
  },
  schedule_prompt_at: { probes: toTarget((w) => ({ at: later(w, '19:00') })) },
  schedule_prompt_cron: { probes: toTarget(() => ({ cron: '0 9 * * MON-FRI', timeZone: 'UTC' })) },
  schedule_prompt_every: { probes: toTarget(() => ({ every: '4h', maxRepetitions: 3 })) },
  schedule_prompt_rrule: {
    probes: toTarget((w) => ({
      rrule: 'FREQ=WEEKLY;COUNT=3',
      dtstart: later(w, '19:00').slice(0, -1),
      timeZone: 'UTC',
    })),
  },
  schedule_prompt_around_events: {
    probes: [
      ...overCalendars(() => ({ ...intruderPrompt, ...aroundStandups })),
      ...toTarget(() => aroundStandups),
    ],
  },
  list_scheduled_prompts: { probes: [], scan: () => ({ includeCancelled: true }) },
  cancel_scheduled_prompt: {
    probes: [probe('scheduleId', (t) => ({ scheduleId: t.scheduleId }), 'key')],
  },
  list_delivery_targets: { probes: [], scan: () => ({}) },
  list_letta_agents: { probes: [probe('targetId', (t) => ({ targetId: t.targetId }), 'tenant')] },
  test_delivery_target: { probes: [probe('targetId', (t) => ({ targetId: t.targetId }), 'tenant')] },
  scheduler_status: { probes: [], scan: () => ({}) },
};

type CalendarKey = keyof World['calendars'];

interface Target {
  calendar: CalendarKey;
  why: string;
  readable: boolean;
  otherTenant: boolean;
}

/** What each key must not reach: another tenant's calendar, an ungranted one, or Write on a read-only one. */
const TARGETS: Record<KeyName, Target[]> = {
  A1: [
    { calendar: 'b1', why: "tenant B's b1", readable: false, otherTenant: true },
    { calendar: 'a1', why: 'a1, Read only', readable: true, otherTenant: false },
  ],
  A2: [
    { calendar: 'a1', why: 'a1 of its own tenant, no grant', readable: false, otherTenant: false },
    { calendar: 'b1', why: "tenant B's b1", readable: false, otherTenant: true },
  ],
  B1: [
    { calendar: 'a1', why: "tenant A's a1", readable: false, otherTenant: true },
    { calendar: 'a2', why: "tenant A's a2", readable: false, otherTenant: true },
  ],
};

/** Whether `target` is out of the probe's reach for the key, so the call must be refused. */
function outOfReach(p: Probe, target: Target): boolean {
  switch (p.reach) {
    case 'calendar':
    case 'key':
      return true;
    case 'unreadable':
      return !target.readable;
    case 'tenant':
      return target.otherTenant;
  }
}

const KEYS: KeyName[] = ['A1', 'A2', 'B1'];

function isWrite(tool: string): boolean {
  return catalogue().get(tool)?.definition.access === 'write';
}

function brief(result: CallToolResult): string {
  return JSON.stringify(result.content).slice(0, 600);
}

describe.each([
  ['Calgate calendars', 'local'],
  ["tenant B's calendar on Outlook", 'outlook'],
  ["tenant B's calendar on a CalDAV server (Radicale)", 'caldav'],
  ["tenant B's calendar on a CalDAV server (Xandikos)", 'xandikos'],
  ["tenant B's subscribed calendar feed", 'ics'],
] as const)('no leak between tenants, keys and grants, tool by tool (%s)', (_label, where) => {
  let gw: TestGateway;
  let ms: TestMicrosoftEmulator | undefined;
  let world: World;
  let fakes: Record<CalendarKey, Ids>;
  let asSeeded: unknown;
  let caldav: TestCaldavServer | undefined;
  let feeds: FeedServer | undefined;
  const visible = new Map<KeyName, Set<string>>();

  beforeAll(async () => {
    // The tenants' delivery targets are receivers on loopback.
    if (where === 'outlook') {
      ms = await startTestMicrosoftEmulator({
        users: [{ email: NARWHAL, timeZone: 'UTC', calendars: [{ name: 'Narwhal Ledger' }] }],
      });
    }
    gw = await startTestGateway({ ...ms?.env, ...HIGH_RATE_LIMITS, TARGETS_ALLOW_PRIVATE: 'true' });
    const emulator = ms;
    if (where === 'caldav' || where === 'xandikos') {
      // Tenant B's calendar is a CalDAV account's, read and written through the caldav provider.
      caldav = where === 'caldav' ? await startRadicale() : await startXandikos();
      await caldav.makeCalendar(new URL('narwhal/', caldav.home).pathname, {
        displayName: 'Narwhal Ledger',
        timeZone: 'UTC',
      });
    }
    const server = caldav;
    if (where === 'ics') {
      // Tenant B's calendar is a subscription to a feed holding its events; its booking is recorded
      // beside them (a feed takes no writes, book_slot included).
      feeds = await startFeedServer();
    }
    const feedServer = feeds;
    world = await seedWorld(
      gw,
      feedServer !== undefined
        ? {
            b1: async (tenantId, day) => {
              const on = day.replaceAll('-', '');
              const guest = 'ATTENDEE:mailto:narwhal.guest@example.com';
              feedServer.publish('/narwhal.ics', {
                etag: 'narwhal-1',
                body: vcalendar(
                  [],
                  [
                    [
                      'UID:narwhal-standup@feed.example',
                      `DTSTART:${on}T090000Z`,
                      `DTEND:${on}T100000Z`,
                      'SUMMARY:Narwhal standup',
                      'DESCRIPTION:Narwhal private notes',
                      'LOCATION:Narwhal room',
                      guest,
                    ],
                    [
                      'UID:narwhal-weekly@feed.example',
                      `DTSTART:${on}T110000Z`,
                      `DTEND:${on}T120000Z`,
                      'RRULE:FREQ=WEEKLY;COUNT=4',
                      'SUMMARY:Narwhal weekly sync',
                      guest,
                    ],
                    [
                      'UID:narwhal-booking@feed.example',
                      `DTSTART:${on}T140000Z`,
                      `DTEND:${on}T143000Z`,
                      'SUMMARY:Narwhal booking',
                    ],
                  ],
                ),
              });
              const subscribed = await subscribeIcs(
                {
                  connections: gw.runtime.connections,
                  tenancy: gw.runtime.tenancy,
                  google: gw.runtime.google,
                  allowPrivate: true,
                },
                tenantId,
                { url: feedServer.url('/narwhal.ics'), name: 'Narwhal Ledger' },
                { access: 'none', keyIds: [] },
              );
              const calendarId = subscribed.calendars[0]?.id as string;
              const bookingEventId = icsEventId('narwhal-booking@feed.example');
              return {
                calendarId,
                eventId: icsEventId('narwhal-standup@feed.example'),
                seriesId: icsEventId('narwhal-weekly@feed.example'),
                bookingEventId,
                book: async (keyId, idempotencyKey) =>
                  (
                    await new BookingRepository(gw.runtime.db).confirm({
                      tenantId,
                      keyId,
                      calendarId,
                      eventId: bookingEventId,
                      start: new Date(`${day}T14:00:00Z`),
                      end: new Date(`${day}T14:30:00Z`),
                      idempotencyKey,
                    })
                  ).id,
              };
            },
          }
        : emulator !== undefined
          ? {
              b1: async (tenantId) =>
                (await connectOutlookAccount(gw, emulator, tenantId, [], NARWHAL, 'write')).calendars[
                  'Narwhal Ledger'
                ] as string,
            }
          : server !== undefined
            ? {
                b1: async (tenantId) => {
                  const connected = await connectCaldav(
                    {
                      connections: gw.runtime.connections,
                      tenancy: gw.runtime.tenancy,
                      google: gw.runtime.google,
                      allowPrivate: true,
                    },
                    tenantId,
                    { url: server.root, username: server.username, password: server.password },
                    { access: 'none', keyIds: [] },
                  );
                  return connected.calendars[0]?.id as string;
                },
              }
            : {},
    );
    const { rows } = await gw.db.pool.query<{ provider: string }>(
      'SELECT n.provider::text AS provider FROM calendars c JOIN connections n ON n.id = c.connection_id WHERE c.id = $1',
      [world.calendars.b1.calendarId],
    );
    expect(rows[0]?.provider).toBe(
      { local: 'local', outlook: 'microsoft', caldav: 'caldav', xandikos: 'caldav', ics: 'ics' }[where],
    );
    fakes = {
      a1: fakeIds(world.calendars.a1),
      a2: fakeIds(world.calendars.a2),
      b1: fakeIds(world.calendars.b1),
    };
    for (const name of KEYS) {
      const { tools } = await world.keys[name].client.listTools();
      visible.set(name, new Set(tools.map((tool) => tool.name)));
    }
    asSeeded = await snapshot(gw);
  });

  afterAll(async () => {
    await Promise.all(world?.clients.map((client) => client.close()) ?? []);
    await gw?.stop();
    await ms?.close();
    await Promise.all(world?.receivers.map((receiver) => receiver.close()) ?? []);
    await caldav?.stop();
    await feeds?.close();
  });

  it('covers every tool of the catalogue, as a key with Write sees it and /api/docs lists it', async () => {
    const docs = (await (await fetch(`${gw.url}/api/docs`)).json()) as { tools: { name: string }[] };
    const all = [...(visible.get('A1') ?? [])].sort();
    expect(all).toEqual(docs.tools.map((tool) => tool.name).sort());
    expect(Object.keys(MATRIX).sort()).toEqual(all);
    expect([...(visible.get('A2') ?? [])].every((tool) => !isWrite(tool))).toBe(true);
  });

  const cases = KEYS.flatMap((key) =>
    TARGETS[key].flatMap((target) =>
      Object.entries(MATRIX).flatMap(([tool, row]) =>
        target.readable && !isWrite(tool)
          ? []
          : row.probes
              .filter((p) => outOfReach(p, target))
              .map((p) => ({ key, target: target.calendar, why: target.why, tool, probe: p })),
      ),
    ),
  );

  describe.each(KEYS)('key %s', (keyName) => {
    it.each(cases.filter((c) => c.key === keyName))(
      '$tool, $why, $probe.label: refused as if it did not exist, nothing changed',
      async ({ tool, target, probe: p }) => {
        const key = world.keys[keyName];
        const real = world.calendars[target];
        const fake = fakes[target];
        const args = p.args(real, key, world);
        const control = p.args(fake, key, world);
        const before = await snapshot(gw);
        const [forbidden, missing] = (await Promise.all([
          key.client.callTool({ name: tool, arguments: args }),
          key.client.callTool({ name: tool, arguments: control }),
        ])) as [CallToolResult, CallToolResult];
        expect(await snapshot(gw), 'the call changed stored data').toEqual(before);
        expect(refused(tool, forbidden), `not refused: ${brief(forbidden)}`).toBe(true);
        expect(refused(tool, missing), `nonexistent ids not refused: ${brief(missing)}`).toBe(true);

        const answer = masked(forbidden, real, args);
        expect(leaked(answer, foreignStrings(world, key)), answer).toEqual([]);
        if (!visible.get(keyName)?.has(tool)) {
          expect(answer).toMatch(/needs (Read|Write) on at least one calendar/);
        }
        const writeOnReadable =
          key.readable.has(real.calendarId) &&
          visible.get(keyName)?.has(tool) === true &&
          leaves(args).some(
            (leaf) => leaf === real.calendarId || leaf === real.calendarName || leaf === real.bookingId,
          );
        if (writeOnReadable) {
          expect(answer).toMatch(/not write|needs write|no write|write is missing/i);
          const details = [
            `${real.code} standup`,
            `${real.code} weekly`,
            `${real.code} private`,
            `${real.code} booking`,
            real.guest,
          ];
          expect(leaked(answer, details), answer).toEqual([]);
        } else {
          expect(answer).toBe(masked(missing, fake, control));
        }
      },
    );
  });

  const lookups = KEYS.flatMap((key) =>
    TARGETS[key]
      .filter((target) => !target.readable)
      .flatMap((target) =>
        Object.entries(MATRIX).flatMap(([tool, row]) =>
          (row.lookups ?? [])
            .filter((p) => outOfReach(p, target))
            .map((p) => ({ key, target: target.calendar, why: target.why, tool, probe: p })),
        ),
      ),
  );

  it.each(lookups)(
    '$key $tool, $why, $probe.label: answered as for a word nothing holds',
    async ({ key: keyName, tool, target, probe: p }) => {
      const key = world.keys[keyName];
      const args = p.args(world.calendars[target], key, world);
      const control = p.args(fakes[target], key, world);
      const [found, none] = (await Promise.all([
        key.client.callTool({ name: tool, arguments: args }),
        key.client.callTool({ name: tool, arguments: control }),
      ])) as [CallToolResult, CallToolResult];
      const answer = masked(found, world.calendars[target], args);
      expect(leaked(answer, foreignStrings(world, key)), answer).toEqual([]);
      expect(answer).toBe(masked(none, fakes[target], control));
    },
  );

  const scans = KEYS.flatMap((key) =>
    Object.entries(MATRIX).flatMap(([tool, row]) =>
      row.scan === undefined ? [] : [{ key, tool, scan: row.scan }],
    ),
  );

  it.each(scans)(
    '$key $tool over everything it can read: nothing foreign',
    async ({ key: keyName, tool, scan }) => {
      const key = world.keys[keyName];
      const result = (await key.client.callTool({
        name: tool,
        arguments: scan(key, world),
      })) as CallToolResult;
      expect(result.isError, brief(result)).toBeFalsy();
      const answer = JSON.stringify(result);
      expect(leaked(answer, foreignStrings(world, key)), answer.slice(0, 2000)).toEqual([]);
    },
  );

  it.each(KEYS)("%s's reads do show its own calendars, events and bookings", async (keyName) => {
    const key = world.keys[keyName];
    const mine = Object.values(world.calendars).filter((calendar) => key.readable.has(calendar.calendarId));
    const read = async (tool: string, args: Args) =>
      JSON.stringify(await key.client.callTool({ name: tool, arguments: args }));
    const events = await read('list_events', { ...world.range, singleEvents: true, maxResults: 500 });
    const bookings = await read('list_bookings', {});
    const found = await read('search', { query: '' });
    for (const calendar of mine) {
      expect(events).toContain(`${calendar.code} standup`);
      expect(events).toContain(calendar.instanceId);
      expect(bookings).toContain(calendar.bookingId);
      expect(found).toContain(`${calendar.calendarId}:${calendar.eventId}`);
      expect(bookings.includes(calendar.idempotencyKey)).toBe(calendar.bookedBy === key.id);
    }
  });

  it.each(KEYS)(
    "%s's rules tools show its tenant's project and rule, and time filed on its calendars only",
    async (keyName) => {
      const key = world.keys[keyName];
      const mine = Object.values(world.calendars).filter((calendar) => key.readable.has(calendar.calendarId));
      const { projectId, ruleId, word } = rulesOf(world, key.tenantId);
      const read = async (tool: string, args: Args) => {
        const result = await key.client.callTool({ name: tool, arguments: args });
        expect(result.isError, `${tool}: ${brief(result as CallToolResult)}`).toBeFalsy();
        return result.structuredContent as Record<string, unknown>;
      };
      expect((await read('list_projects', {})).projects).toEqual([
        expect.objectContaining({ id: projectId, name: `${word} Retainer`, client: `${word} Holdings` }),
      ]);
      expect((await read('list_rules', {})).rules).toEqual([
        expect.objectContaining({ id: ruleId, projectId, project: `${word} Retainer` }),
      ]);
      // Per calendar: the single event filed by the rule and the series' first occurrence by hand
      // (2 h), three occurrences pending (3 h), the booking skipped.
      const summary = await read('get_time_summary', {
        ...world.range,
        groupBy: 'project',
        roundingMinutes: 0,
      });
      expect(summary.totals).toEqual([
        { projectId, project: `${word} Retainer`, hours: 2 * mine.length },
        { projectId: null, project: 'Unclassified', hours: 3 * mine.length },
      ]);
      expect(summary.excluded).toEqual({ declined: 0, allDay: 0, skipped: mine.length });
      const preview = (await read('preview_rule', {
        query: 'is-all-day:no',
        projectId,
        ...world.range,
        maxResults: 2500,
      })) as { matches: { calendarId: string }[]; matchCount: number; conflicts: { eventId: string }[] };
      expect(preview.matchCount).toBe(6 * mine.length);
      expect(new Set(preview.matches.map((match) => match.calendarId))).toEqual(key.readable);
      expect(preview.conflicts.map((conflict) => conflict.eventId).sort()).toEqual(
        mine.map((calendar) => calendar.bookingEventId).sort(),
      );
    },
  );

  it.each(KEYS)(
    "%s's scheduler tools show its tenant's delivery target and its own scheduled prompts only",
    async (keyName) => {
      const key = world.keys[keyName];
      const mine = schedulesOf(world, key.tenantId);
      const read = async (tool: string, args: Args) => {
        const result = await key.client.callTool({ name: tool, arguments: args });
        expect(result.isError, `${tool}: ${brief(result as CallToolResult)}`).toBeFalsy();
        return result.structuredContent as Record<string, unknown>;
      };
      expect((await read('list_delivery_targets', {})).targets).toEqual([
        expect.objectContaining({
          targetId: mine.targetId,
          kind: 'webhook',
          name: `${mine.targetWord} relay`,
          origin: mine.origin,
        }),
      ]);
      // Only B1 made a schedule (its tenant's); tenant A's is its seeding key's.
      const own = mine.keyId === key.id ? [mine.scheduleId] : [];
      const { schedules } = (await read('list_scheduled_prompts', { includeCancelled: true })) as {
        schedules: { scheduleId: string; prompt: string; lastDelivery: { status: string } | null }[];
      };
      expect(schedules.map((schedule) => schedule.scheduleId)).toEqual(own);
      for (const schedule of schedules) {
        expect(schedule.prompt).toContain(mine.promptWord);
        expect(schedule.lastDelivery?.status).toBe('failed');
      }
      const status = (await read('scheduler_status', {})) as {
        recentFailures: { scheduleId: string }[];
      };
      expect(status.recentFailures.map((failure) => failure.scheduleId)).toEqual(own);
    },
  );

  it.each(KEYS)('%s is busy exactly when the calendars it can read are', async (keyName) => {
    const key = world.keys[keyName];
    const calendars = Object.values(world.calendars);
    const mine = calendars.filter((calendar) => key.readable.has(calendar.calendarId));
    const expected = mine.flatMap(busyOf).sort((x, y) => x[0] - y[0]);
    const spans = (blocks: { start: string; end: string }[]) =>
      blocks
        .map((block) => [Date.parse(block.start), Date.parse(block.end)])
        .sort((x, y) => (x[0] ?? 0) - (y[0] ?? 0));
    const window = { ...world.range, timeZone: 'UTC' };
    const availability = await key.client.callTool({
      name: 'get_availability',
      arguments: { ...window, privacy: 'full', minDurationMinutes: 1 },
    });
    const merged = availability.structuredContent as {
      busy: { start: string; end: string }[];
      calendarsMerged: number;
    };
    expect(spans(merged.busy)).toEqual(expected);
    expect(merged.calendarsMerged).toBe(mine.length);
    const perCalendar = await key.client.callTool({ name: 'find_free_time', arguments: window });
    const free = perCalendar.structuredContent as {
      busy: { calendarId: string; start: string; end: string }[];
    };
    expect(spans(free.busy)).toEqual(expected);
    expect(new Set(free.busy.map((block) => block.calendarId))).toEqual(key.readable);
    for (const other of calendars.filter((calendar) => !key.readable.has(calendar.calendarId))) {
      const check = await key.client.callTool({
        name: 'check_availability',
        arguments: { timeMin: `${other.day}T09:00:00Z`, timeMax: `${other.day}T14:30:00Z` },
      });
      expect(check.structuredContent, `busy on ${other.code}'s day`).toMatchObject({ available: true });
    }
  });

  it.each(['A1', 'B1'] as const)(
    '%s booking over a busy time it holds is refused naming only its own calendar',
    async (keyName) => {
      const key = world.keys[keyName];
      const { day } = seeded(world, key.writable);
      const result = (await key.client.callTool({
        name: 'book_slot',
        arguments: {
          calendarId: key.writable,
          summary: 'Overlap',
          start: `${day}T09:00:00Z`,
          end: `${day}T14:15:00Z`,
        },
      })) as CallToolResult;
      expect(result.isError, brief(result)).toBe(true);
      const answer = JSON.stringify(result);
      expect(answer).toContain(key.writable);
      expect(leaked(answer, foreignStrings(world, key)), answer).toEqual([]);
    },
  );

  it('leaves every calendar, event, booking, grant, key, target and schedule as seeded', async () => {
    expect(await snapshot(gw)).toEqual(asSeeded);
  });
});
