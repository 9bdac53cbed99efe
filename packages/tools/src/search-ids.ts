/**
 * Document ids for the `search` and `fetch` tools: the Calgate calendar id and the event id,
 * `cal_…:<eventId>`. Calgate calendar ids are unique across a tenant's accounts and never
 * contain ':', so the id is stable across calls and unique across calendars; an occurrence of a
 * recurring series has its own event id and so its own document id.
 */
export interface DocumentRef {
  calendarId: string;
  eventId: string;
}

const CALENDAR_ID = /^cal_[A-Za-z0-9_-]+$/;

export function encodeDocumentId(ref: DocumentRef): string {
  return `${ref.calendarId}:${ref.eventId}`;
}

/** The calendar and event an id names, or undefined when it is not an id `search` returns. */
export function decodeDocumentId(id: string): DocumentRef | undefined {
  const at = id.indexOf(':');
  if (at < 0) {
    return undefined;
  }
  const calendarId = id.slice(0, at);
  const eventId = id.slice(at + 1);
  if (!CALENDAR_ID.test(calendarId) || eventId === '' || eventId.length > 1024 || /[\s/]/.test(eventId)) {
    return undefined;
  }
  return { calendarId, eventId };
}
