/**
 * What makes a calendar busy, by name: free/busy says when, and which events, when it was read
 * from them (a mirror, a local calendar); otherwise a listing of the same window says which. An event the key may read is named (id and summary); busy time whose event it
 * may not see in detail (a private event on a calendar Calgate's account only reads, a calendar
 * it sees only as free/busy, or a listing that failed) is just "busy": no id, no summary.
 */
import { CalgateError, type Interval } from '@calgate/core';
import type { BusyEvent } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import { detailsHidden } from '../../free-busy.ts';
import { FAN_OUT_PER_ACCOUNT, FAN_OUT_TOTAL, forEachLimited } from '../../merge.ts';
import { instantOf } from '../write/common.ts';
import { isBusy } from '../write/conflicts.ts';

/** One stretch of busy time in the window and what it is. */
export type BusyItem = Interval & { calendarId: string } & (
    | { kind: 'event'; eventId: string; summary?: string }
    | { kind: 'busy' }
    | { kind: 'hold' }
  );

const PAGE = 250;
/** Events read to name the busy time of one calendar; busy time past them stays "busy". */
const MAX_NAMED = 2_500;

/** `spans` minus `cut`, both sorted and merged. */
function subtract(spans: readonly Interval[], cut: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const span of spans) {
    let from = span.start;
    for (const piece of cut) {
      if (piece.end <= from || piece.start >= span.end) {
        continue;
      }
      if (piece.start > from) {
        out.push({ start: from, end: piece.start });
      }
      from = Math.max(from, piece.end);
    }
    if (from < span.end) {
      out.push({ start: from, end: span.end });
    }
  }
  return out;
}

/** The calendar's events in [start, end) that make time busy, in start order (at most MAX_NAMED). */
async function busyEvents(handle: CalendarHandle, hull: Interval, signal: AbortSignal): Promise<BusyEvent[]> {
  const { provider, ref, calendar } = handle;
  const out: BusyEvent[] = [];
  let pageToken: string | undefined;
  do {
    const page = await provider.listEvents(
      ref,
      {
        timeMin: new Date(hull.start).toISOString(),
        timeMax: new Date(hull.end).toISOString(),
        singleEvents: true,
        orderBy: 'startTime',
        maxResults: PAGE,
        ...(pageToken === undefined ? {} : { pageToken }),
      },
      signal,
    );
    for (const event of page.items) {
      if (isBusy(event, calendar.accountEmail)) {
        out.push({
          eventId: event.id,
          ...(event.summary === undefined ? {} : { summary: event.summary }),
          start: instantOf(event.start, ref.timeZone),
          end: instantOf(event.end, ref.timeZone),
        });
      }
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined && out.length < MAX_NAMED);
  return out;
}

/**
 * The busy time of one calendar in the window (`events`: free/busy and bookings, merged and
 * clipped; `holds`: booking holds) as named items, sorted by start. Naming never fails the call:
 * a calendar whose events cannot be listed reports its busy time as "busy".
 */
export async function nameBusy(
  handle: CalendarHandle,
  busy: { events: readonly Interval[]; holds: readonly Interval[]; named?: readonly BusyEvent[] | undefined },
  window: Interval,
  signal: AbortSignal,
): Promise<BusyItem[]> {
  const calendarId = handle.calendar.id;
  const items: BusyItem[] = busy.holds.map((hold) => ({ ...hold, calendarId, kind: 'hold' as const }));
  const [first] = busy.events;
  const last = busy.events.at(-1);
  if (first !== undefined && last !== undefined) {
    let listed: readonly BusyEvent[] = busy.named ?? [];
    if (busy.named === undefined && handle.calendar.accessRole !== 'freeBusyReader') {
      try {
        listed = await busyEvents(handle, { start: first.start, end: last.end }, signal);
      } catch (error) {
        if (!(error instanceof CalgateError) || signal.aborted) {
          throw error;
        }
      }
    }
    const hidden = detailsHidden(handle);
    const named: Interval[] = [];
    for (const event of listed) {
      if (hidden && event.summary === undefined) {
        continue;
      }
      const start = Math.max(event.start, window.start);
      const end = Math.min(event.end, window.end);
      // Only where free/busy agrees: a listing can be a moment older than free/busy.
      if (end <= start || !busy.events.some((span) => span.start < end && span.end > start)) {
        continue;
      }
      named.push({ start, end });
      items.push({
        start,
        end,
        calendarId,
        kind: 'event',
        eventId: event.eventId,
        ...(event.summary === undefined ? {} : { summary: event.summary }),
      });
    }
    named.sort((a, b) => a.start - b.start);
    for (const span of subtract(busy.events, named)) {
      items.push({ ...span, calendarId, kind: 'busy' });
    }
  }
  return items.sort((a, b) => a.start - b.start || a.end - b.end || idOf(a).localeCompare(idOf(b)));
}

/** Items at the same times sort by event id, so the order does not depend on how they were read. */
const idOf = (item: BusyItem) => (item.kind === 'event' ? item.eventId : '');

/** `nameBusy` for each calendar that answered, a few listings at a time per account. */
export async function nameAllBusy(
  handles: readonly CalendarHandle[],
  answers: readonly {
    calendarId: string;
    events: readonly Interval[];
    holds: readonly Interval[];
    named?: readonly BusyEvent[] | undefined;
  }[],
  window: Interval,
  signal: AbortSignal,
): Promise<BusyItem[]> {
  const byId = new Map(handles.map((handle) => [handle.calendar.id, handle]));
  const items: BusyItem[] = [];
  await forEachLimited(
    answers,
    (answer) => byId.get(answer.calendarId)?.calendar.connectionId ?? '',
    { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
    async (answer) => {
      const handle = byId.get(answer.calendarId);
      if (handle !== undefined) {
        items.push(...(await nameBusy(handle, answer, window, signal)));
      }
    },
  );
  return items.sort((a, b) => a.start - b.start || a.end - b.end || a.calendarId.localeCompare(b.calendarId));
}
