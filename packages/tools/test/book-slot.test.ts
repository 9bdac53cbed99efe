import { describe, expect, it } from 'vitest';
import type { CalendarAccess } from '../src/access.ts';
import { WorkBudget } from '../src/budget.ts';
import type { ToolContext } from '../src/catalogue.ts';
import { bookSlot } from '../src/tools/availability/book-slot.ts';
import { blocks, bookingEventId, requestHash } from '../src/tools/availability/book-slot-checks.ts';

const request = {
  calendarId: 'cal_1',
  start: Date.parse('2026-12-01T09:00:00Z'),
  end: Date.parse('2026-12-01T09:30:00Z'),
  summary: 'Intro',
  description: undefined,
  attendees: ['Ann@example.com', 'bob@example.com'],
};

describe('book_slot building blocks', () => {
  it('hashes the normalised request: attendee order and case do not matter, other fields do', () => {
    const hash = requestHash(request);
    expect(requestHash({ ...request, attendees: ['bob@example.com', 'ann@example.com '] })).toBe(hash);
    expect(requestHash({ ...request, description: '' })).toBe(hash);
    expect(requestHash({ ...request, summary: 'Other' })).not.toBe(hash);
    expect(requestHash({ ...request, end: request.end + 60_000 })).not.toBe(hash);
    expect(requestHash({ ...request, calendarId: 'cal_2' })).not.toBe(hash);
  });

  it('derives base32hex event ids: stable for a key, distinct per lease, generation and slot', () => {
    const slot = { calendarId: 'cal_1', start: request.start, end: request.end };
    const id = bookingEventId('key_1', slot, { idempotencyKey: 'k' }, 0);
    expect(id).toMatch(/^[0-9a-v]{20,1024}$/);
    expect(bookingEventId('key_1', slot, { idempotencyKey: 'k' }, 0)).toBe(id);
    expect(bookingEventId('key_1', slot, { idempotencyKey: 'k' }, 1)).not.toBe(id);
    expect(bookingEventId('key_2', slot, { idempotencyKey: 'k' }, 0)).not.toBe(id);
    expect(bookingEventId('key_1', { ...slot, end: slot.end + 1 }, { idempotencyKey: 'k' }, 0)).not.toBe(id);
    expect(bookingEventId('key_1', slot, { leaseToken: 'a' }, 0)).not.toBe(
      bookingEventId('key_1', slot, { leaseToken: 'b' }, 0),
    );
  });

  it('counts only opaque, live, not-declined events as blocking', () => {
    const base = { id: 'e1', status: 'confirmed' as const, start: {}, end: {} };
    expect(blocks(base)).toBe(true);
    expect(blocks({ ...base, status: 'cancelled' })).toBe(false);
    expect(blocks({ ...base, transparency: 'transparent' })).toBe(false);
    expect(
      blocks({ ...base, attendees: [{ email: 'a@x.io', self: true, responseStatus: 'declined' }] }),
    ).toBe(false);
    expect(blocks({ ...base, attendees: [{ email: 'b@x.io', responseStatus: 'declined' }] })).toBe(true);
  });

  it('has the annotations of the one tool that is neither read-only nor idempotent', () => {
    expect(bookSlot.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(bookSlot.access).toBe('write');
    expect(bookSlot.input.safeParse(bookSlot.example).success).toBe(true);
  });

  it('answers unavailable when the gateway supplies no booking services', async () => {
    const context = {
      access: {} as CalendarAccess,
      requestId: 'r',
      signal: new AbortController().signal,
      now: () => new Date(),
      progress: async () => {},
      budget: new WorkBudget(),
      directory: undefined,
      booking: undefined,
    } satisfies ToolContext;
    const args = bookSlot.input.parse({
      calendarId: 'primary',
      start: '2026-12-01T09:00:00Z',
      end: '2026-12-01T09:30:00Z',
      summary: 'x',
    });
    await expect(bookSlot.run(args, context)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/Booking is not available on this gateway/),
    });
  });
});
