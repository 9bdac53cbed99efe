import type { Interval } from '@calgate/core';
import type { FreeBusyResult } from '@calgate/providers';
import type { CalendarHandle } from './access.ts';

/** Google answers free/busy for at most 50 calendars per query. */
const CALENDARS_PER_QUERY = 50;

/**
 * Whether Calgate's own account sees only some of a calendar's details (it reads the calendar,
 * or sees only its free/busy): private events then show as times alone, without whether they are
 * free or declined, or how they repeat.
 */
export function detailsHidden(handle: Pick<CalendarHandle, 'calendar'>): boolean {
  return handle.calendar.accessRole === 'reader' || handle.calendar.accessRole === 'freeBusyReader';
}

/**
 * Whether a free/busy query must ask the calendar system itself rather than a copy of it: a copy
 * of a calendar whose details are hidden cannot tell which of its private events are busy. A
 * subscribed feed is read-only but hides nothing: its copy holds all the feed says.
 */
export function needsUpstreamFreeBusy(handle: Pick<CalendarHandle, 'calendar'>): boolean {
  return handle.calendar.provider !== 'ics' && detailsHidden(handle);
}

/**
 * The handles in groups that one upstream free/busy query can answer: same connection, ≤ 50;
 * calendars that must be asked upstream (needsUpstreamFreeBusy) apart from the others.
 */
export function freeBusyBatches(handles: readonly CalendarHandle[]): CalendarHandle[][] {
  const byConnection = new Map<string, CalendarHandle[]>();
  for (const handle of handles) {
    const key = `${handle.calendar.connectionId}${needsUpstreamFreeBusy(handle) ? '\u0000upstream' : ''}`;
    const group = byConnection.get(key) ?? [];
    group.push(handle);
    byConnection.set(key, group);
  }
  const out: CalendarHandle[][] = [];
  for (const group of byConnection.values()) {
    for (let i = 0; i < group.length; i += CALENDARS_PER_QUERY) {
      out.push(group.slice(i, i + CALENDARS_PER_QUERY));
    }
  }
  return out;
}

/** One calendar's busy intervals (epoch ms) from a free/busy answer, or why there are none. */
export function busyIntervalsOf(
  result: FreeBusyResult | undefined,
): Interval[] | { code: string; message: string } {
  if (result === undefined || result.busy === undefined || result.error !== undefined) {
    return (
      result?.error ?? { code: 'upstream_unavailable', message: 'The calendar returned no free/busy answer.' }
    );
  }
  if (result.intervals !== undefined) {
    return result.intervals.map(({ start, end }) => ({ start, end }));
  }
  const out: Interval[] = [];
  for (const block of result.busy) {
    const start = Date.parse(block.start);
    const end = Date.parse(block.end);
    if (Number.isNaN(start) || Number.isNaN(end)) {
      return { code: 'upstream_unavailable', message: 'The calendar returned an unreadable busy interval.' };
    }
    out.push({ start, end });
  }
  return out;
}

/** The older of two syncs an answer reflects (RFC 3339 UTC, so they compare as strings). */
export function oldestSync(current: string | undefined, next: string | undefined): string | undefined {
  if (next === undefined) {
    return current;
  }
  return current === undefined || next < current ? next : current;
}
