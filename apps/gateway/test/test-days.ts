/**
 * The days a test's seeded events fall on: whole UTC days counted from midnight `ahead` days
 * after today, so events are always in the future and at the same hours whatever time the run
 * starts. Times come out as RFC 3339 in UTC without milliseconds, as the providers write them.
 */
export const DAY = 86_400_000;

export interface TestDays {
  /** Midnight (UTC, epoch ms) of day 0. */
  day0: number;
  /** An instant as `YYYY-MM-DDTHH:MM:SSZ`. */
  iso(ms: number): string;
  /** `hours` (fractions allowed) after midnight of day `days`. */
  at(days: number, hours: number): string;
  /** Day `days` as `YYYY-MM-DD`. */
  date(days: number): string;
  /** A Graph wall clock in UTC (no offset, as Graph writes it). */
  wall(days: number, hours: number): { dateTime: string; timeZone: 'UTC' };
  /** A Google event from `from` to `to` o'clock on day `days`. */
  timed(
    summary: string,
    days: number,
    from: number,
    to: number,
    extra?: Record<string, unknown>,
  ): Record<string, unknown> & { summary: string; start: { dateTime: string }; end: { dateTime: string } };
  /** An Outlook event from `from` to `to` o'clock on day `days`. */
  outlookTimed(
    subject: string,
    days: number,
    from: number,
    to: number,
    extra?: Record<string, unknown>,
  ): Record<string, unknown> & {
    subject: string;
    start: { dateTime: string; timeZone: 'UTC' };
    end: { dateTime: string; timeZone: 'UTC' };
  };
}

export function testDays(ahead: number): TestDays {
  const day0 = Math.floor(Date.now() / DAY) * DAY + ahead * DAY;
  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  const at = (days: number, hours: number) => iso(day0 + days * DAY + hours * 3_600_000);
  const wall = (days: number, hours: number) => ({
    dateTime: at(days, hours).slice(0, 19),
    timeZone: 'UTC' as const,
  });
  return {
    day0,
    iso,
    at,
    date: (days) => iso(day0 + days * DAY).slice(0, 10),
    wall,
    timed: (summary, days, from, to, extra = {}) => ({
      summary,
      start: { dateTime: at(days, from) },
      end: { dateTime: at(days, to) },
      ...extra,
    }),
    outlookTimed: (subject, days, from, to, extra = {}) => ({
      subject,
      start: wall(days, from),
      end: wall(days, to),
      ...extra,
    }),
  };
}
