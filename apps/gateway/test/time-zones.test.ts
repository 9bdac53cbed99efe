/**
 * The person's time zone, end to end over MCP (real Postgres, the official SDK client): an agent
 * sets the key's zone with set_time_zone and every later answer is written in it and says so;
 * `timeZone` on every tool that answers instants; local date-times accepted by every tool that
 * takes instants; local times in a DST gap refused by name, repeated ones taken first and told.
 */
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const ALL_TOOLSETS = ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'];
const GAP = '02:30 does not exist on 2027-03-28 in Europe/Berlin (clocks go from 02:00 to 03:00)';
const REPEATED =
  '02:30 on 2027-10-31 happens twice in Europe/Berlin (+02:00 and +01:00); the first (+02:00) was taken';

/**
 * Tools whose answers hold no instants (ids, names, settings, counts). Every other tool must take
 * `timeZone` and answer with the `timeZone` its instants are written in; a new tool that answers
 * instants fails the catalogue test below until it does.
 */
const WITHOUT_INSTANTS = new Set([
  'list_calendars',
  'list_colors',
  'delete_event',
  'import_events',
  'create_calendar',
  'create_rule',
  'create_classification_rule',
  'update_rule',
  'delete_rule',
  'list_rules',
  'create_project',
  'list_projects',
  'classify_event',
  'cancel_scheduled_prompt',
  'list_delivery_targets',
  'list_letta_agents',
  'test_delivery_target',
]);

/**
 * OpenAI's connector shapes, which must stay exactly as they are: `search` answers only
 * `{results:[{id,title,url}]}` (titles quote times in the key's zone, with offsets); `fetch` names
 * its zone in `metadata.timeZone`. Neither takes `timeZone`.
 */
const FIXED_SHAPES = new Set(['search', 'fetch']);

type Args = Record<string, unknown>;
type Out = Record<string, unknown>;

interface Caller {
  tenantId: string;
  keyId: string;
  client: Client;
}

describe('the person’s time zone, everywhere (over MCP)', () => {
  let gw: TestGateway;
  const clients: Client[] = [];

  async function caller(name: string): Promise<Caller> {
    const { tenantId } = await gw.seedTenant(name);
    const { key, secret } = await gw.runtime.keys.create(tenantId, { name, toolsets: ALL_TOOLSETS });
    const client = await connectClient(gw.mcpUrl, secret);
    clients.push(client);
    return { tenantId, keyId: key.id, client };
  }

  async function calendar(who: Caller, summary: string, timeZone: string): Promise<string> {
    const id = await gw.localCalendar(who.tenantId, summary, timeZone);
    await gw.grant(who.tenantId, who.keyId, id, { read: true, write: true });
    return id;
  }

  function call(who: Caller, name: string, args: Args): Promise<CallToolResult> {
    return who.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  }

  async function ok(who: Caller, name: string, args: Args): Promise<Out> {
    const result = await call(who, name, args);
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Out;
  }

  async function refused(who: Caller, name: string, args: Args): Promise<string> {
    const result = await call(who, name, args);
    expect(result.isError, `${name} was not refused: ${JSON.stringify(result.structuredContent)}`).toBe(true);
    return textOf(result);
  }

  beforeAll(async () => {
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, TARGETS_ALLOW_PRIVATE: 'true' });
  });

  afterAll(async () => {
    for (const client of clients) {
      await client.close();
    }
    await gw?.stop();
  });

  it('set_time_zone makes the key answer in Europe/Berlin: current time, bookings, time summary, events; audited', async () => {
    const person = await caller('Fresh install');
    // As on a fresh install on a UTC server: the first calendar is in UTC, the key has no zone.
    const work = await calendar(person, 'Calgate', 'UTC');
    expect(await ok(person, 'get_current_time', {})).toMatchObject({ timeZone: 'UTC' });
    const booking = await ok(person, 'book_slot', {
      calendarId: work,
      start: '2026-12-08T15:00:00Z',
      end: '2026-12-08T15:30:00Z',
      summary: 'Intro call',
    });
    expect(booking).toMatchObject({ timeZone: 'UTC', start: '2026-12-08T15:00:00Z' });
    // Just after midnight in Berlin, still the day before in UTC.
    await ok(person, 'create_event', {
      calendarId: work,
      summary: 'Late call',
      start: { dateTime: '2026-12-07T23:15:00Z' },
      end: { dateTime: '2026-12-08T00:15:00Z' },
    });

    const near = await refused(person, 'set_time_zone', { timeZone: 'Berlin' });
    expect(near).toContain("Unknown time zone 'Berlin'. Did you mean 'Europe/Berlin'?");
    expect(await ok(person, 'get_current_time', {})).toMatchObject({ timeZone: 'UTC' });

    const set = await ok(person, 'set_time_zone', { timeZone: 'Europe/Berlin' });
    expect(set).toMatchObject({ timeZone: 'Europe/Berlin', utcOffset: '+01:00' });
    expect(set.previousTimeZone).toBeUndefined();
    const again = await ok(person, 'set_time_zone', { timeZone: 'Europe/Berlin' });
    expect(again.previousTimeZone).toBe('Europe/Berlin');
    expect(set.dateTime).toMatch(/\+01:00$/);

    const now = await ok(person, 'get_current_time', {});
    expect(now).toMatchObject({ timeZone: 'Europe/Berlin', utcOffset: '+01:00' });

    const bookings = await ok(person, 'list_bookings', {});
    expect(bookings.timeZone).toBe('Europe/Berlin');
    expect(bookings.bookings).toEqual([
      expect.objectContaining({ start: '2026-12-08T16:00:00+01:00', end: '2026-12-08T16:30:00+01:00' }),
    ]);

    const summary = await ok(person, 'get_time_summary', {
      timeMin: '2026-12-07',
      timeMax: '2026-12-08',
      groupBy: 'day',
      roundingMinutes: 0,
    });
    expect(summary).toMatchObject({
      timeZone: 'Europe/Berlin',
      timeMin: '2026-12-07T00:00:00+01:00',
      timeMax: '2026-12-09T00:00:00+01:00',
    });
    // Days split at Berlin's midnight: both are on the 8th (in UTC the late call was on the 7th).
    const lines = summary.lines as { period: string; hours: number }[];
    expect(lines.map((line) => [line.period, line.hours])).toEqual([['2026-12-08', 1.5]]);

    const events = await ok(person, 'list_events', { timeMin: '2026-12-08', timeMax: '2026-12-08' });
    expect(events.timeZone).toBe('Europe/Berlin');
    expect(events.events).toEqual([
      expect.objectContaining({
        summary: 'Late call',
        start: { dateTime: '2026-12-08T00:15:00+01:00' },
        end: { dateTime: '2026-12-08T01:15:00+01:00' },
      }),
      expect.objectContaining({
        summary: 'Intro call',
        start: expect.objectContaining({ dateTime: '2026-12-08T16:00:00+01:00' }),
      }),
    ]);

    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query<{ outcome: string; target: string[] }>(
      "SELECT outcome, target FROM audit_log WHERE key_id = $1 AND tool = 'set_time_zone' ORDER BY id",
      [person.keyId],
    );
    expect(rows).toEqual([
      { outcome: 'error', target: [] },
      { outcome: 'ok', target: ['timeZone=Europe/Berlin'] },
      { outcome: 'ok', target: ['timeZone=Europe/Berlin'] },
    ]);
    const stored = await gw.runtime.keys.get(person.tenantId, person.keyId);
    expect(stored?.timeZone).toBe('Europe/Berlin');

    expect(await ok(person, 'cancel_booking', { bookingId: booking.bookingId })).toMatchObject({
      timeZone: 'Europe/Berlin',
      start: '2026-12-08T16:00:00+01:00',
      status: 'cancelled',
    });

    // The zone a call names still wins, and answers say which they are in.
    const asked = await ok(person, 'get_current_time', { timeZone: 'Asia/Kathmandu' });
    expect(asked).toMatchObject({ timeZone: 'Asia/Kathmandu', utcOffset: '+05:45' });
  });

  it('the workspace zone is the person’s too: it comes before a calendar’s, and the key’s own before it', async () => {
    const person = await caller('Workspace in Berlin');
    const office = await calendar(person, 'New York office', 'America/New_York');
    await ok(person, 'book_slot', {
      calendarId: office,
      start: '2026-12-08T10:00:00',
      end: '2026-12-08T10:30:00',
      summary: 'Read in New York',
    });
    await gw.runtime.tenancy.updateTenant(person.tenantId, { timeZone: 'Europe/Berlin' });
    gw.forgetKeys(person.tenantId);
    expect(await ok(person, 'list_bookings', {})).toMatchObject({
      timeZone: 'Europe/Berlin',
      bookings: [{ start: '2026-12-08T16:00:00+01:00' }],
    });
    expect(
      await ok(person, 'list_events', { calendarId: office, timeMin: '2026-12-08', timeMax: '2026-12-08' }),
    ).toMatchObject({
      timeZone: 'Europe/Berlin',
      events: [{ start: { dateTime: '2026-12-08T16:00:00+01:00', timeZone: 'America/New_York' } }],
    });
    await ok(person, 'set_time_zone', { timeZone: 'Asia/Tokyo' });
    expect(await ok(person, 'list_bookings', {})).toMatchObject({
      timeZone: 'Asia/Tokyo',
      bookings: [{ start: '2026-12-09T00:00:00+09:00' }],
    });
  });

  it('a key may set only its own zone; set_time_zone is in the calendar toolset and needs no grant', async () => {
    const first = await caller('Two keys');
    const { key, secret } = await gw.runtime.keys.create(first.tenantId, {
      name: 'second',
      toolsets: ['calendar'],
    });
    const second = await connectClient(gw.mcpUrl, secret);
    clients.push(second);
    const listed = await second.listTools();
    const tool = listed.tools.find((candidate) => candidate.name === 'set_time_zone');
    expect(tool?.annotations).toEqual({ destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const set = await second.callTool({ name: 'set_time_zone', arguments: { timeZone: 'Asia/Tokyo' } });
    expect(set.isError, textOf(set)).toBeFalsy();
    expect((await gw.runtime.keys.get(first.tenantId, key.id))?.timeZone).toBe('Asia/Tokyo');
    expect((await gw.runtime.keys.get(first.tenantId, first.keyId))?.timeZone).toBeNull();
    expect(await ok(first, 'get_current_time', {})).toMatchObject({ timeZone: 'UTC' });
    const bad = await second.callTool({ name: 'set_time_zone', arguments: { timeZone: 'Europe/Berln' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("Did you mean 'Europe/Berlin'?");
    expect((await gw.runtime.keys.get(first.tenantId, key.id))?.timeZone).toBe('Asia/Tokyo');
  });

  it('every tool that answers instants takes timeZone and answers with the timeZone it wrote them in', async () => {
    const person = await caller('Catalogue');
    await calendar(person, 'Anything', 'Europe/Berlin');
    const { tools } = await person.client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of WITHOUT_INSTANTS) {
      expect(names, `${name} is listed as answering no instants but is not in the catalogue`).toContain(name);
    }
    const missing: string[] = [];
    // tools/list names only top-level output fields; the full schemas are in calgate://docs/tools.
    const doc = await person.client.readResource({ uri: 'calgate://docs/tools' });
    const documented = JSON.parse((doc.contents[0] as { text: string }).text) as {
      tools: { name: string; outputSchema: { properties?: Record<string, unknown> } }[];
    };
    const fetchMetadata = documented.tools.find((tool) => tool.name === 'fetch')?.outputSchema.properties
      ?.metadata as { properties?: Record<string, unknown> } | undefined;
    expect(Object.keys(fetchMetadata?.properties ?? {})).toContain('timeZone');
    for (const tool of tools) {
      if (WITHOUT_INSTANTS.has(tool.name) || FIXED_SHAPES.has(tool.name)) {
        continue;
      }
      if (!('timeZone' in ((tool.inputSchema.properties ?? {}) as Record<string, unknown>))) {
        missing.push(`${tool.name}: inputSchema has no timeZone`);
      }
      if (!('timeZone' in ((tool.outputSchema?.properties ?? {}) as Record<string, unknown>))) {
        missing.push(`${tool.name}: outputSchema has no timeZone`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('timeZone on list_events, get_event, search_events, search/fetch, list_bookings and writes', async () => {
    const person = await caller('Asks for zones');
    const berlin = await calendar(person, 'Berlin office', 'Europe/Berlin');
    const created = await ok(person, 'create_event', {
      calendarId: berlin,
      summary: 'Review with Carla',
      start: { dateTime: '2026-12-07T15:00:00+01:00' },
      end: { dateTime: '2026-12-07T16:00:00+01:00' },
      timeZone: 'America/New_York',
    });
    expect(created).toMatchObject({
      timeZone: 'America/New_York',
      event: {
        start: { dateTime: '2026-12-07T09:00:00-05:00' },
        end: { dateTime: '2026-12-07T10:00:00-05:00' },
      },
    });
    const eventId = created.eventId as string;
    const range = { timeMin: '2026-12-07', timeMax: '2026-12-07' };

    const inBerlin = await ok(person, 'list_events', { calendarId: berlin, ...range });
    expect(inBerlin).toMatchObject({
      timeZone: 'Europe/Berlin',
      events: [{ start: { dateTime: '2026-12-07T15:00:00+01:00' } }],
    });
    const inNewYork = await ok(person, 'list_events', {
      calendarId: berlin,
      ...range,
      timeZone: 'America/New_York',
    });
    expect(inNewYork).toMatchObject({
      timeZone: 'America/New_York',
      events: [{ id: eventId, start: { dateTime: '2026-12-07T09:00:00-05:00' } }],
    });
    // The New York day 2026-12-07 starts six hours after Berlin's: the bounds are read there too.
    expect(inNewYork.events).toHaveLength(1);

    expect(await ok(person, 'get_event', { eventId, timeZone: 'Asia/Tokyo' })).toMatchObject({
      timeZone: 'Asia/Tokyo',
      event: {
        start: { dateTime: '2026-12-07T23:00:00+09:00' },
        end: { dateTime: '2026-12-08T00:00:00+09:00' },
      },
    });
    expect(await ok(person, 'get_event', { eventId })).toMatchObject({
      timeZone: 'Europe/Berlin',
      event: { start: { dateTime: '2026-12-07T15:00:00+01:00' } },
    });
    const searched = await ok(person, 'search_events', {
      query: 'Review',
      timeMin: '2026-12-01',
      timeMax: '2026-12-31',
      timeZone: 'America/New_York',
    });
    expect(searched).toMatchObject({
      timeZone: 'America/New_York',
      timeMin: '2026-12-01T00:00:00-05:00',
      events: [{ id: eventId, start: { dateTime: '2026-12-07T09:00:00-05:00' } }],
    });
    const updated = await ok(person, 'update_event', { eventId, summary: 'Review', timeZone: 'UTC' });
    expect(updated).toMatchObject({
      timeZone: 'UTC',
      event: { start: { dateTime: '2026-12-07T14:00:00Z' } },
    });

    await ok(person, 'book_slot', {
      calendarId: berlin,
      start: '2026-12-09T10:00:00+01:00',
      end: '2026-12-09T10:30:00+01:00',
      summary: 'Booked',
    });
    expect(await ok(person, 'list_bookings', { timeZone: 'America/New_York' })).toMatchObject({
      timeZone: 'America/New_York',
      bookings: [{ start: '2026-12-09T04:00:00-05:00', end: '2026-12-09T04:30:00-05:00' }],
    });
    const wrong = await refused(person, 'list_events', { timeZone: 'Europe/Berln' });
    expect(wrong).toContain("Unknown time zone 'Europe/Berln'. Did you mean 'Europe/Berlin'?");
    // A write with a bad zone changes nothing.
    const invite = await refused(person, 'manage_attendees', {
      eventId,
      addAttendees: ['pat@example.com'],
      timeZone: 'Berlin',
    });
    expect(invite).toContain("Did you mean 'Europe/Berlin'?");
    const attendees = await ok(person, 'manage_attendees', { eventId, addAttendees: ['ann@example.com'] });
    expect(attendees).toMatchObject({ timeZone: 'Europe/Berlin', attendees: ['ann@example.com'] });
  });

  it('a local time in a DST gap is refused by name on create_event, update_event and book_slot; nothing changes', async () => {
    const person = await caller('Spring forward');
    const berlin = await calendar(person, 'Home', 'Europe/Berlin');
    const before = await ok(person, 'list_events', {
      calendarId: berlin,
      timeMin: '2027-03-27',
      timeMax: '2027-03-29',
    });

    for (const start of [
      { dateTime: '2027-03-28T02:30:00' },
      { dateTime: '2027-03-28T02:30:00', timeZone: 'Europe/Berlin' },
    ]) {
      const text = await refused(person, 'create_event', {
        calendarId: berlin,
        summary: 'Night shift',
        start,
        end: { dateTime: '2027-03-28T03:30:00', timeZone: 'Europe/Berlin' },
      });
      expect(text).toContain(GAP);
      expect(text).not.toMatch(/end must/);
    }

    const existing = await ok(person, 'create_event', {
      calendarId: berlin,
      summary: 'Early',
      start: { dateTime: '2027-03-28T01:00:00' },
      end: { dateTime: '2027-03-28T01:30:00' },
    });
    const eventId = existing.eventId as string;
    const moved = await refused(person, 'update_event', {
      eventId,
      start: { dateTime: '2027-03-28T02:30:00' },
    });
    expect(moved).toContain(GAP);
    expect(await ok(person, 'get_event', { eventId })).toMatchObject({
      event: { start: { dateTime: '2027-03-28T01:00:00+01:00' } },
    });

    const booked = await refused(person, 'book_slot', {
      calendarId: berlin,
      start: '2027-03-28T02:30:00',
      end: '2027-03-28T03:30:00',
      summary: 'Slot',
    });
    expect(booked).toContain(GAP);
    expect((await ok(person, 'list_bookings', {})).bookings).toEqual([]);
    const after = await ok(person, 'list_events', {
      calendarId: berlin,
      timeMin: '2027-03-27',
      timeMax: '2027-03-29',
    });
    expect((after.events as unknown[]).length).toBe((before.events as unknown[]).length + 1);
    // Range bounds are read the same way.
    expect(
      await refused(person, 'list_events', { timeMin: '2027-03-28T02:30:00', timeMax: '2027-03-29' }),
    ).toContain(GAP);
  });

  it('a local time in a repeated hour takes the first reading and says so on create_event, update_event and book_slot', async () => {
    const person = await caller('Fall back');
    const berlin = await calendar(person, 'Home', 'Europe/Berlin');
    const created = await ok(person, 'create_event', {
      calendarId: berlin,
      summary: 'Night shift',
      start: { dateTime: '2027-10-31T02:30:00' },
      end: { dateTime: '2027-10-31T04:00:00' },
    });
    expect(created).toMatchObject({
      timeZone: 'Europe/Berlin',
      event: {
        start: { dateTime: '2027-10-31T02:30:00+02:00' },
        end: { dateTime: '2027-10-31T04:00:00+01:00' },
      },
    });
    const warned = (created.warnings as { kind: string; message: string }[]).map(
      (warning) => warning.message,
    );
    expect(warned.some((message) => message.startsWith(REPEATED))).toBe(true);

    const updated = await ok(person, 'update_event', {
      eventId: created.eventId,
      start: { dateTime: '2027-10-31T02:30:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2027-10-31T05:00:00', timeZone: 'Europe/Berlin' },
    });
    expect(updated).toMatchObject({ event: { start: { dateTime: '2027-10-31T02:30:00+02:00' } } });
    expect((updated.warnings as { message: string }[]).some((w) => w.message.startsWith(REPEATED))).toBe(
      true,
    );

    const booked = await ok(person, 'book_slot', {
      calendarId: berlin,
      start: '2027-10-30T02:30:00',
      end: '2027-10-31T02:30:00',
      summary: 'Whole day',
    });
    expect(booked).toMatchObject({
      timeZone: 'Europe/Berlin',
      start: '2027-10-30T02:30:00+02:00',
      end: '2027-10-31T02:30:00+02:00',
    });
    expect((booked.warnings as { message: string }[]).map((w) => w.message)).toEqual([
      expect.stringContaining(REPEATED),
    ]);
    // An offset names the second reading exactly, without a notice.
    const second = await ok(person, 'create_event', {
      calendarId: berlin,
      summary: 'Second half',
      start: { dateTime: '2027-10-31T02:30:00+01:00' },
      end: { dateTime: '2027-10-31T03:00:00+01:00' },
      allowDuplicates: true,
    });
    expect(
      ((second.warnings ?? []) as { message: string }[]).some((w) => w.message.includes('happens twice')),
    ).toBe(false);
  });

  it('local date-times are accepted by book_slot, schedule_prompt_at and update_event, read in the call’s zone', async () => {
    const person = await caller('Local times');
    const berlin = await calendar(person, 'Berlin office', 'Europe/Berlin');
    const booked = await ok(person, 'book_slot', {
      calendarId: berlin,
      start: '2026-12-09T10:00:00',
      end: '2026-12-09T10:30',
      summary: 'Local booking',
    });
    expect(booked).toMatchObject({
      timeZone: 'Europe/Berlin',
      start: '2026-12-09T10:00:00+01:00',
      end: '2026-12-09T10:30:00+01:00',
    });
    const inNewYork = await ok(person, 'book_slot', {
      calendarId: berlin,
      start: '2026-12-09T10:00:00',
      end: '2026-12-09T10:30:00',
      summary: 'New York booking',
      timeZone: 'America/New_York',
    });
    expect(inNewYork).toMatchObject({
      timeZone: 'America/New_York',
      start: '2026-12-09T10:00:00-05:00',
      end: '2026-12-09T10:30:00-05:00',
    });

    const created = await ok(person, 'create_event', {
      calendarId: berlin,
      summary: 'Planning',
      start: { dateTime: '2026-12-10T09:00:00' },
      end: { dateTime: '2026-12-10T10:00:00' },
    });
    // The zone a local time was read in stays with it, so a series would repeat at that wall-clock time.
    expect(created).toMatchObject({
      event: { start: { dateTime: '2026-12-10T09:00:00+01:00', timeZone: 'Europe/Berlin' } },
    });
    const moved = await ok(person, 'update_event', {
      eventId: created.eventId,
      start: { dateTime: '2026-12-10T14:00:00' },
      end: { dateTime: '2026-12-10T15:30' },
    });
    expect(moved).toMatchObject({
      timeZone: 'Europe/Berlin',
      event: {
        start: { dateTime: '2026-12-10T14:00:00+01:00' },
        end: { dateTime: '2026-12-10T15:30:00+01:00' },
      },
    });

    const { target } = await gw.runtime.scheduler.targets.create(person.tenantId, {
      kind: 'webhook',
      name: 'Hook',
      url: 'http://127.0.0.1:9/hook',
    });
    await ok(person, 'set_time_zone', { timeZone: 'Europe/Berlin' });
    const scheduled = await ok(person, 'schedule_prompt_at', {
      prompt: 'Remind me of the review.',
      at: '2030-01-07T09:00:00',
      targetId: target.id,
    });
    expect(scheduled).toMatchObject({
      kind: 'once',
      timeZone: 'Europe/Berlin',
      nextRun: '2030-01-07T09:00:00+01:00',
      upcoming: ['2030-01-07T09:00:00+01:00'],
    });
    const tokyo = await ok(person, 'schedule_prompt_at', {
      prompt: 'Call Tokyo.',
      at: '2030-01-07T09:00',
      timeZone: 'Asia/Tokyo',
      targetId: target.id,
    });
    expect(tokyo).toMatchObject({ timeZone: 'Asia/Tokyo', nextRun: '2030-01-07T09:00:00+09:00' });
    const listed = await ok(person, 'list_scheduled_prompts', {});
    expect(listed.timeZone).toBe('Europe/Berlin');
    expect((listed.schedules as { nextRun: string }[]).map((schedule) => schedule.nextRun).sort()).toEqual([
      '2030-01-07T01:00:00+01:00',
      '2030-01-07T09:00:00+01:00',
    ]);
    const gap = await refused(person, 'schedule_prompt_at', {
      prompt: 'Never.',
      at: '2030-03-31T02:30:00',
      targetId: target.id,
    });
    expect(gap).toContain(
      '02:30 does not exist on 2030-03-31 in Europe/Berlin (clocks go from 02:00 to 03:00)',
    );
    const bad = await refused(person, 'book_slot', {
      calendarId: berlin,
      start: 'next tuesday',
      end: '2026-12-09T10:30:00',
      summary: 'x',
    });
    expect(bad).toMatch(/'next tuesday' is not a date-time/);
  });
});
