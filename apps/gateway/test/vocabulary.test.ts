import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

/** Wall-clock time in Berlin in December: +01:00, to the second, never `Z` or milliseconds. */
const BERLIN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+01:00$/;
const NEW_YORK = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-05:00$/;

/** Every string in `value` that looks like a date-time. */
function instantsIn(value: unknown): string[] {
  if (typeof value === 'string') {
    return /^\d{4}-\d{2}-\d{2}T/.test(value) ? [value] : [];
  }
  if (Array.isArray(value)) {
    return value.flatMap(instantsIn);
  }
  if (value !== null && typeof value === 'object') {
    return Object.values(value).flatMap(instantsIn);
  }
  return [];
}

describe('one vocabulary and answers in the zone that applies (local calendars, over MCP)', () => {
  let gw: TestGateway;
  let client: Client;
  let berlin: string;
  let newYork: string;

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return {
      result,
      text: textOf(result),
      out: result.structuredContent as Record<string, unknown> & { deprecated?: string[] },
    };
  };

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const owner = await gw.seedTenant('Owner');
    berlin = await gw.localCalendar(owner.tenantId, 'Berlin office', 'Europe/Berlin');
    newYork = await gw.localCalendar(owner.tenantId, 'New York office', 'America/New_York');
    await gw.grant(owner.tenantId, owner.keyId, berlin, { read: true, write: true });
    await gw.grant(owner.tenantId, owner.keyId, newYork, { read: true, write: true });
    client = await connectClient(gw.mcpUrl, owner.secret);
    const created = await call('create_event', {
      calendarId: berlin,
      summary: 'Late review',
      start: { dateTime: '2026-12-07T23:00:00+01:00' },
      end: { dateTime: '2026-12-07T23:30:00+01:00' },
    });
    expect(created.result.isError, created.text).toBeFalsy();
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
  });

  it('every availability answer is in the calendar’s zone, to the second', async () => {
    const range = { calendarIds: [berlin], timeMin: '2026-12-07T08:00:00Z', timeMax: '2026-12-08T08:00:00Z' };
    const answers = [
      await call('find_free_time', range),
      await call('find_free_slots', range),
      await call('get_availability', range),
      await call('check_availability', { ...range, timeMin: '2026-12-07T22:00:00Z' }),
    ];
    for (const { result, text, out } of answers) {
      expect(result.isError, text).toBeFalsy();
      expect(out.timeZone).toBe('Europe/Berlin');
      const instants = instantsIn(out);
      expect(instants.length).toBeGreaterThan(0);
      for (const instant of instants) {
        expect(instant).toMatch(BERLIN);
      }
    }
    expect(answers[3]?.out).toMatchObject({
      available: false,
      conflicts: [
        { calendarId: berlin, start: '2026-12-07T23:00:00+01:00', end: '2026-12-07T23:30:00+01:00' },
      ],
    });
  });

  it('book_slot answers in the calendar’s zone without milliseconds, also on replay and in list_bookings', async () => {
    const args = {
      calendarId: newYork,
      start: '2026-12-08T15:00:00Z',
      end: '2026-12-08T15:30:00Z',
      summary: 'Intro call',
      idempotencyKey: 'intro-1',
    };
    const first = await call('book_slot', args);
    expect(first.result.isError, first.text).toBeFalsy();
    expect(first.out).toMatchObject({ start: '2026-12-08T10:00:00-05:00', end: '2026-12-08T10:30:00-05:00' });
    const again = await call('book_slot', args);
    expect(again.out).toMatchObject({
      replayed: true,
      start: '2026-12-08T10:00:00-05:00',
      end: '2026-12-08T10:30:00-05:00',
    });
    const own = await call('list_bookings', { calendarIds: [newYork] });
    expect(own.out.bookings).toEqual([
      expect.objectContaining({ start: '2026-12-08T10:00:00-05:00', end: '2026-12-08T10:30:00-05:00' }),
    ]);
    // Calendars in two zones: the key's zone (its default calendar, Berlin office).
    const merged = await call('list_bookings', {});
    expect(merged.out.bookings).toEqual([
      expect.objectContaining({ start: '2026-12-08T16:00:00+01:00', end: '2026-12-08T16:30:00+01:00' }),
    ]);
  });

  it('a merged answer over calendars in several zones is in the key’s zone, unless timeZone says otherwise', async () => {
    const range = { timeMin: '2026-12-08T00:00:00Z', timeMax: '2026-12-09T00:00:00Z' };
    const merged = await call('get_availability', { ...range, calendarIds: [berlin, newYork] });
    expect(merged.out.timeZone).toBe('Europe/Berlin');
    for (const instant of instantsIn(merged.out)) {
      expect(instant).toMatch(BERLIN);
    }
    const asked = await call('get_availability', {
      ...range,
      calendarIds: [berlin, newYork],
      timeZone: 'America/New_York',
    });
    expect(asked.out.timeZone).toBe('America/New_York');
    for (const instant of instantsIn(asked.out)) {
      expect(instant).toMatch(NEW_YORK);
    }
    expect(asked.out.busy).toEqual([
      { start: '2026-12-08T10:00:00-05:00', end: '2026-12-08T10:30:00-05:00', sourceCount: 0 },
    ]);
    const rrule = await call('expand_rrule', {
      rrule: 'FREQ=DAILY;COUNT=2',
      dtstart: '2026-12-01T09:00:00',
      timeZone: 'Europe/Berlin',
    });
    expect(rrule.out.instances).toEqual([
      { start: '2026-12-01T09:00:00+01:00', end: '2026-12-01T10:00:00+01:00' },
      { start: '2026-12-02T09:00:00+01:00', end: '2026-12-02T10:00:00+01:00' },
    ]);
  });

  it('plain dates and local date-times are read in the zone that applies; a date as timeMax is the end of that day', async () => {
    const day = await call('find_free_time', {
      calendarIds: [berlin],
      timeMin: '2026-12-07',
      timeMax: '2026-12-07',
    });
    expect(day.result.isError, day.text).toBeFalsy();
    expect(day.out).toMatchObject({
      timeMin: '2026-12-07T00:00:00+01:00',
      timeMax: '2026-12-08T00:00:00+01:00',
    });
    expect(day.out.busy).toEqual([
      { calendarId: berlin, start: '2026-12-07T23:00:00+01:00', end: '2026-12-07T23:30:00+01:00' },
    ]);
    const local = await call('check_availability', {
      calendarIds: [berlin],
      timeMin: '2026-12-07T23:00',
      timeMax: '2026-12-07T23:15:00',
    });
    expect(local.out).toMatchObject({ available: false, timeZone: 'Europe/Berlin' });
    // The same wall-clock times in New York are six hours later: free.
    const elsewhere = await call('check_availability', {
      calendarIds: [berlin],
      timeMin: '2026-12-07T23:00:00',
      timeMax: '2026-12-07T23:15:00',
      timeZone: 'America/New_York',
    });
    expect(elsewhere.out).toEqual({ available: true, timeZone: 'America/New_York' });
    const listed = await call('list_events', {
      calendarId: berlin,
      timeMin: '2026-12-07',
      timeMax: '2026-12-07',
    });
    expect((listed.out.events as { summary: string }[]).map((e) => e.summary)).toEqual(['Late review']);
    const nextDay = await call('list_events', {
      calendarId: berlin,
      timeMin: '2026-12-08',
      timeMax: '2026-12-08',
    });
    expect(nextDay.out.events).toEqual([]);
    const bad = await call('find_free_time', { timeMin: 'next tuesday', timeMax: '2026-12-08' });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toMatch(/'timeMin': must be RFC 3339 .* a local date-time .* or a date/);
  });

  it('old spellings still work for one release, unadvertised, with a deprecation note', async () => {
    const listed = await client.listTools();
    for (const tool of listed.tools) {
      const properties = Object.keys(tool.inputSchema.properties ?? {});
      for (const old of ['timezone', 'minFreeSlotMinutes']) {
        expect(properties, tool.name).not.toContain(old);
      }
      if (properties.includes('timeMin')) {
        expect(properties, tool.name).not.toContain('start');
      }
    }
    const current = await call('get_availability', {
      calendarIds: [berlin],
      timeMin: '2026-12-07T00:00:00+01:00',
      timeMax: '2026-12-08T00:00:00+01:00',
      minDurationMinutes: 60,
    });
    const old = await call('get_availability', {
      calendarIds: [berlin],
      start: '2026-12-07T00:00:00+01:00',
      end: '2026-12-08T00:00:00+01:00',
      minFreeSlotMinutes: 60,
    });
    expect(old.result.isError, old.text).toBeFalsy();
    const { deprecated, ...rest } = old.out;
    expect(rest).toEqual(current.out);
    expect(deprecated).toEqual([
      'deprecated: use timeMin instead of start.',
      'deprecated: use timeMax instead of end.',
      'deprecated: use minDurationMinutes instead of minFreeSlotMinutes.',
    ]);
    const content = old.result.content as { type: string; text: string }[];
    expect(content[1]?.text).toBe(deprecated?.join(' '));

    const single = await call('check_availability', {
      calendarId: berlin,
      start: { dateTime: '2026-12-07T23:00:00', timeZone: 'Europe/Berlin' },
      end: '2026-12-07T23:15:00+01:00',
    });
    expect(single.out).toMatchObject({ available: false });
    expect(single.out.deprecated).toEqual([
      'deprecated: use timeMin instead of start.',
      'deprecated: use timeMax instead of end.',
      'deprecated: use calendarIds instead of calendarId.',
      "deprecated: pass timeMin as a string, e.g. '2026-12-07T23:00:00+01:00'.",
    ]);
    const rrule = await call('expand_rrule', {
      rrule: 'FREQ=DAILY;COUNT=1',
      dtstart: '2026-12-01T09:00:00',
      timezone: 'Europe/Berlin',
    });
    expect(rrule.out).toMatchObject({
      instances: [{ start: '2026-12-01T09:00:00+01:00' }],
      deprecated: ['deprecated: use timeZone instead of timezone.'],
    });
    const both = await call('find_free_time', {
      start: '2026-12-07T00:00:00Z',
      timeMin: '2026-12-07T00:00:00Z',
      timeMax: '2026-12-08T00:00:00Z',
    });
    expect(both.result.isError).toBe(true);
    expect(both.text).toBe('Pass timeMin only: start is its deprecated spelling, and both were given.');
    // book_slot and create_event take an event's own start and end: not aliases there.
    const unknown = await call('book_slot', { calendarId: berlin, timeMin: '2026-12-07T10:00:00Z' });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toMatch(/timeMin/);
  });

  it('changing an event without calendarId finds it among the writable calendars; a not-found names the calendar', async () => {
    const created = await call('create_event', {
      calendarId: newYork,
      summary: 'Standup',
      start: { dateTime: '2026-12-09T09:00:00', timeZone: 'America/New_York' },
      end: { dateTime: '2026-12-09T09:15:00', timeZone: 'America/New_York' },
    });
    const eventId = (created.out.event as { id: string }).id;
    const moved = await call('update_event', { eventId, summary: 'Daily standup' });
    expect(moved.result.isError, moved.text).toBeFalsy();
    expect(moved.out.calendarId).toBe(newYork);
    const wrong = await call('delete_event', { calendarId: berlin, eventId });
    expect(wrong.result.isError).toBe(true);
    expect(wrong.text).toMatch(
      /^Event not found in calendar 'Berlin office' \(cal_\w+\): .*Leave calendarId out to search every writable calendar\.$/,
    );
    const deleted = await call('delete_event', { eventId });
    expect(deleted.result.isError, deleted.text).toBeFalsy();
    expect(deleted.out).toMatchObject({ calendarId: newYork, deleted: true });
    const again = await call('delete_event', { eventId });
    expect(again.out).toMatchObject({ calendarId: newYork, deleted: false, alreadyDeleted: true });
    const missing = await call('delete_event', { eventId: 'nosuchevent1' });
    expect(missing.text).toMatch(
      /^Event 'nosuchevent1' was not found in any calendar this key can write: searched 'Berlin office' \(cal_\w+\), 'New York office' \(cal_\w+\)\.$/,
    );
  });
});
