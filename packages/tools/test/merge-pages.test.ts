import type { CalendarEvent, CalendarProvider, ListEventsQuery } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import type { CalendarHandle, KeyCalendar } from '../src/access.ts';
import { mergeEvents } from '../src/merge.ts';

/** A calendar of `count` events an hour apart, paged by offset tokens, that counts its reads. */
function pagedCalendar(id: string, count: number, offsetMinutes: number) {
  const events: CalendarEvent[] = Array.from({ length: count }, (_, i) => {
    const start = Date.UTC(2026, 11, 1, i, offsetMinutes);
    return {
      id: `${id}e${i}`,
      status: 'confirmed',
      start: { dateTime: new Date(start).toISOString() },
      end: { dateTime: new Date(start + 30 * 60_000).toISOString() },
    } as CalendarEvent;
  });
  const reads: (string | undefined)[] = [];
  const provider = {
    kind: 'local',
    readsLocally: true,
    async listEvents(_calendar: unknown, query: ListEventsQuery) {
      reads.push(query.pageToken);
      const from = query.pageToken === undefined ? 0 : Number(query.pageToken);
      const to = from + query.maxResults;
      return {
        items: events.slice(from, to),
        ...(to < events.length ? { nextPageToken: String(to) } : {}),
      };
    },
  } as unknown as CalendarProvider;
  const calendar = { id, externalId: id, timeZone: 'UTC', connectionId: 'local' } as KeyCalendar;
  const handle: CalendarHandle = { calendar, ref: { id, externalId: id, timeZone: 'UTC' }, provider };
  return { handle, reads, events };
}

const QUERY = { singleEvents: true, orderBy: 'startTime' as const };
const signal = new AbortController().signal;

describe('mergeEvents page reads', () => {
  it('reads one page for a full answer and names the next page without reading it', async () => {
    const one = pagedCalendar('cal_a', 10, 0);
    const first = await mergeEvents([one.handle], QUERY, 3, undefined, signal);
    expect(first.items.map((item) => item.event.id)).toEqual(['cal_ae0', 'cal_ae1', 'cal_ae2']);
    expect(one.reads).toEqual([undefined]);
    expect(first.nextPageToken).toBeDefined();

    const second = await mergeEvents([one.handle], QUERY, 3, first.nextPageToken, signal);
    expect(second.items.map((item) => item.event.id)).toEqual(['cal_ae3', 'cal_ae4', 'cal_ae5']);
    expect(one.reads).toEqual([undefined, '3']);
  });

  it('pages through every event of several calendars exactly once, in start order', async () => {
    const a = pagedCalendar('cal_a', 7, 0);
    const b = pagedCalendar('cal_b', 5, 30);
    const all = [...a.events, ...b.events]
      .sort((x, y) => Date.parse(x.start.dateTime ?? '') - Date.parse(y.start.dateTime ?? ''))
      .map((event) => event.id);
    const seen: string[] = [];
    let token: string | undefined;
    let answers = 0;
    // Pages of two calendars end at different places: answers stop at a page's end, mid-page and
    // on the last event of a calendar.
    do {
      const page = await mergeEvents([a.handle, b.handle], QUERY, 2, token, signal);
      seen.push(...page.items.map((item) => item.event.id));
      token = page.nextPageToken;
      answers += 1;
    } while (token !== undefined && answers < 20);
    expect(seen).toEqual(all);
  });
});
