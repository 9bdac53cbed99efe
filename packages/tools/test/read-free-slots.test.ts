import { describe, expect, it } from 'vitest';
import { availability, gaps, unionOf } from '../src/tools/read/free-slots.ts';

const H = 3_600_000;
const span = (start: number, end: number) => ({ start: start * H, end: end * H });
const day = span(8, 18);

describe('free/busy merging', () => {
  it('joins overlapping and touching busy spans and drops empty ones', () => {
    expect(unionOf([span(9, 10), span(12, 13), span(9.5, 11), span(11, 11.5), span(14, 14)])).toEqual([
      span(9, 11.5),
      span(12, 13),
    ]);
  });

  it('finds the gaps of a window, clipped at its edges', () => {
    expect(gaps([span(7, 9), span(12, 13), span(17, 19)], day)).toEqual([span(9, 12), span(13, 17)]);
    expect(gaps([], day)).toEqual([day]);
    expect(gaps([span(6, 20)], day)).toEqual([]);
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
