import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import { complement, type Interval, intersect, mergeIntervals } from './intervals.ts';
import { type WorkingHours, workingIntervals } from './working-hours.ts';

export interface Slot extends Interval {
  durationMinutes: number;
}

export interface SlotOptions {
  minDurationMinutes: number;
  workingHours?: WorkingHours;
  /** Free time kept clear before and after every busy block. */
  bufferMinutes?: number;
}

const MINUTE = 60_000;

/**
 * Free slots of at least `minDurationMinutes` in `window`, outside `busy` (padded by the buffer)
 * and, when given, inside working hours.
 */
export function findFreeSlots(
  window: Interval,
  busy: readonly Interval[],
  options: SlotOptions,
): Result<Slot[], CalgateError> {
  if (window.end <= window.start) {
    return err(new CalgateError('invalid_argument', 'end must be later than start.'));
  }
  if (!(options.minDurationMinutes >= 1)) {
    return err(new CalgateError('invalid_argument', 'minDurationMinutes must be at least 1.'));
  }
  const buffer = (options.bufferMinutes ?? 0) * MINUTE;
  const padded = mergeIntervals(busy.map((b) => ({ start: b.start - buffer, end: b.end + buffer })));
  let free = complement(window, padded);
  if (options.workingHours !== undefined) {
    const hours = workingIntervals(window, options.workingHours);
    if (!hours.ok) {
      return hours;
    }
    free = intersect(free, hours.value);
  }
  const min = options.minDurationMinutes * MINUTE;
  return ok(
    free
      .filter((slot) => slot.end - slot.start >= min)
      .map((slot) => ({ ...slot, durationMinutes: Math.floor((slot.end - slot.start) / MINUTE) })),
  );
}

export interface BusyBlock extends Interval {
  /** How many calendars are busy in this block (always 0 in opaque mode). */
  sourceCount: number;
}

export type Privacy = 'opaque' | 'full';

/**
 * Merges several calendars' busy intervals into blocks. In `full` mode each block says how many
 * calendars are busy throughout it (blocks split where that number changes); in `opaque` mode
 * blocks are merged regardless and say nothing about their sources.
 */
export function mergeAvailability(
  calendars: readonly (readonly Interval[])[],
  privacy: Privacy,
): BusyBlock[] {
  if (privacy === 'opaque') {
    return mergeIntervals(calendars.flat()).map((block) => ({ ...block, sourceCount: 0 }));
  }
  // Sweep over start/end points of each calendar's own merged blocks.
  const points: { at: number; delta: number }[] = [];
  for (const busy of calendars) {
    for (const block of mergeIntervals(busy)) {
      points.push({ at: block.start, delta: 1 }, { at: block.end, delta: -1 });
    }
  }
  points.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const out: BusyBlock[] = [];
  let depth = 0;
  let since = 0;
  for (let i = 0; i < points.length; i++) {
    const point = points[i] as { at: number; delta: number };
    if (depth > 0 && point.at > since) {
      const last = out[out.length - 1];
      if (last !== undefined && last.end === since && last.sourceCount === depth) {
        last.end = point.at;
      } else {
        out.push({ start: since, end: point.at, sourceCount: depth });
      }
    }
    depth += point.delta;
    since = point.at;
  }
  return out;
}
