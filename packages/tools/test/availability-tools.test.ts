import { CalgateError } from '@calgate/core';
import { MemorySlotLock } from '@calgate/locks';
import type { CalendarProvider, CalendarRef, EventPage, FreeBusyResult } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { type BookingServices, CalendarAccess, callTool, catalogue, type KeyCalendar } from '../src/index.ts';
import { keyCalendar } from './key-calendar.ts';

// A provider below the seam: the real ones are exercised end to end in the gateway tests.
function fakeProvider(
  busy: Record<string, { start: string; end: string }[] | 'fail'>,
  listing: 'events' | 'fail',
) {
  const calls: { ids: string[]; timeMin: string; timeMax: string }[] = [];
  const provider = {
    kind: 'local',
    // The busy blocks as the events behind them, `<calendar>_<n>` titled `Busy <n>`.
    async listEvents(calendar: CalendarRef): Promise<EventPage> {
      if (listing === 'fail') {
        throw new CalgateError('upstream_unavailable', 'Google is unavailable.');
      }
      const answer = busy[calendar.id];
      const items = (answer === 'fail' || answer === undefined ? [] : answer).map((block, n) => ({
        id: `${calendar.id}_${n}`,
        status: 'confirmed' as const,
        summary: `Busy ${n}`,
        start: { dateTime: block.start },
        end: { dateTime: block.end },
      }));
      return { items };
    },
    async freeBusy(
      calendars: readonly CalendarRef[],
      timeMin: string,
      timeMax: string,
    ): Promise<FreeBusyResult[]> {
      calls.push({ ids: calendars.map((c) => c.id), timeMin, timeMax });
      return calendars.map((c) => {
        const answer = busy[c.id] ?? [];
        return answer === 'fail'
          ? { calendarId: c.id, error: { code: 'upstream_unavailable', message: 'Google is unavailable.' } }
          : { calendarId: c.id, busy: answer };
      });
    },
  } as unknown as CalendarProvider;
  return { provider, calls };
}

function calendar(id: string, overrides: Partial<KeyCalendar> = {}): KeyCalendar {
  return keyCalendar({ id, primary: id === 'cal_a', canWrite: true, ...overrides });
}

function setup(
  busy: Record<string, { start: string; end: string }[] | 'fail'>,
  lock = new MemorySlotLock(),
  listing: 'events' | 'fail' = 'events',
) {
  const { provider, calls } = fakeProvider(busy, listing);
  const access = new CalendarAccess(
    {
      tenantId: 'tnt_1',
      keyId: 'key_1',
      calendars: [calendar('cal_a'), calendar('cal_b'), calendar('cal_c', { canRead: false })],
    },
    () => provider,
  );
  // No confirmed bookings: these tests are about free/busy and holds.
  const ledger = { confirmedIn: async () => [] } as unknown as BookingServices['ledger'];
  const booking = { lock, ledger, lockTtlMs: 30_000 } as BookingServices;
  const call = async (name: string, args: unknown) => {
    const entry = catalogue().get(name);
    if (entry === undefined) {
      throw new Error(`no tool ${name}`);
    }
    return callTool(
      { catalogue: catalogue(), access, requestId: 'req_1', version: 't', booking },
      entry,
      args,
      new AbortController().signal,
    );
  };
  return { call, calls, lock };
}

const text = (result: { content: unknown }) => (result.content as { text: string }[])[0]?.text ?? '';
const ms = (iso: string) => Date.parse(iso);

describe('find_free_slots', () => {
  it('validates its input with messages that say what is right', async () => {
    const { call } = setup({});
    const bad = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T09:00',
      timeMax: 'x',
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/RFC 3339/);
    const backwards = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-02T00:00:00Z',
      timeMax: '2026-12-01T00:00:00Z',
    });
    expect(text(backwards)).toMatch(/timeMax must be later than timeMin/);
    const tooLong = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-01-01T00:00:00Z',
      timeMax: '2026-12-01T00:00:00Z',
    });
    expect(text(tooLong)).toMatch(/92 days/);
    const hours = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-02T00:00:00Z',
      workingHours: { days: ['mon'], start: '9am', end: '17:00', timeZone: 'UTC' },
    });
    expect(text(hours)).toMatch(/workingHours.start '9am' must be HH:MM/);
    const zone = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-02T00:00:00Z',
      workingHours: { days: ['mon'], start: '09:00', end: '17:00', timeZone: 'Mars/Olympus' },
    });
    expect(text(zone)).toMatch(/Unknown time zone 'Mars\/Olympus'/);
    const denied = await call('find_free_slots', {
      calendarIds: ['cal_c'],
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-02T00:00:00Z',
    });
    expect(text(denied)).toMatch(/was not found/);
  });

  it('pads busy time with the buffer, also for busy time just outside the window', async () => {
    const { call, calls } = setup({
      cal_a: [
        { start: '2026-12-01T08:50:00Z', end: '2026-12-01T09:00:00Z' },
        { start: '2026-12-01T12:00:00Z', end: '2026-12-01T13:00:00Z' },
      ],
    });
    const result = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T09:00:00Z',
      timeMax: '2026-12-01T17:00:00Z',
      bufferMinutes: 15,
    });
    expect(result.isError).toBeFalsy();
    expect(calls[0]).toMatchObject({
      timeMin: '2026-12-01T08:45:00.000Z',
      timeMax: '2026-12-01T17:15:00.000Z',
    });
    expect(result.structuredContent).toEqual({
      timeZone: 'UTC',
      slots: [
        { start: '2026-12-01T09:15:00Z', end: '2026-12-01T11:45:00Z', durationMinutes: 150 },
        { start: '2026-12-01T13:15:00Z', end: '2026-12-01T17:00:00Z', durationMinutes: 225 },
      ],
    });
  });

  it('treats an active booking hold as busy and answers in the working-hours zone', async () => {
    const { call, lock } = setup({});
    await lock.acquire(
      'cal_a',
      { start: ms('2026-12-01T10:00:00Z'), end: ms('2026-12-01T11:00:00Z') },
      60_000,
    );
    const result = await call('find_free_slots', {
      calendarIds: ['primary'],
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-02T00:00:00Z',
      minDurationMinutes: 60,
      workingHours: { days: ['tue'], start: '09:00', end: '17:00', timeZone: 'Asia/Kathmandu' },
    });
    // The hold is 15:45-16:45 in Kathmandu; 16:45-17:00 is shorter than an hour.
    expect(result.structuredContent).toEqual({
      timeZone: 'Asia/Kathmandu',
      slots: [{ start: '2026-12-01T09:00:00+05:45', end: '2026-12-01T15:45:00+05:45', durationMinutes: 405 }],
    });
  });

  it('fails, never answering free, when the free/busy cannot be read', async () => {
    const { call } = setup({ cal_a: 'fail' });
    const result = await call('find_free_slots', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T00:00:00Z',
      timeMax: '2026-12-02T00:00:00Z',
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Free\/busy of calendar 'cal_a' could not be read: Google is unavailable/);
  });
});

describe('check_availability', () => {
  it('is available when nothing overlaps; busy events and holds are conflicts', async () => {
    const { call, lock } = setup({ cal_a: [{ start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z' }] });
    const free = await call('check_availability', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T10:00:00Z',
      timeMax: '2026-12-01T10:30:00Z',
    });
    expect(free.structuredContent).toEqual({ available: true, timeZone: 'UTC' });
    const lease = await lock.acquire(
      'cal_a',
      { start: ms('2026-12-01T10:15:00Z'), end: ms('2026-12-01T10:45:00Z') },
      60_000,
    );
    const held = await call('check_availability', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T09:30:00+00:00',
      timeMax: '2026-12-01T11:30:00+01:00',
    });
    expect(held.structuredContent).toEqual({
      available: false,
      timeZone: 'UTC',
      conflicts: [
        {
          start: '2026-12-01T09:30:00Z',
          end: '2026-12-01T10:00:00Z',
          calendarId: 'cal_a',
          kind: 'event',
          eventId: 'cal_a_0',
          summary: 'Busy 0',
        },
        { start: '2026-12-01T10:15:00Z', end: '2026-12-01T10:30:00Z', calendarId: 'cal_a', kind: 'hold' },
      ],
    });
    if (lease !== null) {
      await lock.release(lease);
    }
    const released = await call('check_availability', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T10:00:00Z',
      timeMax: '2026-12-01T10:30:00Z',
    });
    expect(released.structuredContent).toEqual({ available: true, timeZone: 'UTC' });
  });

  it('says just "busy" when the events behind busy time cannot be listed', async () => {
    const { call } = setup(
      { cal_a: [{ start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z' }] },
      new MemorySlotLock(),
      'fail',
    );
    const result = await call('check_availability', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T09:30:00Z',
      timeMax: '2026-12-01T10:30:00Z',
    });
    expect(result.structuredContent).toEqual({
      available: false,
      timeZone: 'UTC',
      conflicts: [
        { start: '2026-12-01T09:30:00Z', end: '2026-12-01T10:00:00Z', calendarId: 'cal_a', kind: 'busy' },
      ],
    });
  });

  it('fails closed when the holds cannot be read', async () => {
    const broken = new MemorySlotLock();
    broken.held = async () => {
      throw new CalgateError('unavailable', 'Redis is unreachable.');
    };
    const { call } = setup({}, broken);
    const result = await call('check_availability', {
      calendarIds: ['cal_a'],
      timeMin: '2026-12-01T10:00:00Z',
      timeMax: '2026-12-01T10:30:00Z',
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Booking holds on calendar 'cal_a' could not be read/);
  });
});

describe('get_availability', () => {
  const busy = {
    cal_a: [{ start: '2026-12-01T09:00:00Z', end: '2026-12-01T11:00:00Z' }],
    cal_b: [{ start: '2026-12-01T10:00:00Z', end: '2026-12-01T12:00:00Z' }],
  };
  const window = { timeMin: '2026-12-01T08:00:00Z', timeMax: '2026-12-01T14:00:00Z' };

  it('opaque merges blocks and never says how many calendars are busy', async () => {
    const { call } = setup(busy);
    const result = await call('get_availability', { ...window, calendarIds: ['cal_a', 'cal_b'] });
    expect(result.structuredContent).toEqual({
      timeZone: 'UTC',
      busy: [{ start: '2026-12-01T09:00:00Z', end: '2026-12-01T12:00:00Z', sourceCount: 0 }],
      free: [
        { start: '2026-12-01T08:00:00Z', end: '2026-12-01T09:00:00Z', durationMinutes: 60 },
        { start: '2026-12-01T12:00:00Z', end: '2026-12-01T14:00:00Z', durationMinutes: 120 },
      ],
      calendarsMerged: 2,
      privacy: 'opaque',
    });
  });

  it('full counts the calendars busy in each block; holds count for their calendar', async () => {
    const { call, lock } = setup(busy);
    await lock.acquire(
      'cal_b',
      { start: ms('2026-12-01T12:00:00Z'), end: ms('2026-12-01T12:30:00Z') },
      60_000,
    );
    const result = await call('get_availability', {
      ...window,
      calendarIds: ['cal_a', 'cal_b'],
      privacy: 'full',
      minDurationMinutes: 90,
    });
    const a0 = { calendarId: 'cal_a', kind: 'event', eventId: 'cal_a_0', summary: 'Busy 0' };
    const b0 = { calendarId: 'cal_b', kind: 'event', eventId: 'cal_b_0', summary: 'Busy 0' };
    expect(result.structuredContent).toEqual({
      timeZone: 'UTC',
      busy: [
        { start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z', sourceCount: 1, events: [a0] },
        { start: '2026-12-01T10:00:00Z', end: '2026-12-01T11:00:00Z', sourceCount: 2, events: [a0, b0] },
        {
          start: '2026-12-01T11:00:00Z',
          end: '2026-12-01T12:30:00Z',
          sourceCount: 1,
          events: [b0, { calendarId: 'cal_b', kind: 'hold' }],
        },
      ],
      free: [{ start: '2026-12-01T12:30:00Z', end: '2026-12-01T14:00:00Z', durationMinutes: 90 }],
      calendarsMerged: 2,
      privacy: 'full',
    });
  });

  it('defaults to every readable calendar; a failing calendar is reported and nothing is free', async () => {
    const { call } = setup({ ...busy, cal_b: 'fail' });
    const all = await call('get_availability', window);
    expect(all.structuredContent).toMatchObject({ calendarsMerged: 1, free: [] });
    const result = await call('get_availability', { ...window, calendarIds: ['cal_a', 'cal_b'] });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      busy: [{ start: '2026-12-01T09:00:00Z', end: '2026-12-01T11:00:00Z', sourceCount: 0 }],
      free: [],
      calendarsMerged: 1,
      unavailableCalendars: [{ calendarId: 'cal_b', code: 'upstream_unavailable' }],
    });
  });

  it('reports a calendar without a grant like a missing one', async () => {
    const { call } = setup(busy);
    const denied = await call('get_availability', { ...window, calendarIds: ['cal_c'] });
    const missing = await call('get_availability', { ...window, calendarIds: ['cal_zz'] });
    expect(denied.isError).toBe(true);
    expect(text(denied).replace('cal_c', 'X')).toBe(text(missing).replace('cal_zz', 'X'));
  });
});
