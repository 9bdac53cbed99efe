/** The shapes the event mirror stores and answers with. */

/**
 * One event as a sync hands it to the mirror: a master, an exception or a single event in
 * listing of masters and exceptions (Google's singleEvents=false). Instants are Dates; all-day events carry their dates
 * (`YYYY-MM-DD`) and start/end at UTC midnight of those dates.
 */
export interface MirrorEventInput {
  eventId: string;
  recurringEventId: string | null;
  originalStart: Date | null;
  /** `confirmed`, `tentative` or `cancelled`. */
  status: string;
  summary: string | null;
  description: string | null;
  location: string | null;
  allDay: boolean;
  /** Null only for cancelled events, which upstreams may send without times. */
  startAt: Date | null;
  endAt: Date | null;
  startDate: string | null;
  endDate: string | null;
  startTimeZone: string | null;
  endTimeZone: string | null;
  recurrence: string[];
  /** A master's last occurrence's end, with a day to spare (null or absent: never ends). */
  seriesEnd?: Date | null;
  attendees: unknown;
  updated: Date | null;
  etag: string | null;
  /** The event resource as its provider sent it (the provider's MirrorFormat reads it back). */
  raw: Record<string, unknown>;
}

export interface MirrorEventRow extends MirrorEventInput {
  calendarId: string;
  tenantId: string;
  /** Set by reads with `withExceptions`: whether the row matched the query text. */
  matched?: boolean;
}

/** A stored event as listings read it: the resource as its provider sent it and the keys beside it. */
export interface MirrorResourceRow {
  eventId: string;
  recurringEventId: string | null;
  /** Epoch milliseconds. */
  originalStart: number | null;
  status: string;
  etag: string | null;
  raw: Record<string, unknown>;
  /** Set by reads with `withExceptions`: whether the row matched the query text. */
  matched?: boolean;
}

/** Where a page came in a listing: more pages follow, or this was the last one. */
export interface PageEnd {
  nextPageToken?: string | null | undefined;
  nextSyncToken?: string | null | undefined;
  /**
   * When the sync began reading the upstream (ms): the instant its last page reflects at the
   * earliest, recorded as the sync's time. Now (the commit) when not given.
   */
  readAt?: number | undefined;
}

export type MirrorSyncStatus = 'syncing' | 'ok' | 'error';

export interface MirrorSyncState {
  calendarId: string;
  tenantId: string;
  /** The token of the last completed sync; null before the first full sync completes. */
  syncToken: string | null;
  /** Set while a sync is between pages: the next page to ask for. */
  pageToken: string | null;
  /** Counts full syncs; a row older than the current generation was not seen by the last one. */
  generation: number;
  status: MirrorSyncStatus;
  error: string | null;
  syncedAt: Date | null;
  fullSyncAt: Date | null;
}

/** What one applied page did to the mirror (unchanged events are not counted). */
export interface PageOutcome {
  upserted: number;
  deleted: number;
  /** Rows removed at the end of a full sync because upstream no longer has them. */
  swept: number;
}

export interface MirrorChange {
  id: bigint;
  tenantId: string;
  calendarId: string;
  eventId: string;
  kind: 'upsert' | 'delete';
  at: Date;
}

export interface MirrorRangeQuery {
  timeMin?: Date;
  timeMax?: Date;
  /** Text the events must match (same rules as search). */
  query?: string;
  /** Upper bound on rows read. */
  limit?: number;
  /**
   * With `query`: also return every exception in the window whether it matches or not, with
   * `matched` telling which did (an exception that does not match still hides the instance of a
   * matching series it replaces).
   */
  withExceptions?: boolean;
  /**
   * First-rows reads: the tenant all the calendars belong to, so their rows can be walked
   * together in start order (see MirrorRepository.readFirst).
   */
  tenantId?: string;
}

/** See MirrorRepository.freshness. Instants are epoch milliseconds. */
export interface MirrorFreshness {
  /** The first full sync completed: the mirror may answer reads. */
  ready: boolean;
  syncedAt: number | null;
  pushedAt: number | null;
  /** A push channel is open on the calendar (the upstream tells Calgate about changes). */
  watched: boolean;
  /**
   * The calendar's mirror version: another value whenever its events changed (never one used
   * before), so what was computed from them holds while it stays the same.
   */
  version: string;
}

export interface MirrorSearchHit {
  event: MirrorEventRow;
  rank: number;
}

/**
 * What a sync engine needs from the mirror: apply a page atomically, start a full sync over.
 * MirrorRepository implements it; tests wrap it to stop a sync between pages.
 */
export interface MirrorSink {
  syncState(calendarId: string): Promise<MirrorSyncState | null>;
  applyPage(
    calendarId: string,
    tenantId: string,
    events: readonly MirrorEventInput[],
    end: PageEnd,
  ): Promise<PageOutcome>;
  resetForFullSync(calendarId: string, tenantId: string): Promise<MirrorSyncState>;
  recordFailure(calendarId: string, tenantId: string, message: string): Promise<void>;
}
