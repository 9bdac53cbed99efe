import { CalgateError } from '@calgate/core';
import type { CalendarEvent, CalendarProvider, CalendarRef, FreeBusyResult } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, callTool, catalogue, type KeyCalendar } from '../src/index.ts';
import { keyCalendar } from './key-calendar.ts';

// A provider below the seam: the real ones are exercised end to end in the gateway tests.
function fakeProvider(options: { failFreeBusy?: boolean } = {}) {
  const freeBusyCalls: string[][] = [];
  const event = (id: string): CalendarEvent => ({
    id,
    status: 'confirmed',
    summary: `Event ${id}`,
    start: { dateTime: '2026-12-01T09:00:00Z' },
    end: { dateTime: '2026-12-01T10:00:00Z' },
  });
  const provider = {
    kind: 'local',
    async getEvent(_calendar: CalendarRef, id: string) {
      if (id !== 'e1') {
        throw new CalgateError('not_found', `Event '${id}' not found upstream in calendar X.`);
      }
      return event(id);
    },
    async freeBusy(calendars: readonly CalendarRef[]): Promise<FreeBusyResult[]> {
      freeBusyCalls.push(calendars.map((c) => c.id));
      if (options.failFreeBusy) {
        throw new CalgateError('upstream_unavailable', 'Google is unavailable.');
      }
      return calendars.map((c) => ({
        calendarId: c.id,
        busy: [{ start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z' }],
      }));
    },
  } as unknown as CalendarProvider;
  return { provider, freeBusyCalls };
}

function calendar(id: string, connectionId: string, overrides: Partial<KeyCalendar> = {}): KeyCalendar {
  return keyCalendar({ id, connectionId, timeZone: 'Asia/Kathmandu', ...overrides });
}

async function call(access: CalendarAccess, name: string, args: unknown, now = new Date()) {
  const entry = catalogue().get(name);
  if (entry === undefined) {
    throw new Error(`no tool ${name}`);
  }
  return callTool(
    { catalogue: catalogue(), access, requestId: 'req_test', version: 'test', now: () => now },
    entry,
    args,
    new AbortController().signal,
  );
}

const text = (result: { content: unknown }) => (result.content as { text: string }[])[0]?.text ?? '';

describe('find_free_time', () => {
  it('asks each connection once for all of its calendars', async () => {
    const a = fakeProvider();
    const b = fakeProvider({ failFreeBusy: true });
    const access = new CalendarAccess(
      {
        tenantId: 'tnt_1',
        keyId: 'key_1',
        calendars: [calendar('cal_a1', 'con_a'), calendar('cal_b1', 'con_b'), calendar('cal_a2', 'con_a')],
      },
      (c) => (c.connectionId === 'con_a' ? a.provider : b.provider),
    );
    const result = await call(access, 'find_free_time', {
      timeMin: '2026-12-01T08:00:00Z',
      timeMax: '2026-12-01T12:00:00Z',
    });
    expect(result.isError).toBeFalsy();
    expect(a.freeBusyCalls).toEqual([['cal_a1', 'cal_a2']]);
    expect(b.freeBusyCalls).toEqual([['cal_b1']]);
    const out = result.structuredContent as Record<string, unknown>;
    expect(out.free).toEqual([]);
    expect(out.unknown).toEqual([
      { start: '2026-12-01T13:45:00+05:45', end: '2026-12-01T14:45:00+05:45' },
      { start: '2026-12-01T15:45:00+05:45', end: '2026-12-01T17:45:00+05:45' },
    ]);
    expect(out.unknownCalendars).toEqual([
      { calendarId: 'cal_b1', code: 'upstream_unavailable', message: 'Google is unavailable.' },
    ]);
  });

  it('shows times in the requested zone and refuses an unknown one', async () => {
    const a = fakeProvider();
    const access = new CalendarAccess(
      { tenantId: 'tnt_1', keyId: 'key_1', calendars: [calendar('cal_a1', 'con_a')] },
      () => a.provider,
    );
    const ok = await call(access, 'find_free_time', {
      timeMin: '2026-12-01T08:00:00Z',
      timeMax: '2026-12-01T12:00:00Z',
      timeZone: 'Asia/Kathmandu',
      minDurationMinutes: 90,
    });
    expect((ok.structuredContent as { free: unknown }).free).toEqual([
      { start: '2026-12-01T15:45:00+05:45', end: '2026-12-01T17:45:00+05:45' },
    ]);
    const bad = await call(access, 'find_free_time', {
      timeMin: '2026-12-01T08:00:00Z',
      timeMax: '2026-12-01T12:00:00Z',
      timeZone: 'Mars/Olympus',
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Unknown time zone 'Mars\/Olympus'/);
  });
});

describe('fetch', () => {
  it('answers a forbidden calendar, a missing event and a malformed id identically', async () => {
    const a = fakeProvider();
    const access = new CalendarAccess(
      {
        tenantId: 'tnt_1',
        keyId: 'key_1',
        calendars: [calendar('cal_a1', 'con_a'), calendar('cal_no', 'con_a', { canRead: false })],
      },
      () => a.provider,
    );
    const found = await call(access, 'fetch', { id: 'cal_a1:e1' });
    // Written in the calendar's zone, as every answer with instants, and saying so.
    expect(JSON.parse(text(found))).toMatchObject({
      id: 'cal_a1:e1',
      title: 'Event e1 (2026-12-01T14:45:00+05:45)',
      metadata: { start: '2026-12-01T14:45:00+05:45', timeZone: 'Asia/Kathmandu' },
    });
    const answers = await Promise.all(
      ['cal_no:e1', 'cal_a1:e2', 'cal_zz:e1', 'garbage'].map(async (id) => {
        const result = await call(access, 'fetch', { id });
        return { isError: result.isError, text: text(result).replace(id, 'ID') };
      }),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual({
      isError: true,
      text: "No event with id 'ID'. Use ids that search returned.",
    });
  });
});

describe('get_current_time', () => {
  const access = new CalendarAccess(
    {
      tenantId: 'tnt_1',
      keyId: 'key_1',
      calendars: [calendar('cal_a1', 'con_a', { timeZone: 'America/New_York' })],
    },
    () => fakeProvider().provider,
  );
  const now = new Date('2026-03-08T06:59:59.500Z');

  it('reads the zone, the UTC offset and the weekday', async () => {
    const result = await call(access, 'get_current_time', { timeZone: 'Asia/Kathmandu' }, now);
    expect(result.structuredContent).toEqual({
      dateTime: '2026-03-08T12:44:59+05:45',
      utc: '2026-03-08T06:59:59Z',
      timeZone: 'Asia/Kathmandu',
      utcOffset: '+05:45',
      weekday: 'Sunday',
    });
  });

  it("defaults to the key's first calendar's zone, across a DST change", async () => {
    const before = await call(access, 'get_current_time', {}, now);
    expect(before.structuredContent).toMatchObject({
      dateTime: '2026-03-08T01:59:59-05:00',
      utcOffset: '-05:00',
    });
    const after = await call(
      access,
      'get_current_time',
      { calendarId: 'cal_a1' },
      new Date('2026-03-08T07:00:00Z'),
    );
    expect(after.structuredContent).toMatchObject({
      dateTime: '2026-03-08T03:00:00-04:00',
      utcOffset: '-04:00',
    });
  });

  it('refuses an unknown zone and both arguments at once', async () => {
    const bad = await call(access, 'get_current_time', { timeZone: 'Europe/Atlantis' }, now);
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Unknown time zone 'Europe\/Atlantis'.*IANA/);
    const both = await call(access, 'get_current_time', { timeZone: 'UTC', calendarId: 'cal_a1' }, now);
    expect(text(both)).toMatch(/not both/);
  });
});
