import type { Interval } from '@calgate/core';
import type { FreeBusyResult } from '@calgate/providers';
import type { CalendarHandle } from './access.ts';

/** Google answers free/busy for at most 50 calendars per query. */
const CALENDARS_PER_QUERY = 50;

/** The handles in groups that one upstream free/busy query can answer: same connection, ≤ 50. */
export function freeBusyBatches(handles: readonly CalendarHandle[]): CalendarHandle[][] {
  const byConnection = new Map<string, CalendarHandle[]>();
  for (const handle of handles) {
    const group = byConnection.get(handle.calendar.connectionId) ?? [];
    group.push(handle);
    byConnection.set(handle.calendar.connectionId, group);
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
