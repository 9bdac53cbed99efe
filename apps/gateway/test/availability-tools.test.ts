import { connectRedis, RedisSlotLock } from '@calgate/locks';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import { redisUrl } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { decode } from '@toon-format/toon';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

// The week of the change from CEST to CET in Berlin (Sunday 2026-10-25, 03:00 → 02:00).
const FRIDAY = '2026-10-23';
const MONDAY = '2026-10-26';
const TUESDAY = '2026-10-27';
const WEEK = { timeMin: `${FRIDAY}T00:00:00+02:00`, timeMax: '2026-10-28T00:00:00+01:00' };
const HOURS = {
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  start: '09:00',
  end: '17:00',
  timeZone: 'Europe/Berlin',
};

interface Slot {
  start: string;
  end: string;
  durationMinutes: number;
}

describe('availability tools on local calendars, over HTTP with the MCP SDK client', () => {
  let gw: TestGateway;
  let client: Client;
  let work: string;
  let home: string;
  let redis: Redis;
  /** Event ids by summary. */
  const ids: Record<string, string> = {};

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return { result, text: textOf(result), out: result.structuredContent as Record<string, unknown> };
  };

  beforeAll(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '10000' });
    const owner = await gw.seedTenant('Owner');
    work = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
    home = await gw.localCalendar(owner.tenantId, 'Home', 'Europe/Berlin');
    await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: true });
    await gw.grant(owner.tenantId, owner.keyId, home, { read: true, write: false });
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const ref = (id: string) => ({ id, externalId: id, timeZone: 'Europe/Berlin' });
    const timed = (summary: string, day: string, from: string, to: string, offset: string, extra = {}) => ({
      summary,
      start: { dateTime: `${day}T${from}:00${offset}` },
      end: { dateTime: `${day}T${to}:00${offset}` },
      ...extra,
    });
    for (const event of [
      timed('Review (CEST)', FRIDAY, '10:00', '11:00', '+02:00'),
      timed('Review (CET)', MONDAY, '10:00', '11:00', '+01:00'),
      timed('Focus (free)', MONDAY, '13:00', '14:00', '+01:00', { transparency: 'transparent' }),
      timed('Declined call', MONDAY, '15:00', '16:00', '+01:00', {
        attendees: [
          { email: 'me@example.com', self: true, responseStatus: 'declined' },
          { email: 'ann@example.com', organizer: true, responseStatus: 'accepted' },
        ],
      }),
      { summary: 'Offsite', start: { date: TUESDAY }, end: { date: '2026-10-28' } },
    ]) {
      ids[event.summary] = (await provider.insertEvent(ref(work), event)).id;
    }
    ids['School run'] = (
      await provider.insertEvent(ref(home), timed('School run', MONDAY, '10:30', '12:00', '+01:00'))
    ).id;
    client = await connectClient(gw.mcpUrl, owner.secret);
    redis = connectRedis(redisUrl(), { name: 'availability-test' });
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await client?.close();
    await gw?.stop();
  });

  it('lists the four tools with output schemas and the reference annotations', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['find_free_slots', 'check_availability', 'get_availability', 'expand_rrule']) {
      const tool = byName.get(name);
      expect(tool?.outputSchema?.type, name).toBe('object');
      // Hints equal to MCP's defaults are left out; destructive and idempotent mean nothing for reads.
      expect(tool?.annotations, name).toEqual(
        name === 'expand_rrule' ? { readOnlyHint: true, openWorldHint: false } : { readOnlyHint: true },
      );
    }
  });

  it('find_free_slots keeps 09:00-17:00 Berlin time across the DST change, with buffers; all-day, transparent and declined events behave', async () => {
    const { result, out } = await call('find_free_slots', {
      calendarIds: [work],
      ...WEEK,
      workingHours: HOURS,
      bufferMinutes: 15,
    });
    expect(result.isError).toBeFalsy();
    expect(out.slots as Slot[]).toEqual([
      { start: `${FRIDAY}T09:00:00+02:00`, end: `${FRIDAY}T09:45:00+02:00`, durationMinutes: 45 },
      { start: `${FRIDAY}T11:15:00+02:00`, end: `${FRIDAY}T17:00:00+02:00`, durationMinutes: 345 },
      { start: `${MONDAY}T09:00:00+01:00`, end: `${MONDAY}T09:45:00+01:00`, durationMinutes: 45 },
      // The transparent focus block and the declined call do not split the afternoon.
      { start: `${MONDAY}T11:15:00+01:00`, end: `${MONDAY}T17:00:00+01:00`, durationMinutes: 345 },
      // Tuesday is taken by the all-day offsite.
    ]);
    const utc = await call('find_free_slots', {
      calendarIds: [work],
      timeMin: `${MONDAY}T08:00:00Z`,
      timeMax: `${MONDAY}T12:00:00Z`,
      minDurationMinutes: 60,
    });
    // Without working hours: the calendar's zone, and no buffer.
    expect(utc.out.slots).toEqual([
      { start: `${MONDAY}T09:00:00+01:00`, end: `${MONDAY}T10:00:00+01:00`, durationMinutes: 60 },
      { start: `${MONDAY}T11:00:00+01:00`, end: `${MONDAY}T13:00:00+01:00`, durationMinutes: 120 },
    ]);
  });

  it('check_availability: opaque events and all-day events block; transparent and declined ones do not', async () => {
    const check = async (start: string, end: string) =>
      (await call('check_availability', { calendarIds: [work], timeMin: start, timeMax: end })).out;
    expect(await check(`${MONDAY}T13:00:00+01:00`, `${MONDAY}T14:00:00+01:00`)).toEqual({
      available: true,
      timeZone: 'Europe/Berlin',
    });
    expect(await check(`${MONDAY}T15:00:00+01:00`, `${MONDAY}T16:00:00+01:00`)).toEqual({
      available: true,
      timeZone: 'Europe/Berlin',
    });
    expect(await check(`${MONDAY}T10:30:00+01:00`, `${MONDAY}T12:00:00+01:00`)).toEqual({
      available: false,
      timeZone: 'Europe/Berlin',
      conflicts: [
        {
          start: `${MONDAY}T10:30:00+01:00`,
          end: `${MONDAY}T11:00:00+01:00`,
          calendarId: work,
          kind: 'event',
          eventId: ids['Review (CET)'],
          summary: 'Review (CET)',
        },
      ],
    });
    expect(await check(`${TUESDAY}T12:00:00+01:00`, `${TUESDAY}T12:30:00+01:00`)).toEqual({
      available: false,
      timeZone: 'Europe/Berlin',
      conflicts: [
        {
          start: `${TUESDAY}T12:00:00+01:00`,
          end: `${TUESDAY}T12:30:00+01:00`,
          calendarId: work,
          kind: 'event',
          eventId: ids.Offsite,
          summary: 'Offsite',
        },
      ],
    });
  });

  it('check_availability and find_free_slots see an active booking hold (the lock book_slot takes)', async () => {
    const lock = new RedisSlotLock(redis);
    const hold = { start: Date.parse('2026-10-28T09:00:00Z'), end: Date.parse('2026-10-28T10:00:00Z') };
    const lease = await lock.acquire(work, hold, 30_000);
    expect(lease).not.toBeNull();
    const held = await call('check_availability', {
      calendarIds: [work],
      timeMin: '2026-10-28T09:30:00Z',
      timeMax: '2026-10-28T10:30:00Z',
    });
    expect(held.out).toEqual({
      available: false,
      timeZone: 'Europe/Berlin',
      conflicts: [
        {
          start: '2026-10-28T10:30:00+01:00',
          end: '2026-10-28T11:00:00+01:00',
          calendarId: work,
          kind: 'hold',
        },
      ],
    });
    const slots = await call('find_free_slots', {
      calendarIds: [work],
      timeMin: '2026-10-28T09:00:00+01:00',
      timeMax: '2026-10-28T13:00:00+01:00',
    });
    expect(slots.out.slots).toEqual([
      { start: '2026-10-28T09:00:00+01:00', end: '2026-10-28T10:00:00+01:00', durationMinutes: 60 },
      { start: '2026-10-28T11:00:00+01:00', end: '2026-10-28T13:00:00+01:00', durationMinutes: 120 },
    ]);
    if (lease !== null) {
      expect(await lock.release(lease)).toBe(true);
    }
    const free = await call('check_availability', {
      calendarIds: [work],
      timeMin: '2026-10-28T09:30:00Z',
      timeMax: '2026-10-28T10:30:00Z',
    });
    expect(free.out).toEqual({ available: true, timeZone: 'Europe/Berlin' });
  });

  it('get_availability: opaque hides how many calendars are busy, full counts them', async () => {
    const window = {
      timeMin: `${MONDAY}T08:00:00+01:00`,
      timeMax: `${MONDAY}T18:00:00+01:00`,
      calendarIds: [work, home],
    };
    const opaque = await call('get_availability', window);
    expect(opaque.out).toEqual({
      timeZone: 'Europe/Berlin',
      busy: [{ start: `${MONDAY}T10:00:00+01:00`, end: `${MONDAY}T12:00:00+01:00`, sourceCount: 0 }],
      free: [
        { start: `${MONDAY}T08:00:00+01:00`, end: `${MONDAY}T10:00:00+01:00`, durationMinutes: 120 },
        { start: `${MONDAY}T12:00:00+01:00`, end: `${MONDAY}T18:00:00+01:00`, durationMinutes: 360 },
      ],
      calendarsMerged: 2,
      privacy: 'opaque',
    });
    const full = await call('get_availability', { ...window, privacy: 'full', minDurationMinutes: 180 });
    // Full names the events that make each block busy.
    const review = { calendarId: work, kind: 'event', eventId: ids['Review (CET)'], summary: 'Review (CET)' };
    const schoolRun = { calendarId: home, kind: 'event', eventId: ids['School run'], summary: 'School run' };
    expect(full.out).toEqual({
      timeZone: 'Europe/Berlin',
      busy: [
        {
          start: `${MONDAY}T10:00:00+01:00`,
          end: `${MONDAY}T10:30:00+01:00`,
          sourceCount: 1,
          events: [review],
        },
        {
          start: `${MONDAY}T10:30:00+01:00`,
          end: `${MONDAY}T11:00:00+01:00`,
          sourceCount: 2,
          events: [review, schoolRun],
        },
        {
          start: `${MONDAY}T11:00:00+01:00`,
          end: `${MONDAY}T12:00:00+01:00`,
          sourceCount: 1,
          events: [schoolRun],
        },
      ],
      free: [{ start: `${MONDAY}T12:00:00+01:00`, end: `${MONDAY}T18:00:00+01:00`, durationMinutes: 360 }],
      calendarsMerged: 2,
      privacy: 'full',
    });
  });

  it('get_availability reports a calendar the key cannot read as missing', async () => {
    const denied = await call('get_availability', { ...WEEK, calendarIds: ['cal_doesnotexist'] });
    expect(denied.result.isError).toBe(true);
    expect(denied.text).toMatch(/was not found/);
  });

  it('expand_rrule over MCP: DST gap and overlap, Kathmandu, TOON text', async () => {
    const gap = await call('expand_rrule', {
      rrule: 'FREQ=WEEKLY;BYDAY=SU;COUNT=3',
      dtstart: '2026-03-22T02:30:00',
      timeZone: 'Europe/Berlin',
      durationMinutes: 30,
    });
    // 03-29 02:30 does not exist: read with the offset before the gap (+01:00).
    expect(gap.out.instances).toEqual([
      { start: '2026-03-22T02:30:00+01:00', end: '2026-03-22T03:00:00+01:00' },
      { start: '2026-03-29T03:30:00+02:00', end: '2026-03-29T04:00:00+02:00' },
      { start: '2026-04-05T02:30:00+02:00', end: '2026-04-05T03:00:00+02:00' },
    ]);
    const overlap = await call('expand_rrule', {
      rrule: 'FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
      dtstart: '2026-10-25T02:30:00',
      timeZone: 'Europe/Berlin',
      count: 2,
      format: 'toon',
    });
    expect(decode(overlap.text)).toEqual(overlap.out);
    expect(overlap.out).toEqual({
      timeZone: 'Europe/Berlin',
      instances: [
        { start: '2026-10-25T02:30:00+02:00', end: '2026-10-25T02:30:00+01:00' },
        { start: '2027-10-31T02:30:00+02:00', end: '2027-10-31T02:30:00+01:00' },
      ],
      truncated: true,
    });
    const kathmandu = await call('expand_rrule', {
      rrule: 'FREQ=DAILY;COUNT=1',
      dtstart: '2026-06-01T09:00:00',
      timeZone: 'Asia/Kathmandu',
    });
    expect(kathmandu.out.instances).toEqual([
      { start: '2026-06-01T09:00:00+05:45', end: '2026-06-01T10:00:00+05:45' },
    ]);
    const capped = await call('expand_rrule', {
      rrule: 'FREQ=MINUTELY',
      dtstart: '2026-06-01T09:00:00',
      timeZone: 'UTC',
      count: 50_000,
    });
    expect(capped.result.isError).toBe(true);
    expect(capped.text).toMatch(/cap of 10000 instances/);
  });

  it('expand_rrule of 10,000 instances: the text and the structured answer agree, in either format', async () => {
    const rule = {
      rrule: 'FREQ=DAILY',
      dtstart: '2026-01-05T09:30:00',
      timeZone: 'America/New_York',
      count: 10_000,
    };
    // The last page, reached through the pages before it.
    const last = async (format: 'json' | 'toon') => {
      let page = await call('expand_rrule', { ...rule, format });
      while (page.out.nextPageToken !== undefined) {
        page = await call('expand_rrule', { ...rule, format, pageToken: page.out.nextPageToken });
      }
      return page;
    };
    const json = await last('json');
    const toon = await last('toon');
    const small = await call('expand_rrule', { ...rule, count: 20, format: 'toon' });
    const first = await call('expand_rrule', { ...rule, format: 'json' });
    const instances = json.out.instances as { start: string; end: string }[];
    expect(instances).toHaveLength(10_000 - 29 * 344);
    expect(instances.at(-1)).toEqual({
      start: '2053-05-22T09:30:00-04:00',
      end: '2053-05-22T10:30:00-04:00',
    });
    expect(JSON.parse(json.text)).toEqual(json.out);
    expect(toon.out).toEqual(json.out);
    expect(decode(toon.text)).toEqual(toon.out);
    expect(toon.text.length).toBeLessThan(json.text.length);
    expect(small.out.instances).toEqual((first.out.instances as unknown[]).slice(0, 20));
    expect(decode(small.text)).toEqual({ ...small.out });
  });

  it('expand_rrule warns when dtstart does not match the rule, and says whether it is an instance', async () => {
    // 2026-10-27 is a Tuesday; the rule makes Mondays.
    const offRule = await call('expand_rrule', {
      rrule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=3',
      dtstart: `${TUESDAY}T09:00:00`,
      timeZone: 'Europe/Berlin',
      durationMinutes: 30,
    });
    expect(offRule.result.isError).toBeFalsy();
    expect(offRule.out).toEqual({
      timeZone: 'Europe/Berlin',
      instances: [
        { start: `${TUESDAY}T09:00:00+01:00`, end: `${TUESDAY}T09:30:00+01:00` },
        { start: '2026-11-02T09:00:00+01:00', end: '2026-11-02T09:30:00+01:00' },
        { start: '2026-11-09T09:00:00+01:00', end: '2026-11-09T09:30:00+01:00' },
      ],
      truncated: false,
      warnings: [
        `dtstart ${TUESDAY}T09:00:00 (a Tuesday) does not match the rule FREQ=WEEKLY;BYDAY=MO;COUNT=3. RFC 5545 counts dtstart as the first instance all the same, so it is included as the first instance (and counts towards COUNT); to leave it out, start from the rule's first date, 2026-11-02T09:00:00.`,
      ],
    });
    expect(offRule.text).toContain('does not match the rule FREQ=WEEKLY;BYDAY=MO;COUNT=3');

    const excluded = await call('expand_rrule', {
      rrule: 'FREQ=WEEKLY;BYDAY=MO',
      dtstart: `${TUESDAY}T09:00:00`,
      timeZone: 'Europe/Berlin',
      count: 1,
      exdates: [`${TUESDAY}T09:00:00`],
    });
    expect(excluded.out).toEqual({
      timeZone: 'Europe/Berlin',
      instances: [{ start: '2026-11-02T09:00:00+01:00', end: '2026-11-02T10:00:00+01:00' }],
      truncated: true,
      warnings: [
        `dtstart ${TUESDAY}T09:00:00 (a Tuesday) does not match the rule FREQ=WEEKLY;BYDAY=MO. RFC 5545 counts dtstart as the first instance all the same, but exdates leave it out, so it is not included.`,
      ],
    });

    const onRule = await call('expand_rrule', {
      rrule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=2',
      dtstart: `${MONDAY}T09:00:00`,
      timeZone: 'Europe/Berlin',
    });
    expect(onRule.out).not.toHaveProperty('warnings');
    expect(onRule.out.instances).toHaveLength(2);
  });
});
