/**
 * What an import looks up on a Google calendar: the live events (singles and series masters)
 * carrying its iCalendar UIDs, asked for one by one when few, else read from one listing.
 */
import { CalgateError } from '@calgate/core';
import type { calendar_v3 } from '@googleapis/calendar';
import type { CalendarRef } from '../types.ts';
import type { Call } from './calls.ts';

/** UIDs an import looks up one by one; more are found in one listing of the calendar. */
const FEW_UIDS = 10;
/** Pages of 2,500 events an import's UID listing reads at most. */
const MAX_UID_PAGES = 40;

/**
 * The ids of the live events (singles and masters) carrying these iCalendar UIDs, by UID: a
 * few are asked for one by one (events.list with `iCalUID`), many with one listing of the
 * whole calendar, a page per 2,500 events.
 */
export async function findByICalUIDs(
  call: Call,
  api: calendar_v3.Calendar,
  calendar: CalendarRef,
  uids: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const wanted = new Set(uids);
  const keep = (items: calendar_v3.Schema$Event[] | undefined) => {
    for (const item of items ?? []) {
      const uid = item.iCalUID;
      if (
        uid &&
        item.id &&
        wanted.has(uid) &&
        !item.recurringEventId &&
        item.status !== 'cancelled' &&
        !out.has(uid)
      ) {
        out.set(uid, item.id);
      }
    }
  };
  const list = (params: calendar_v3.Params$Resource$Events$List) =>
    call({ operation: 'events.list', calendarId: calendar.externalId }, (options) =>
      api.events.list(
        { calendarId: calendar.externalId, maxResults: 2500, singleEvents: false, ...params },
        options,
      ),
    );
  if (wanted.size <= FEW_UIDS) {
    await Promise.all([...wanted].map(async (uid) => keep((await list({ iCalUID: uid })).items)));
    return out;
  }
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_UID_PAGES; page += 1) {
    const data = await list(pageToken === undefined ? {} : { pageToken });
    keep(data.items);
    if (!data.nextPageToken) {
      return out;
    }
    pageToken = data.nextPageToken;
  }
  throw new CalgateError(
    'invalid_argument',
    `This calendar has more than ${MAX_UID_PAGES * 2500} events, too many to look up an import's UIDs in; import into another calendar.`,
  );
}
