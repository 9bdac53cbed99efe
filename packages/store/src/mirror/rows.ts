/** Mirror rows between Postgres and TypeScript: the columns read, and the JSON a page is sent as. */
import { ms } from '../sql.ts';
import { documentOf } from './search.ts';
import type {
  MirrorEventInput,
  MirrorEventRow,
  MirrorResourceRow,
  MirrorSyncState,
  MirrorSyncStatus,
} from './types.ts';

export const EVENT_COLUMNS = `calendar_id, tenant_id, event_id, recurring_event_id, ${ms('original_start')}, status,
  summary, description, location, all_day, ${ms('start_at')}, ${ms('end_at')}, start_date, end_date,
  start_time_zone, end_time_zone, recurrence, attendees, ${ms('updated')}, etag, raw`;

export interface RawEventRow {
  calendar_id: string;
  tenant_id: string;
  event_id: string;
  recurring_event_id: string | null;
  original_start: number | null;
  status: string;
  summary: string | null;
  description: string | null;
  location: string | null;
  all_day: boolean;
  start_at: number | null;
  end_at: number | null;
  start_date: string | null;
  end_date: string | null;
  start_time_zone: string | null;
  end_time_zone: string | null;
  recurrence: string[] | null;
  attendees: unknown;
  updated: number | null;
  etag: string | null;
  raw: Record<string, unknown>;
}

const date = (value: number | null) => (value === null ? null : new Date(value));

export function eventFromRow(row: RawEventRow): MirrorEventRow {
  return {
    calendarId: row.calendar_id,
    tenantId: row.tenant_id,
    eventId: row.event_id,
    recurringEventId: row.recurring_event_id,
    originalStart: date(row.original_start),
    status: row.status,
    summary: row.summary,
    description: row.description,
    location: row.location,
    allDay: row.all_day,
    startAt: date(row.start_at),
    endAt: date(row.end_at),
    startDate: row.start_date,
    endDate: row.end_date,
    startTimeZone: row.start_time_zone,
    endTimeZone: row.end_time_zone,
    recurrence: row.recurrence ?? [],
    attendees: row.attendees,
    updated: date(row.updated),
    etag: row.etag,
    raw: row.raw,
  };
}

export const RESOURCE_COLUMNS = `e.calendar_id, e.event_id, e.recurring_event_id, ${ms('e.original_start', 'original_start')},
  e.status, e.etag, e.raw`;

export interface RawResourceRow {
  calendar_id: string;
  event_id: string;
  recurring_event_id: string | null;
  original_start: number | null;
  status: string;
  etag: string | null;
  raw: Record<string, unknown>;
  matched?: boolean;
}

export function resourceFromRow(row: RawResourceRow): MirrorResourceRow {
  const out: MirrorResourceRow = {
    eventId: row.event_id,
    recurringEventId: row.recurring_event_id,
    originalStart: row.original_start,
    status: row.status,
    etag: row.etag,
    // Left out (null) for rows read only to know they do not match.
    raw: row.raw ?? {},
  };
  if (row.matched !== undefined) {
    out.matched = row.matched;
  }
  return out;
}

export const STATE_COLUMNS = `calendar_id, tenant_id, sync_token, page_token, generation, status, error,
  ${ms('synced_at')}, ${ms('full_sync_at')}`;

export interface RawStateRow {
  calendar_id: string;
  tenant_id: string;
  sync_token: string | null;
  page_token: string | null;
  generation: number;
  status: MirrorSyncStatus;
  error: string | null;
  synced_at: number | null;
  full_sync_at: number | null;
}

export function stateFromRow(row: RawStateRow): MirrorSyncState {
  return {
    calendarId: row.calendar_id,
    tenantId: row.tenant_id,
    syncToken: row.sync_token,
    pageToken: row.page_token,
    generation: row.generation,
    status: row.status,
    error: row.error,
    syncedAt: date(row.synced_at),
    fullSyncAt: date(row.full_sync_at),
  };
}

/** The record type jsonb_to_recordset reads a page with; keys match `pageJson`. */
export const PAGE_RECORD = `r(event_id text, recurring_event_id text, original_start timestamptz, status text,
  summary text, description text, location text, all_day boolean, start_at timestamptz, end_at timestamptz,
  start_date text, end_date text, start_time_zone text, end_time_zone text, recurrence text[],
  series_end timestamptz, attendees jsonb, updated timestamptz, etag text, raw jsonb, search_doc text)`;

// Postgres text and jsonb cannot hold U+0000; Google text rarely has it, and one such event must
// not stop a calendar's sync for good.
const withoutNul = (_key: string, value: unknown) =>
  typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;

/** A page as one JSON parameter: one round trip however many events it holds. */
export function pageJson(events: readonly MirrorEventInput[]): string {
  return JSON.stringify(
    events.map((e) => ({
      event_id: e.eventId,
      recurring_event_id: e.recurringEventId,
      original_start: e.originalStart,
      status: e.status,
      summary: e.summary,
      description: e.description,
      location: e.location,
      all_day: e.allDay,
      start_at: e.startAt,
      end_at: e.endAt,
      start_date: e.startDate,
      end_date: e.endDate,
      start_time_zone: e.startTimeZone,
      end_time_zone: e.endTimeZone,
      recurrence: e.recurrence,
      series_end: e.seriesEnd ?? null,
      attendees: e.attendees ?? null,
      updated: e.updated,
      etag: e.etag,
      raw: e.raw,
      // Made from the resource listings read, so a row matches as the event it becomes does.
      search_doc: documentOf(e.raw),
    })),
    withoutNul,
  );
}
