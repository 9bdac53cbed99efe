import { describe, expect, it } from 'vitest';
import { availability, clipped } from '../src/tools/read/free-slots.ts';

const H = 3_600_000;
const span = (start: number, end: number) => ({ start: start * H, end: end * H });
const day = span(8, 18);

describe('free/busy merging', () => {
  it('clips busy spans to the window and merges overlapping and touching ones', () => {
    expect(clipped([span(7, 9), span(12, 13), span(12.5, 13.5), span(13.5, 14), span(17, 19)], day)).toEqual([
      span(8, 9),
      span(12, 14),
      span(17, 18),
    ]);
  });

  it('with no busy time the whole window is free; with all of it busy nothing is', () => {
    expect(availability([[]], day).free).toEqual([day]);
    expect(availability([[span(6, 20)]], day)).toEqual({ busy: [day], free: [], unknown: [] });
  });

  it('free slots are free on every calendar and at least the minimum duration', () => {
    const result = availability([[span(9, 10), span(13, 14)], [span(9.5, 11)], []], day, 1.5 * H);
    expect(result.busy).toEqual([span(9, 11), span(13, 14)]);
    expect(result.free).toEqual([span(11, 13), span(14, 18)]);
    expect(result.unknown).toEqual([]);
  });

  it('a calendar that could not be read makes every open range unknown, never free', () => {
    const result = availability([[span(9, 10)], null], day);
    expect(result.free).toEqual([]);
    expect(result.busy).toEqual([span(9, 10)]);
    expect(result.unknown).toEqual([span(8, 9), span(10, 18)]);
  });

  it('only unreadable calendars: the whole window is unknown', () => {
    expect(availability([null], day)).toEqual({ busy: [], free: [], unknown: [day] });
  });
});
