import { describe, expect, it } from 'vitest';
import {
  complement,
  findFreeSlots,
  intersect,
  mergeAvailability,
  mergeIntervals,
  workingIntervals,
} from '../src/index.ts';

const t = (iso: string) => Date.parse(iso);
const iv = (a: string, b: string) => ({ start: t(a), end: t(b) });
const iso = (ms: number) => new Date(ms).toISOString();
const show = (list: { start: number; end: number }[]) => list.map((i) => [iso(i.start), iso(i.end)]);

describe('interval algebra', () => {
  it('merges overlapping and touching intervals and drops empty ones', () => {
    const merged = mergeIntervals([
      iv('2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z'),
      iv('2026-12-01T09:00:00Z', '2026-12-01T10:00:00Z'),
      iv('2026-12-01T10:30:00Z', '2026-12-01T10:45:00Z'),
      iv('2026-12-01T12:00:00Z', '2026-12-01T12:00:00Z'),
      iv('2026-12-01T13:00:00Z', '2026-12-01T14:00:00Z'),
    ]);
    expect(show(merged)).toEqual([
      ['2026-12-01T09:00:00.000Z', '2026-12-01T11:00:00.000Z'],
      ['2026-12-01T13:00:00.000Z', '2026-12-01T14:00:00.000Z'],
    ]);
  });

  it('complements and intersects', () => {
    const window = iv('2026-12-01T08:00:00Z', '2026-12-01T18:00:00Z');
    const busy = [
      iv('2026-12-01T07:00:00Z', '2026-12-01T09:00:00Z'),
      iv('2026-12-01T12:00:00Z', '2026-12-01T13:00:00Z'),
    ];
    const free = complement(window, busy);
    expect(show(free)).toEqual([
      ['2026-12-01T09:00:00.000Z', '2026-12-01T12:00:00.000Z'],
      ['2026-12-01T13:00:00.000Z', '2026-12-01T18:00:00.000Z'],
    ]);
    expect(show(intersect(free, [iv('2026-12-01T11:00:00Z', '2026-12-01T14:00:00Z')]))).toEqual([
      ['2026-12-01T11:00:00.000Z', '2026-12-01T12:00:00.000Z'],
      ['2026-12-01T13:00:00.000Z', '2026-12-01T14:00:00.000Z'],
    ]);
  });
});

describe('findFreeSlots', () => {
  it('honours the minimum duration and the buffer around busy blocks', () => {
    const result = findFreeSlots(
      iv('2026-12-01T09:00:00Z', '2026-12-01T12:00:00Z'),
      [
        iv('2026-12-01T10:00:00Z', '2026-12-01T10:30:00Z'),
        iv('2026-12-01T11:20:00Z', '2026-12-01T11:40:00Z'),
      ],
      { minDurationMinutes: 30, bufferMinutes: 10 },
    );
    expect(result.ok && result.value.map((s) => [iso(s.start), iso(s.end), s.durationMinutes])).toEqual([
      ['2026-12-01T09:00:00.000Z', '2026-12-01T09:50:00.000Z', 50],
      ['2026-12-01T10:40:00.000Z', '2026-12-01T11:10:00.000Z', 30],
    ]);
  });

  it('keeps working hours on the local wall clock across the DST change', () => {
    // Europe/Berlin leaves summer time on 2026-10-25 (Sunday): 09:00 local is 07:00Z before, 08:00Z after.
    const result = findFreeSlots(iv('2026-10-23T00:00:00Z', '2026-10-27T00:00:00Z'), [], {
      minDurationMinutes: 60,
      workingHours: {
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        start: '09:00',
        end: '17:00',
        timeZone: 'Europe/Berlin',
      },
    });
    expect(result.ok && result.value.map((s) => [iso(s.start), iso(s.end)])).toEqual([
      ['2026-10-23T07:00:00.000Z', '2026-10-23T15:00:00.000Z'],
      ['2026-10-26T08:00:00.000Z', '2026-10-26T16:00:00.000Z'],
    ]);
  });

  it('reads weekdays in the working-hours zone (Monday in Auckland is still Sunday in UTC)', () => {
    const hours = workingIntervals(iv('2026-12-06T00:00:00Z', '2026-12-07T00:00:00Z'), {
      days: ['mon'],
      start: '09:00',
      end: '10:00',
      timeZone: 'Pacific/Auckland',
    });
    expect(hours.ok && show(hours.value)).toEqual([['2026-12-06T20:00:00.000Z', '2026-12-06T21:00:00.000Z']]);
  });

  it('rejects bad input with specific messages', () => {
    const window = iv('2026-12-01T09:00:00Z', '2026-12-01T12:00:00Z');
    const bad = (hours: { start: string; end: string; timeZone: string }) =>
      findFreeSlots(window, [], { minDurationMinutes: 30, workingHours: { days: ['mon'], ...hours } });
    const zone = bad({ start: '09:00', end: '17:00', timeZone: 'Mars/Base' });
    expect(!zone.ok && zone.error.message).toMatch(/not an IANA time zone/);
    const order = bad({ start: '17:00', end: '09:00', timeZone: 'UTC' });
    expect(!order.ok && order.error.message).toMatch(/later than workingHours.start/);
    const format = bad({ start: '9am', end: '17:00', timeZone: 'UTC' });
    expect(!format.ok && format.error.message).toMatch(/HH:MM/);
    const empty = findFreeSlots(iv('2026-12-01T12:00:00Z', '2026-12-01T09:00:00Z'), [], {
      minDurationMinutes: 30,
    });
    expect(empty.ok).toBe(false);
  });
});

describe('mergeAvailability', () => {
  const a = [iv('2026-12-01T09:00:00Z', '2026-12-01T11:00:00Z')];
  const b = [iv('2026-12-01T10:00:00Z', '2026-12-01T12:00:00Z')];

  it('opaque: merged blocks, sourceCount always 0', () => {
    expect(mergeAvailability([a, b], 'opaque').map((x) => [iso(x.start), iso(x.end), x.sourceCount])).toEqual(
      [['2026-12-01T09:00:00.000Z', '2026-12-01T12:00:00.000Z', 0]],
    );
  });

  it('full: blocks split where the number of busy calendars changes', () => {
    expect(mergeAvailability([a, b], 'full').map((x) => [iso(x.start), iso(x.end), x.sourceCount])).toEqual([
      ['2026-12-01T09:00:00.000Z', '2026-12-01T10:00:00.000Z', 1],
      ['2026-12-01T10:00:00.000Z', '2026-12-01T11:00:00.000Z', 2],
      ['2026-12-01T11:00:00.000Z', '2026-12-01T12:00:00.000Z', 1],
    ]);
  });

  it('full: one calendar overlapping itself counts once', () => {
    const self = [
      iv('2026-12-01T09:00:00Z', '2026-12-01T10:00:00Z'),
      iv('2026-12-01T09:30:00Z', '2026-12-01T10:30:00Z'),
    ];
    expect(mergeAvailability([self], 'full').map((x) => x.sourceCount)).toEqual([1]);
  });
});
