import type { BookingRecord } from '@calgate/store';
import { drivenWatch } from '@calgate/testkit';
import { describe, expect, it } from 'vitest';
import { ConfirmedBookingsCache } from '../src/booking-cache.ts';

const watch = drivenWatch;

const row = (id: string, calendarId: string): BookingRecord =>
  ({
    id,
    calendarId,
    eventId: `e-${id}`,
    start: new Date(0),
    end: new Date(1),
    status: 'confirmed',
  }) as BookingRecord;

const START = new Date('2026-12-01T00:00:00Z');
const END = new Date('2026-12-02T00:00:00Z');

/** A cache hearing a driven source, and a read that counts how often it is asked (`made` gives its rows). */
function counted(made: (n: number) => BookingRecord[] = () => []) {
  const source = watch();
  const cache = new ConfirmedBookingsCache(source);
  let reads = 0;
  const read = async () => {
    reads++;
    return made(reads);
  };
  return { source, cache, read, reads: () => reads, count: () => reads++ };
}

describe('ConfirmedBookingsCache', () => {
  it('reads a window once while nothing about its calendars is announced', async () => {
    const { source, cache, read, reads } = counted((n) => [row(`b${n}`, 'cal-a')]);
    const first = await cache.confirmedIn('t1', ['cal-a', 'cal-b'], START, END, read);
    const second = await cache.confirmedIn('t1', ['cal-a', 'cal-b'], START, END, read);
    expect(reads()).toBe(1);
    expect(second.map((r) => r.id)).toEqual(first.map((r) => r.id));
    // Another tenant, window or set of calendars is read on its own.
    await cache.confirmedIn('t2', ['cal-a', 'cal-b'], START, END, read);
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    await cache.confirmedIn('t1', ['cal-a', 'cal-b'], START, new Date('2026-12-03T00:00:00Z'), read);
    expect(reads()).toBe(4);
    // An announcement of another calendar changes nothing; of one of its calendars, it is read again.
    source.announce('cal-z');
    await cache.confirmedIn('t1', ['cal-a', 'cal-b'], START, END, read);
    expect(reads()).toBe(4);
    source.announce('cal-b');
    const after = await cache.confirmedIn('t1', ['cal-a', 'cal-b'], START, END, read);
    expect(reads()).toBe(5);
    expect(after.map((r) => r.id)).toEqual(['b5']);
  });

  it('keeps nothing while announcements may be missed, nor a read an announcement overtook', async () => {
    const { source, cache, read, reads, count } = counted();
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    source.lose();
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    expect(reads()).toBe(3);
    source.live = true;
    // A booking committed while the read was under way: its answer may be older than the change.
    const overtaken = async () => {
      count();
      source.announce('cal-a');
      return [];
    };
    await cache.confirmedIn('t1', ['cal-a'], START, END, overtaken);
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    expect(reads()).toBe(5);
  });

  it("forgets on this process's own writes (changed, reset) at once", async () => {
    const { cache, read, reads } = counted();
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    cache.changed('cal-a');
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    cache.reset();
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    await cache.confirmedIn('t1', ['cal-a'], START, END, read);
    expect(reads()).toBe(3);
  });
});
