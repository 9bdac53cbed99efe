/**
 * The time part of mirror reads as SQL: which rows a window needs (series masters, overlapping
 * events, moved occurrences), each arm written for its own index.
 */

/**
 * The time part of a window read, as an OR of three arms each with its own index (see the
 * mirror_speed migration): series masters starting before the end, events overlapping the
 * window, exceptions whose original start is in it. Bounds left out are not filtered on; the
 * SQL is built per call so no arm carries an `$n IS NULL OR …` the planner cannot index.
 */
export function windowSql(min: Date | null, max: Date | null, param: (value: unknown) => string): string {
  if (min === null && max === null) {
    return '';
  }
  const { masters, overlapping, moved } = windowArms(min, max, param);
  return `AND (${[masters, overlapping, moved].map((arm) => `(${arm})`).join(' OR ')})`;
}

/**
 * How far an all-day row's instants in a calendar's zone can be from its stored start and end
 * (its dates' UTC midnights): zones run from UTC−12 to UTC+14.
 */
export const ALL_DAY_SLACK_MS = 14 * 3_600_000;

export const shifted = (date: Date | null, byMs: number) =>
  date === null ? null : new Date(date.getTime() + byMs);

/**
 * The parts of a first-rows read that come in the range index's order: rows starting in the
 * window (the index walked from the window's start, not from the calendar's first event), and
 * rows that started before it and still run (a GiST probe of the window's first instant; few).
 * Timed rows are matched exactly; all-day rows with ALL_DAY_SLACK_MS. Plain comparisons also
 * keep the planner's estimates close (a GiST probe's made it prefer a text index probe per
 * calendar over walking by start).
 */
export function firstArms(
  min: Date | null,
  max: Date | null,
  param: (value: unknown) => string,
): { startsInWindow: string; spanning: string | null } {
  const lo = min === null ? null : param(min);
  const loSlack = min === null ? null : param(shifted(min, -ALL_DAY_SLACK_MS));
  const hiSlack = max === null ? null : param(shifted(max, ALL_DAY_SLACK_MS));
  // Rows starting up to the slack after the window are few and come last; the caller drops the
  // timed ones (a plain bound keeps planning cheap: one per calendar).
  const beforeEnd = hiSlack === null ? [] : [`e.start_at < ${hiSlack}`];
  return {
    startsInWindow: [
      'e.start_at IS NOT NULL',
      ...(lo === null ? [] : [`e.start_at >= ${lo}`]),
      ...beforeEnd,
    ].join(' AND '),
    spanning:
      lo === null
        ? null
        : [
            `e.start_at < ${lo}`,
            `tstzrange(e.start_at, greatest(e.start_at, e.end_at), '[]') && tstzrange(${loSlack}::timestamptz, ${lo}::timestamptz, '[]')`,
            `(e.end_at > ${lo} OR (e.all_day AND e.end_at > ${loSlack}))`,
            ...beforeEnd,
          ].join(' AND '),
  };
}

/** The three arms of windowSql, each a condition on `e` (TRUE-free when a bound is left out). */
export function windowArms(
  min: Date | null,
  max: Date | null,
  param: (value: unknown) => string,
): { masters: string; overlapping: string; moved: string } {
  const lo = min === null ? null : param(min);
  const hi = max === null ? null : param(max);
  const before = (column: string) => (hi === null ? [] : [`${column} < ${hi}`]);
  const from = (column: string, op: string) => (lo === null ? [] : [`${column} ${op} ${lo}`]);
  // The GiST probe only narrows the rows; the exact filters beside it decide. Its window is
  // ordered so tstzrange accepts it even when min > max (the filters then still apply).
  const span =
    min !== null && max !== null && min > max
      ? `tstzrange(${hi}::timestamptz, ${lo}::timestamptz, '[]')`
      : `tstzrange(${lo ?? 'NULL'}::timestamptz, ${hi ?? 'NULL'}::timestamptz, '[]')`;
  const overlapping =
    min === null && max === null
      ? ['e.start_at IS NOT NULL']
      : [
          `tstzrange(e.start_at, greatest(e.start_at, e.end_at), '[]') && ${span}`,
          ...before('e.start_at'),
          ...from('e.end_at', '>'),
        ];
  return {
    masters: [
      'cardinality(e.recurrence) > 0',
      ...before('e.start_at'),
      ...(lo === null ? [] : [`(e.series_end IS NULL OR e.series_end > ${lo})`]),
    ].join(' AND '),
    overlapping: overlapping.join(' AND '),
    moved: [
      'e.original_start IS NOT NULL',
      ...before('e.original_start'),
      ...from('e.original_start', '>='),
    ].join(' AND '),
  };
}
