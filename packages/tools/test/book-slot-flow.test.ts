import { CalgateError } from '@calgate/core';
import { MemorySlotLock } from '@calgate/locks';
import type { CalendarEvent, CalendarProvider, EventInput, FreeBusyResult } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { CalendarAccess, type KeyCalendar } from '../src/access.ts';
import { WorkBudget } from '../src/budget.ts';
import type { BookingLedger, LedgerBooking, ToolContext } from '../src/catalogue.ts';
import { bookSlot } from '../src/tools/availability/book-slot.ts';
import { bookingEventId } from '../src/tools/availability/book-slot-checks.ts';

// The flow's decisions in isolation. The provider and ledger below stand in for the local
// provider and the Postgres ledger, which the gateway's end-to-end booking tests use for real.

const CAL: KeyCalendar = {
  id: 'cal_room',
  externalId: 'cal_room',
  summary: 'Room',
  timeZone: 'Europe/Berlin',
  primary: true,
  enabled: true,
  accessRole: 'owner',
  connectionId: 'con_local',
  provider: 'local',
  auth: 'none',
  accountEmail: 'local',
  connectionStatus: 'active',
  canRead: true,
  canWrite: true,
};

const ms = (event: CalendarEvent, side: 'start' | 'end') => Date.parse(event[side].dateTime ?? '');

class MemoryProvider {
  readonly kind = 'local' as const;
  readonly events = new Map<string, CalendarEvent>();
  failFreeBusy = false;
  failDelete = false;

  live(): CalendarEvent[] {
    return [...this.events.values()].filter((event) => event.status !== 'cancelled');
  }

  async insertEvent(_ref: unknown, input: EventInput): Promise<CalendarEvent> {
    const id = input.id ?? `e${this.events.size}xyz`;
    if (this.events.has(id)) {
      throw new CalgateError('already_exists', `Event ${id} exists.`);
    }
    const event: CalendarEvent = {
      id,
      status: 'confirmed',
      start: input.start,
      end: input.end,
      ...(input.summary === undefined ? {} : { summary: input.summary }),
    };
    this.events.set(id, event);
    return event;
  }

  async getEvent(_ref: unknown, id: string): Promise<CalendarEvent> {
    const event = this.events.get(id);
    if (event === undefined) {
      throw new CalgateError('not_found', `Event ${id} not found.`);
    }
    return event;
  }

  async deleteEvent(_ref: unknown, id: string): Promise<void> {
    if (this.failDelete) {
      throw new CalgateError('upstream_unavailable', 'Upstream is down.');
    }
    const event = await this.getEvent(_ref, id);
    event.status = 'cancelled';
  }

  async listEvents(_ref: unknown, query: { timeMin?: string; timeMax?: string }) {
    const [from, to] = [Date.parse(query.timeMin ?? ''), Date.parse(query.timeMax ?? '')];
    return { items: this.live().filter((e) => ms(e, 'start') < to && from < ms(e, 'end')) };
  }

  async freeBusy(refs: { id: string }[], timeMin: string, timeMax: string): Promise<FreeBusyResult[]> {
    const calendarId = refs[0]?.id ?? '';
    if (this.failFreeBusy) {
      return [{ calendarId, error: { code: 'upstream_unavailable', message: 'Google answered 503' } }];
    }
    const { items } = await this.listEvents(undefined, { timeMin, timeMax });
    return [
      {
        calendarId,
        busy: items.map((e) => ({
          start: new Date(ms(e, 'start')).toISOString(),
          end: new Date(ms(e, 'end')).toISOString(),
        })),
      },
    ];
  }
}

class MemoryLedger implements BookingLedger {
  readonly rows: LedgerBooking[] = [];
  failConfirm = false;

  async confirm(input: Parameters<BookingLedger['confirm']>[0]): Promise<LedgerBooking> {
    if (this.failConfirm) {
      throw new Error('connection to Postgres lost');
    }
    const [overlap] = await this.overlapping(input.calendarId, input.start, input.end);
    if (overlap !== undefined) {
      throw new CalgateError('conflict', 'overlap', {
        context: {
          bookingId: overlap.id,
          start: overlap.start.toISOString(),
          end: overlap.end.toISOString(),
        },
      });
    }
    const row = {
      id: `bkg_${this.rows.length}`,
      calendarId: input.calendarId,
      eventId: input.eventId,
      start: input.start,
      end: input.end,
      requestHash: input.requestHash ?? null,
      result: input.result,
      status: 'confirmed' as const,
      idempotencyKey: input.idempotencyKey ?? null,
    };
    this.rows.push(row);
    return row;
  }

  async overlapping(calendarId: string, start: Date, end: Date) {
    return this.confirmedIn([calendarId], start, end);
  }

  async confirmedIn(calendarIds: readonly string[], start: Date, end: Date) {
    return this.rows.filter(
      (r) => r.status === 'confirmed' && calendarIds.includes(r.calendarId) && r.start < end && start < r.end,
    );
  }

  async byEvent(calendarId: string, eventId: string) {
    return this.rows.filter(
      (r) => r.status === 'confirmed' && r.calendarId === calendarId && r.eventId === eventId,
    );
  }

  async byId(id: string) {
    return this.rows.find((r) => r.id === id) ?? null;
  }

  async list() {
    return this.rows;
  }

  async move(): Promise<boolean> {
    return false;
  }

  async byIdempotencyKey(key: string) {
    return this.rows.find((r) => r.idempotencyKey === key) ?? null;
  }

  async cancel(): Promise<boolean> {
    return false;
  }
}

function setup() {
  const provider = new MemoryProvider();
  const ledger = new MemoryLedger();
  const lock = new MemorySlotLock();
  const access = new CalendarAccess(
    { tenantId: 'tnt_1', keyId: 'key_1', calendars: [CAL] },
    () => provider as unknown as CalendarProvider,
  );
  const context: ToolContext = {
    access,
    requestId: 'req_1',
    signal: new AbortController().signal,
    now: () => new Date(),
    progress: async () => {},
    budget: new WorkBudget(),
    directory: undefined,
    booking: { lock, ledger, lockTtlMs: 30_000 },
  };
  const run = (args: Record<string, unknown>) =>
    bookSlot.run(bookSlot.input.parse({ calendarId: CAL.id, summary: 'Call', ...args }), context);
  return { provider, ledger, lock, run };
}

const SLOT = { start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z' };

describe('book_slot flow', () => {
  it('a retry adopts the event its idempotency key left behind before reaching the ledger', async () => {
    const { provider, ledger, run } = setup();
    const orphan = bookingEventId(
      'key_1',
      { calendarId: CAL.id, start: Date.parse(SLOT.start), end: Date.parse(SLOT.end) },
      { idempotencyKey: 'k1' },
      0,
    );
    await provider.insertEvent(undefined, {
      id: orphan,
      summary: 'Call',
      start: { dateTime: SLOT.start },
      end: { dateTime: SLOT.end },
    });
    const booked = await run({ ...SLOT, idempotencyKey: 'k1' });
    expect(booked).toMatchObject({ eventId: orphan, replayed: false });
    expect(provider.live()).toHaveLength(1);
    expect(ledger.rows).toHaveLength(1);
  });

  it('an event of someone else in the slot is still a conflict with an idempotency key', async () => {
    const { provider, run } = setup();
    await provider.insertEvent(undefined, {
      summary: 'Dentist',
      start: { dateTime: '2026-12-01T09:30:00Z' },
      end: { dateTime: '2026-12-01T10:30:00Z' },
    });
    await expect(run({ ...SLOT, idempotencyKey: 'k2' })).rejects.toThrow(
      "Not booked: the slot overlaps the event 'Dentist' from 2026-12-01T10:30:00+01:00 to 2026-12-01T11:30:00+01:00 on calendar cal_room.",
    );
  });

  it('unreadable free/busy refuses: unknown is never free', async () => {
    const { provider, ledger, run } = setup();
    provider.failFreeBusy = true;
    await expect(run(SLOT)).rejects.toMatchObject({ code: 'upstream_unavailable' });
    expect(provider.events.size).toBe(0);
    expect(ledger.rows).toHaveLength(0);
  });

  it('a failing ledger write rolls the event back and frees the range', async () => {
    const { provider, ledger, lock, run } = setup();
    ledger.failConfirm = true;
    await expect(run(SLOT)).rejects.toThrow('connection to Postgres lost');
    expect(provider.live()).toHaveLength(0);
    expect(await lock.held(CAL.id, { start: Date.parse(SLOT.start), end: Date.parse(SLOT.end) })).toEqual([]);
  });

  it('a rollback that cannot delete says which event is left over', async () => {
    const { provider, ledger, run } = setup();
    ledger.failConfirm = true;
    provider.failDelete = true;
    await expect(run(SLOT)).rejects.toThrow(/could not be removed .*delete it with delete_event/);
  });

  it('a range leased by another booking is refused as in progress', async () => {
    const { lock, run } = setup();
    await lock.acquire(
      CAL.id,
      { start: Date.parse('2026-12-01T09:59:00Z'), end: Date.parse('2026-12-01T11:00:00Z') },
      30_000,
    );
    await expect(run(SLOT)).rejects.toThrow(/another booking of an overlapping time .* is in progress/);
  });
});
