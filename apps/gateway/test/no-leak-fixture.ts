/**
 * Two tenants, three probing keys and three seeded local calendars for the no-leak matrix:
 * tenant A has a1 and a2, tenant B has b1; probe A2 is a connected app (OAuth access token). Every calendar holds a single event, a weekly series
 * and a book_slot booking, each marked with the calendar's code word so any leak of its data is
 * a string search away. Each tenant has one project and one rule, marked with the tenant's word;
 * its rule files every calendar's single event and a manual filing its series' first occurrence.
 * Each tenant also has a webhook delivery target on a receiver of its own, marked with a word of
 * the tenant's, and a scheduled prompt of one key, marked with a word of that key's, whose last
 * delivery failed. b1 may live elsewhere (Outlook, CalDAV) or be a subscribed feed, whose events
 * come with it and whose booking is recorded beside them, as a feed takes no writes.
 */
import { newEventId, newId } from '@calgate/core';
import { type Receiver, startReceiver } from '@calgate/testkit';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { connectClient, type TestGateway } from './harness.ts';
import { callOk } from './tool-calls.ts';

/** Everything a key could try to reach in one calendar: real ids here, or fakes of the same shape. */
export interface Ids {
  calendarId: string;
  /** The calendar's name, which works wherever its id does. */
  calendarName: string;
  eventId: string;
  seriesId: string;
  instanceId: string;
  bookingId: string;
  bookingEventId: string;
  idempotencyKey: string;
  /** An attendee's email on the calendar's events. */
  guest: string;
  /** The word in every summary, title, description and attendee of the calendar. */
  code: string;
  /** The project and the rule of the calendar's tenant (shared by all the tenant's keys). */
  projectId: string;
  ruleId: string;
  /** The delivery target of the calendar's tenant (shared by all its keys). */
  targetId: string;
  /** The scheduled prompt of the key that seeded the calendar (seen by that key alone). */
  scheduleId: string;
}

export interface SeededCalendar extends Ids {
  tenantId: string;
  /** The date (UTC) of its single event, booking and first occurrence; every calendar has its own. */
  day: string;
  /** The key whose idempotencyKey made the booking. */
  bookedBy: string;
}

export type KeyName = 'A1' | 'A2' | 'B1';

/** A tenant's project and rule; `word` is in the project's name and client and in the rule's query. */
export interface TenantRules {
  tenantId: string;
  projectId: string;
  ruleId: string;
  word: string;
}

/**
 * A tenant's webhook delivery target, named with `targetWord` and on a receiver (an origin) of
 * its own, and a prompt `keyId` scheduled to it, worded with `promptWord`.
 */
export interface TenantSchedules {
  tenantId: string;
  targetId: string;
  targetWord: string;
  url: string;
  origin: string;
  keyId: string;
  scheduleId: string;
  promptWord: string;
}

export interface ProbingKey {
  name: KeyName;
  id: string;
  tenantId: string;
  client: Client;
  /** A calendar the key may read, and one it may write (the readable one when it may not write). */
  home: string;
  writable: string;
  readable: ReadonlySet<string>;
}

export interface World {
  /** The first seeded date; a1, a2 and b1 hold their events on it and the two days after. */
  day: string;
  /** [timeMin, timeMax) holding every seeded event, booking and occurrence. */
  range: { timeMin: string; timeMax: string };
  calendars: Record<'a1' | 'a2' | 'b1', SeededCalendar>;
  keys: Record<KeyName, ProbingKey>;
  /** Every id, secret-free, that must never reach a key beyond its own tenant. */
  tenantIds: string[];
  rules: TenantRules[];
  schedules: TenantSchedules[];
  keyIds: string[];
  clients: Client[];
  /** The tenants' webhook receivers. */
  receivers: Receiver[];
}

const DAY_MS = 86_400_000;

const call = callOk;

/**
 * A calendar whose events came with it (a subscribed feed, which takes no writes): the ids of its
 * single event, series and the event its booking is recorded on, as seedCalendar would make them.
 */
export interface PrefilledCalendar {
  calendarId: string;
  eventId: string;
  seriesId: string;
  bookingEventId: string;
  /** Records the booking of `bookingEventId` (14:00–14:30) for `keyId` under `idempotencyKey`. */
  book(keyId: string, idempotencyKey: string): Promise<string>;
}

/**
 * A single event (09:00–10:00 UTC), a weekly series of four (11:00–12:00) and a booking
 * (14:00–14:30) in `calendarId` from `day` on, written by the given keys (or, prefilled, already
 * there, with the booking recorded beside them).
 */
async function seedCalendar(
  writer: Client,
  booker: { client: Client; keyId: string },
  calendar: string | PrefilledCalendar,
  code: string,
  day: string,
  rules: TenantRules,
  schedules: TenantSchedules,
): Promise<SeededCalendar> {
  const calendarId = typeof calendar === 'string' ? calendar : calendar.calendarId;
  const guest = `${code.toLowerCase()}.guest@example.com`;
  const idempotencyKey = `idem-${code.toLowerCase()}-${booker.keyId.slice(-6)}`;
  let single: Record<string, unknown>;
  let series: Record<string, unknown>;
  let booking: Record<string, unknown>;
  if (typeof calendar !== 'string') {
    single = { eventId: calendar.eventId };
    series = { eventId: calendar.seriesId };
    booking = {
      bookingId: await calendar.book(booker.keyId, idempotencyKey),
      eventId: calendar.bookingEventId,
    };
  } else {
    single = await call(writer, 'create_event', {
      calendarId,
      summary: `${code} standup`,
      description: `${code} private notes`,
      location: `${code} room`,
      attendees: [guest],
      start: { dateTime: `${day}T09:00:00Z` },
      end: { dateTime: `${day}T10:00:00Z` },
    });
    series = await call(writer, 'create_event', {
      calendarId,
      summary: `${code} weekly sync`,
      attendees: [guest],
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=4'],
      start: { dateTime: `${day}T11:00:00Z` },
      end: { dateTime: `${day}T12:00:00Z` },
    });
    booking = await call(booker.client, 'book_slot', {
      calendarId,
      summary: `${code} booking`,
      start: `${day}T14:00:00Z`,
      end: `${day}T14:30:00Z`,
      idempotencyKey,
    });
  }
  const seriesId = String(series.eventId);
  const listed = (await call(writer, 'list_events', {
    calendarId,
    timeMin: `${day}T00:00:00Z`,
    timeMax: `${day}T23:59:59Z`,
    singleEvents: true,
  })) as { events: { id: string; recurringEventId?: string }[] };
  const instance = listed.events.find((event) => event.recurringEventId === seriesId);
  if (instance === undefined) {
    throw new Error(`no occurrence of ${seriesId} listed`);
  }
  return {
    tenantId: rules.tenantId,
    calendarId,
    calendarName: `${code} Ledger`,
    eventId: String(single.eventId),
    seriesId,
    instanceId: instance.id,
    bookingId: String(booking.bookingId),
    bookingEventId: String(booking.eventId),
    idempotencyKey,
    guest,
    code,
    day,
    bookedBy: booker.keyId,
    projectId: rules.projectId,
    ruleId: rules.ruleId,
    targetId: schedules.targetId,
    scheduleId: schedules.scheduleId,
  };
}

/** A tenant's project and a rule filing every standup into it, written with `writer`. */
async function seedRules(writer: Client, tenantId: string, word: string): Promise<TenantRules> {
  const { project } = (await call(writer, 'create_project', {
    name: `${word} Retainer`,
    client: `${word} Holdings`,
  })) as { project: { id: string } };
  const { rule } = (await call(writer, 'create_rule', {
    query: `title:standup OR domain:${word.toLowerCase()}.example`,
    projectId: project.id,
  })) as { rule: { id: string } };
  return { tenantId, projectId: project.id, ruleId: rule.id, word };
}

/**
 * A tenant's webhook target on a receiver of its own, a weekly prompt scheduled to it by `writer`
 * (the key `keyId`), and that prompt's last delivery recorded as failed, as a worker records it.
 */
async function seedSchedules(
  gw: TestGateway,
  writer: { client: Client; keyId: string },
  tenantId: string,
  words: { target: string; prompt: string },
): Promise<TenantSchedules & { receiver: Receiver }> {
  let secret = '';
  const receiver = await startReceiver(() => secret);
  const url = `${receiver.url}/${words.target.toLowerCase()}-inbox`;
  const created = await gw.runtime.scheduler.targets.create(tenantId, {
    kind: 'webhook',
    name: `${words.target} relay`,
    url,
  });
  secret = created.secret ?? '';
  const targetId = created.target.id;
  const schedule = await call(writer.client, 'schedule_prompt_cron', {
    prompt: `${words.prompt} digest: summarise the week`,
    cron: '0 8 * * MON',
    timeZone: 'UTC',
    targetId,
  });
  const scheduleId = String(schedule.scheduleId);
  await gw.runtime.scheduler.deliveries.record(tenantId, {
    scheduleId,
    occurrenceAt: new Date(Date.now() - 3_600_000),
    attempt: 3,
    status: 'failed',
    statusCode: 500,
    error: 'The target answered HTTP 500.',
  });
  return {
    tenantId,
    targetId,
    targetWord: words.target,
    url,
    origin: new URL(url).origin,
    keyId: writer.keyId,
    scheduleId,
    promptWord: words.prompt,
    receiver,
  };
}

/**
 * Files the calendars' occurrences by the tenant's rule (each single event into its project, the
 * rest pending), then by hand the series' first occurrence into the project and the booking's
 * event as skip.
 */
async function fileCalendars(writer: Client, range: World['range'], calendars: SeededCalendar[]) {
  await call(writer, 'apply_rules', {
    ...range,
    calendarIds: calendars.map((calendar) => calendar.calendarId),
  });
  for (const calendar of calendars) {
    await call(writer, 'classify_event', {
      calendarId: calendar.calendarId,
      eventId: calendar.instanceId,
      projectId: calendar.projectId,
    });
    await call(writer, 'classify_event', {
      calendarId: calendar.calendarId,
      eventId: calendar.bookingEventId,
      skip: true,
    });
  }
}

/** The busy intervals a seeded calendar holds, in epoch ms. */
export function busyOf(calendar: SeededCalendar): [number, number][] {
  const at = (offsetDays: number, time: string) =>
    Date.parse(`${calendar.day}T${time}Z`) + offsetDays * DAY_MS;
  return [
    [at(0, '09:00:00'), at(0, '10:00:00')],
    ...[0, 7, 14, 21].map((days): [number, number] => [at(days, '11:00:00'), at(days, '12:00:00')]),
    [at(0, '14:00:00'), at(0, '14:30:00')],
  ];
}

/** Ids of the same shape as a seeded calendar's that name nothing at all. */
export function fakeIds(like: Ids): Ids {
  const seriesId = newEventId();
  return {
    calendarId: newId('cal'),
    calendarName: 'Pangolin Ledger',
    eventId: newEventId(),
    seriesId,
    instanceId: `${seriesId}${like.instanceId.slice(like.seriesId.length)}`,
    bookingId: newId('bkg'),
    bookingEventId: newEventId(),
    idempotencyKey: `idem-pangolin-${like.idempotencyKey.slice(-6)}`,
    guest: 'pangolin.guest@example.com',
    code: 'Pangolin',
    projectId: newId('prj'),
    ruleId: newId('rul'),
    targetId: newId('tgt'),
    scheduleId: newId('sch'),
  };
}

export async function seedWorld(
  gw: TestGateway,
  options: {
    /**
     * Makes tenant B's calendar 'Narwhal Ledger' elsewhere (an Outlook or CalDAV account) instead
     * of in Calgate, or (a subscribed feed) with its events already on `day`.
     */
    b1?: (tenantId: string, day: string) => Promise<string | PrefilledCalendar>;
  } = {},
): Promise<World> {
  const start = Date.now() + 7 * DAY_MS;
  const day = (offset: number) => new Date(start + offset * DAY_MS).toISOString().slice(0, 10);
  const range = { timeMin: `${day(0)}T00:00:00Z`, timeMax: `${day(28)}T00:00:00Z` };
  const a = await gw.seedTenant('Tenant Alpha');
  const b = await gw.seedTenant('Tenant Beta');
  const a1 = await gw.localCalendar(a.tenantId, 'Quokka Ledger', 'UTC');
  const a2 = await gw.localCalendar(a.tenantId, 'Wombat Ledger', 'UTC');
  const b1Made =
    options.b1 === undefined
      ? await gw.localCalendar(b.tenantId, 'Narwhal Ledger', 'UTC')
      : await options.b1(b.tenantId, day(2));
  const b1 = typeof b1Made === 'string' ? b1Made : b1Made.calendarId;
  const toolsets = ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'];
  const made = async (tenantId: string, name: KeyName) => {
    const { key, secret } = await gw.runtime.keys.create(tenantId, { name, toolsets });
    return { id: key.id, secret };
  };
  // A2 is a connected app: an OAuth connection a person of tenant A approved, calling with an
  // access token, so every probe also checks that such a principal gets nothing a key would not.
  const connected = async (tenantId: string, name: KeyName) => {
    const userId = newId('usr');
    await gw.db.pool.query('INSERT INTO users (id, tenant_id, email) VALUES ($1, $2, $3)', [
      userId,
      tenantId,
      `${userId}@example.test`,
    ]);
    const { oauth } = gw.runtime.deps.dashboard;
    const { client } = await oauth.registerClient({
      clientName: name,
      redirectUris: ['http://127.0.0.1:9/callback'],
    });
    const id = await oauth.createConnection({
      tenantId,
      userId,
      clientId: client.clientId,
      name,
      toolsets,
      calendars: [],
    });
    const secret = await gw.runtime.deps.oauthServer.tokens.issue({
      tenantId,
      keyId: id,
      clientId: client.clientId,
      scope: 'calendars:read',
    });
    return { id, secret };
  };
  await gw.runtime.keys.setDefaults(a.tenantId, a.keyId, { toolsets });
  const keyA1 = await made(a.tenantId, 'A1');
  const keyA2 = await connected(a.tenantId, 'A2');
  const keyB1 = await made(b.tenantId, 'B1');
  // The seeding keys of each tenant (a.keyId, b.keyId) write what A1 may only read.
  await gw.grant(a.tenantId, a.keyId, a1, { read: true, write: true });
  await gw.grant(a.tenantId, a.keyId, a2, { read: true, write: true });
  await gw.grant(a.tenantId, keyA1.id, a1, { read: true, write: false });
  await gw.grant(a.tenantId, keyA1.id, a2, { read: true, write: true });
  await gw.grant(a.tenantId, keyA2.id, a2, { read: true, write: false });
  await gw.grant(b.tenantId, keyB1.id, b1, { read: true, write: true });

  const adminA = await connectClient(gw.mcpUrl, a.secret);
  const clientA1 = await connectClient(gw.mcpUrl, keyA1.secret);
  const clientA2 = await connectClient(gw.mcpUrl, keyA2.secret);
  const clientB1 = await connectClient(gw.mcpUrl, keyB1.secret);
  const rulesA = await seedRules(adminA, a.tenantId, 'Aardvark');
  const rulesB = await seedRules(clientB1, b.tenantId, 'Bison');
  // Each tenant's schedule is its calendars' seeding key's: a.keyId for a1 and a2, B1 for b1.
  const { receiver: receiverA, ...schedulesA } = await seedSchedules(
    gw,
    { client: adminA, keyId: a.keyId },
    a.tenantId,
    { target: 'Heron', prompt: 'Kestrel' },
  );
  const { receiver: receiverB, ...schedulesB } = await seedSchedules(
    gw,
    { client: clientB1, keyId: keyB1.id },
    b.tenantId,
    { target: 'Ibis', prompt: 'Lynx' },
  );
  // A day of its own per calendar, so busy time reveals which calendars an answer read.
  const calendars = {
    a1: await seedCalendar(
      adminA,
      { client: adminA, keyId: a.keyId },
      a1,
      'Quokka',
      day(0),
      rulesA,
      schedulesA,
    ),
    a2: await seedCalendar(
      adminA,
      { client: clientA1, keyId: keyA1.id },
      a2,
      'Wombat',
      day(1),
      rulesA,
      schedulesA,
    ),
    b1: await seedCalendar(
      clientB1,
      { client: clientB1, keyId: keyB1.id },
      b1Made,
      'Narwhal',
      day(2),
      rulesB,
      schedulesB,
    ),
  };
  await fileCalendars(adminA, range, [calendars.a1, calendars.a2]);
  await fileCalendars(clientB1, range, [calendars.b1]);
  const key = (
    name: KeyName,
    id: string,
    tenantId: string,
    client: Client,
    readable: string[],
    writable: string,
  ) => ({
    name,
    id,
    tenantId,
    client,
    home: readable[readable.length - 1] ?? '',
    writable,
    readable: new Set(readable),
  });
  return {
    day: day(0),
    range,
    calendars,
    keys: {
      A1: key('A1', keyA1.id, a.tenantId, clientA1, [a1, a2], a2),
      A2: key('A2', keyA2.id, a.tenantId, clientA2, [a2], a2),
      B1: key('B1', keyB1.id, b.tenantId, clientB1, [b1], b1),
    },
    tenantIds: [a.tenantId, b.tenantId],
    rules: [rulesA, rulesB],
    schedules: [schedulesA, schedulesB],
    keyIds: [a.keyId, b.keyId, keyA1.id, keyA2.id, keyB1.id],
    clients: [adminA, clientA1, clientA2, clientB1],
    receivers: [receiverA, receiverB],
  };
}

/** The project and rule of a tenant. */
export function rulesOf(world: World, tenantId: string): TenantRules {
  const found = world.rules.find((rules) => rules.tenantId === tenantId);
  if (found === undefined) {
    throw new Error(`no rules seeded for ${tenantId}`);
  }
  return found;
}

/** The delivery target and schedule seeded in a tenant. */
export function schedulesOf(world: World, tenantId: string): TenantSchedules {
  const found = world.schedules.find((schedules) => schedules.tenantId === tenantId);
  if (found === undefined) {
    throw new Error(`no schedules seeded for ${tenantId}`);
  }
  return found;
}

/**
 * Strings that must never appear in an answer to `key`: everything of calendars it cannot read
 * (ids, code word, hence names, titles, notes, attendees), other keys' idempotency keys, ids and
 * scheduled prompts (their ids and word), and other tenants' ids, projects, rules and delivery
 * targets (their ids and word, hence names, clients, queries; a target's URL and origin).
 */
export function foreignStrings(world: World, key: ProbingKey): string[] {
  const out: string[] = [];
  for (const calendar of Object.values(world.calendars)) {
    if (!key.readable.has(calendar.calendarId)) {
      out.push(
        calendar.calendarId,
        calendar.code,
        calendar.eventId,
        calendar.seriesId,
        calendar.bookingId,
        calendar.bookingEventId,
      );
    }
    if (calendar.bookedBy !== key.id) {
      out.push(calendar.idempotencyKey);
    }
  }
  out.push(...world.tenantIds.filter((id) => id !== key.tenantId));
  for (const rules of world.rules.filter((rules) => rules.tenantId !== key.tenantId)) {
    out.push(rules.projectId, rules.ruleId, rules.word);
  }
  for (const schedules of world.schedules) {
    if (schedules.tenantId !== key.tenantId) {
      out.push(schedules.targetId, schedules.targetWord, schedules.url, schedules.origin);
    }
    if (schedules.keyId !== key.id) {
      out.push(schedules.scheduleId, schedules.promptWord);
    }
  }
  out.push(...world.keyIds.filter((id) => id !== key.id));
  return out;
}

/** The foreign strings found in `text`, case-insensitively. */
export function leaked(text: string, foreign: readonly string[]): string[] {
  const haystack = text.toLowerCase();
  return foreign.filter((value) => haystack.includes(value.toLowerCase()));
}

/**
 * Everything a tool call could change, as rows: calendars, grants, local events, bookings,
 * connections, keys (without their last use), projects, rules, classifications, delivery
 * targets, scheduled prompts and their deliveries.
 */
export async function snapshot(gw: TestGateway): Promise<unknown> {
  const { rows } = await gw.db.pool.query<{ state: unknown }>(`
    SELECT json_build_object(
      'calendars', (SELECT json_agg(c ORDER BY c.id) FROM calendars c),
      'grants', (SELECT json_agg(g ORDER BY g.key_id, g.calendar_id) FROM grants g),
      'events', (SELECT json_agg(e ORDER BY e.calendar_id, e.id) FROM local_events e),
      'bookings', (SELECT json_agg(b ORDER BY b.id) FROM bookings b),
      'connections', (SELECT json_agg(n ORDER BY n.id) FROM connections n),
      'keys', (SELECT json_agg(to_jsonb(k) - 'last_used_at' ORDER BY k.id) FROM api_keys k),
      'projects', (SELECT json_agg(p ORDER BY p.id) FROM projects p),
      'rules', (SELECT json_agg(r ORDER BY r.id) FROM rules r),
      'classifications', (SELECT json_agg(f ORDER BY f.tenant_id, f.calendar_id, f.event_id)
        FROM classifications f),
      'targets', (SELECT json_agg(t ORDER BY t.id) FROM delivery_targets t),
      'schedules', (SELECT json_agg(s ORDER BY s.id) FROM schedules s),
      'deliveries', (SELECT json_agg(d ORDER BY d.id) FROM deliveries d)
    ) AS state`);
  return rows[0]?.state;
}

const SLOTS = [
  'calendarId',
  'calendarName',
  'eventId',
  'seriesId',
  'instanceId',
  'bookingId',
  'bookingEventId',
  'idempotencyKey',
  'guest',
  'code',
  'projectId',
  'ruleId',
  'targetId',
  'scheduleId',
] as const;

/** The strings of a call's arguments, a search document id (`cal_…:event`) split in its parts. */
export function leaves(value: unknown): string[] {
  if (typeof value === 'string') {
    return value.split(':');
  }
  if (value !== null && typeof value === 'object') {
    return Object.values(value).flatMap(leaves);
  }
  return [];
}

/**
 * The answer as JSON with every id the caller passed replaced by its slot's placeholder (a
 * series id counts as passed with one of its occurrences), so answers to real and fake ids
 * compare. Ids the caller did not pass stay, so a leaked one is still seen.
 */
export function masked(result: CallToolResult, ids: Ids, args: Record<string, unknown>): string {
  const passed = new Set(leaves(args));
  const slots = SLOTS.filter(
    (slot) => passed.has(ids[slot]) || (slot === 'seriesId' && passed.has(ids.instanceId)),
  ).sort((x, y) => ids[y].length - ids[x].length);
  let text = JSON.stringify({
    isError: result.isError === true,
    content: result.content,
    structuredContent: result.structuredContent,
  });
  for (const slot of slots) {
    text = text.replaceAll(ids[slot], `<${slot}>`);
  }
  return text;
}

/** Refused: an error result, or (batch_update_events) a result in which every item failed. */
export function refused(tool: string, result: CallToolResult): boolean {
  if (result.isError === true) {
    return true;
  }
  const out = result.structuredContent as { succeeded?: number; failed?: number } | undefined;
  return tool === 'batch_update_events' && out?.succeeded === 0 && (out.failed ?? 0) > 0;
}

/** The seeded calendar with this id. */
export function seeded(world: World, calendarId: string): SeededCalendar {
  const found = Object.values(world.calendars).find((calendar) => calendar.calendarId === calendarId);
  if (found === undefined) {
    throw new Error(`no seeded calendar ${calendarId}`);
  }
  return found;
}
