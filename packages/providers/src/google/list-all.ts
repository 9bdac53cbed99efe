/** Reads a whole event list through any provider, page by page, up to a limit. */
import { CalgateError } from '@calgate/core';
import type { CalendarEvent, CalendarProvider, CalendarRef, ListEventsQuery } from '../types.ts';
import { clampPageSize, MAX_PAGE_SIZE } from './page-size.ts';

/**
 * Pages through `listEvents` until the last page or `limit` events. `truncated` says that more
 * events exist beyond the limit.
 */
export async function listAllEvents(
  provider: CalendarProvider,
  calendar: CalendarRef,
  query: Omit<ListEventsQuery, 'pageToken' | 'maxResults'> & { maxResults?: number },
  limit: number,
  signal?: AbortSignal,
): Promise<{ items: CalendarEvent[]; truncated: boolean }> {
  const items: CalendarEvent[] = [];
  if (limit <= 0) {
    return { items, truncated: false };
  }
  const seen = new Set<string>();
  const maxResults = clampPageSize(query.maxResults ?? Math.min(limit, MAX_PAGE_SIZE));
  let pageToken: string | undefined;
  for (;;) {
    const page = await provider.listEvents(
      calendar,
      { ...query, maxResults, ...(pageToken === undefined ? {} : { pageToken }) },
      signal,
    );
    items.push(...page.items);
    if (items.length >= limit) {
      return {
        items: items.slice(0, limit),
        truncated: items.length > limit || page.nextPageToken !== undefined,
      };
    }
    if (page.nextPageToken === undefined) {
      return { items, truncated: false };
    }
    if (seen.has(page.nextPageToken)) {
      throw new CalgateError(
        'upstream_unavailable',
        'Google returned the same page token twice; paging stopped.',
        {
          context: { operation: 'events.list', calendarId: calendar.externalId },
        },
      );
    }
    seen.add(page.nextPageToken);
    pageToken = page.nextPageToken;
  }
}
