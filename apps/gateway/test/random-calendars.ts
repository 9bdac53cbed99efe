/**
 * Randomised calendars for tests that compare two ways of answering (the mirror and the
 * provider): a seeded generator, so `SEED=<n>` replays a run, the times of random events over a
 * few weeks, and random windows to ask about. Each provider's test turns the times into its own
 * event bodies (Google's `start.date`, Graph's `isAllDay` in a zone of its own, recurrence rules
 * or patterns).
 */
import { type SeededRandom, seededRandom } from '@calgate/testkit';

/** The run's seed: `SEED` when given (to replay a run), otherwise a new one. */
export const SEED = Number(process.env.SEED ?? Date.now() % 1_000_000);

export const DAY = 86_400_000;

/** The same seed, the same calendars. */
export const random = seededRandom;
export type Random = SeededRandom;

/** `ms` read as if UTC, as a wall time without offset (`YYYY-MM-DDTHH:MM:SS`): the zone goes beside it. */
export const wall = (ms: number) => new Date(ms).toISOString().slice(0, 19);
/** `ms` read as if UTC, as a date (`YYYY-MM-DD`). */
export const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The weeks random events and windows fall in. */
export interface RandomSpan {
  /** Midnight UTC of the first day. */
  day0: number;
  days: number;
}

export interface RandomEventShape extends RandomSpan {
  /** The zones a timed event's wall times are in. */
  zones: readonly string[];
  /** The first day an event may start on, relative to `day0` (the last is `days + lastDay`). */
  firstDay: number;
  lastDay: number;
  /** Shares of all-day events and of series; the rest are single timed events. */
  allDay: number;
  series: number;
  /** The longest timed event, in quarter hours. */
  maxQuarters: number;
  /**
   * The zone of an all-day event, drawn before its length from the zone picked for it (by default
   * that zone: the provider ignores it, as Google does for `start.date`).
   */
  allDayZone?: (zone: string) => string;
}

/**
 * One random event's times, read as if UTC (see `wall`, `date`), with the flags its provider drew:
 * all-day (`start` and `end` at midnight, 1 to 3 days apart, in `zone` as `allDayZone` chose), the
 * first occurrence of a series, or a single timed event, on a quarter hour in `zone`.
 */
export interface RandomEvent<F> {
  index: number;
  kind: 'allDay' | 'series' | 'single';
  zone: string;
  start: number;
  end: number;
  flags: F;
}

/**
 * `n` random events of one calendar. `flags` draws what the provider's bodies carry beyond times
 * (free or busy, private, declined…); `make` turns each into a body and may draw more (a series'
 * rule, a single event's form), in this order, so a seed always gives the same calendar.
 */
export function randomEvents<F, E>(
  rng: Random,
  n: number,
  shape: RandomEventShape,
  flags: (index: number) => F,
  make: (event: RandomEvent<F>) => E,
): E[] {
  const events: E[] = [];
  for (let index = 0; index < n; index++) {
    const zone = rng.pick(shape.zones);
    const day = shape.day0 + rng.int(shape.firstDay, shape.days + shape.lastDay) * DAY;
    const drawn = flags(index);
    const kind = rng.next();
    if (kind < shape.allDay) {
      const allDayZone = shape.allDayZone?.(zone) ?? zone;
      const end = day + rng.int(1, 3) * DAY;
      events.push(make({ index, kind: 'allDay', zone: allDayZone, start: day, end, flags: drawn }));
      continue;
    }
    const start = day + rng.int(0, 95) * 900_000;
    const end = start + rng.int(1, shape.maxQuarters) * 900_000;
    const series = kind < shape.allDay + shape.series;
    events.push(make({ index, kind: series ? 'series' : 'single', zone, start, end, flags: drawn }));
  }
  return events;
}

/**
 * A random window inside the span (or overlapping its ends), on half hours, up to `maxHours`
 * long, read in one of `zones`.
 */
export function randomWindow(rng: Random, span: RandomSpan, zones: readonly string[], maxHours: number) {
  const start = span.day0 + rng.int(-1, span.days) * DAY + rng.int(0, 47) * 1_800_000;
  const end = start + rng.int(1, maxHours * 2) * 1_800_000;
  return {
    timeMin: new Date(start).toISOString(),
    timeMax: new Date(end).toISOString(),
    timeZone: rng.pick(zones),
  };
}
