/**
 * What an import looks up on an Outlook calendar: the events it wrote, by the iCalendar UID kept
 * in Calgate's extended property (Graph sets `iCalUId` itself), and a series' occurrence by the
 * instance key of its original start (occurrences have Graph ids of their own).
 */
import { parseInstanceKey } from '../caldav/ical/expand.ts';
import type { CalendarRef } from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';
import type { GraphEvent } from './graph-types.ts';
import { PREFER } from './reads.ts';

/**
 * Where an imported event keeps its iCalendar UID: Graph sets `iCalUId` itself, so the UID goes
 * into a single-value extended property of Calgate's own name (PublicStrings namespace), written
 * on create and found with `$filter=singleValueExtendedProperties/Any(…)`. Graph answers the id
 * with the GUID in lower case, as written here.
 */
export const ICAL_UID_PROPERTY = 'String {00020329-0000-0000-c000-000000000046} Name Calgate.iCalUID';
/** UIDs up to this many are looked up one by one; more with one listing of the calendar. */
const UIDS_ONE_BY_ONE = 10;

/**
 * The events an import wrote, by the UID it kept in ICAL_UID_PROPERTY: up to UIDS_ONE_BY_ONE
 * UIDs with a filtered listing each, more with one listing of the calendar's events (ids and
 * the property alone, a page of 100 at a time). Graph compares the value without regard to
 * case, so each match is checked exactly.
 */
export async function findByICalUIDs(
  client: GraphClient,
  calendar: CalendarRef,
  uids: readonly string[],
): Promise<Map<string, string>> {
  const wanted = new Set(uids);
  const found = new Map<string, string>();
  const keep = (events: readonly GraphEvent[]) => {
    for (const event of events) {
      const uid = event.singleValueExtendedProperties?.find(
        (property) => property.id?.toLowerCase() === ICAL_UID_PROPERTY.toLowerCase(),
      )?.value;
      if (typeof uid === 'string' && wanted.has(uid) && !found.has(uid) && typeof event.id === 'string') {
        found.set(uid, event.id);
      }
    }
  };
  const request = (query: Record<string, string | number>) => ({
    path: graphPath`/me/calendars/${calendar.externalId}/events`,
    query: {
      $select: 'id',
      $expand: `singleValueExtendedProperties($filter=id eq '${ICAL_UID_PROPERTY}')`,
      ...query,
    },
    operation: 'events.list',
    calendarId: calendar.externalId,
  });
  if (wanted.size <= UIDS_ONE_BY_ONE) {
    for (const uid of wanted) {
      const quoted = uid.replace(/'/g, "''");
      const page = await client.page<GraphEvent>(
        request({
          $filter: `singleValueExtendedProperties/Any(ep: ep/id eq '${ICAL_UID_PROPERTY}' and ep/value eq '${quoted}')`,
          $top: 10,
        }),
      );
      keep(page.value);
    }
    return found;
  }
  for await (const page of client.pages<GraphEvent>(request({ $top: 100 }))) {
    keep(page.value);
  }
  return found;
}

/**
 * The occurrence of a series whose original start the instance key names, from the series'
 * instances in the days around it (an all-day key: any original start within 14 hours of that
 * date's UTC midnight, the zones' spread).
 */
export async function occurrenceId(
  client: GraphClient,
  calendar: CalendarRef,
  masterId: string,
  key: string,
): Promise<string | undefined> {
  const parsed = parseInstanceKey(key);
  if (parsed === undefined) {
    return undefined;
  }
  const DAY = 86_400_000;
  const slack = parsed.allDay ? 14 * 3_600_000 : 0;
  const instances = await client.all<GraphEvent>({
    path: graphPath`/me/calendars/${calendar.externalId}/events/${masterId}/instances`,
    query: {
      startDateTime: new Date(parsed.key - DAY).toISOString(),
      endDateTime: new Date(parsed.key + 2 * DAY).toISOString(),
      $select: 'id,originalStart',
      $top: 100,
    },
    prefer: PREFER,
    operation: 'events.instances',
    calendarId: calendar.externalId,
    eventId: masterId,
  });
  const found = instances.find((instance) => {
    const at = Date.parse(String(instance.originalStart ?? '').replace(/(\.\d{3})\d+/, '$1'));
    return Number.isFinite(at) && Math.abs(at - parsed.key) <= slack;
  });
  return typeof found?.id === 'string' ? found.id : undefined;
}
