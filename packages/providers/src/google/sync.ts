/**
 * Keeps a calendar's mirror current with Google's sync tokens. Without a token it lists
 * everything (singleEvents=false, showDeleted: masters, exceptions and cancelled instances);
 * with one it asks only for what changed since. Each page is stored before the next is asked
 * for, together with the token to continue from, so a sync stopped between pages resumes there
 * and repeats nothing. 410 Gone (the token expired) starts a full sync over.
 *
 * The caller passes a googleapis client with its auth set up; retries belong to the job that
 * runs the sync, which can simply run it again.
 */
import { CalgateError, seriesEnd } from '@calgate/core';
import type { MirrorEventInput, MirrorSink, MirrorSyncState, PageOutcome } from '@calgate/store';
import type { calendar_v3 } from '@googleapis/calendar';
import type { EventDateTime } from '../types.ts';
import { describeFailure, failureOf, permanentError } from './failure.ts';
import { MAX_PAGE_SIZE } from './page-size.ts';

/** Google's own default page size for events.list. */
export const SYNC_PAGE_SIZE = 250;

export interface SyncCalendarOptions {
  /** A googleapis Calendar client whose auth reaches the account (rootUrl may point elsewhere). */
  calendar: calendar_v3.Calendar;
  /** Calgate's calendar id (`cal_…`) and its tenant: where the rows go. */
  calendarId: string;
  tenantId: string;
  /** Google's calendar id. */
  externalId: string;
  /** The stored state (read from the store when not given). */
  state?: MirrorSyncState | null;
  store: MirrorSink;
  /** Events per page, at most 2,500. */
  pageSize?: number;
  signal?: AbortSignal;
}

export interface SyncResult {
  mode: 'full' | 'incremental';
  /** A sync token had expired (410 Gone), so a full sync ran instead. */
  restarted: boolean;
  /** The sync went on from a page token stored by an earlier, unfinished sync. */
  resumed: boolean;
  pages: number;
  /** Events Google sent. */
  received: number;
  upserted: number;
  deleted: number;
  swept: number;
}

type GoogleEvent = calendar_v3.Schema$Event;

/** Runs one sync of a calendar to its end; see the module comment. */
export async function syncCalendar(options: SyncCalendarOptions): Promise<SyncResult> {
  const { store, calendarId, tenantId } = options;
  const state = options.state === undefined ? await store.syncState(calendarId) : options.state;
  const result: SyncResult = {
    mode: state?.syncToken ? 'incremental' : 'full',
    restarted: false,
    resumed: (state?.pageToken ?? null) !== null,
    pages: 0,
    received: 0,
    upserted: 0,
    deleted: 0,
    swept: 0,
  };
  try {
    let current = state;
    if (current === null || (current.syncToken === null && current.pageToken === null)) {
      current = await store.resetForFullSync(calendarId, tenantId);
    }
    try {
      await pages(options, current.syncToken, current.pageToken, result);
    } catch (error) {
      if (!isGone(error)) {
        throw error;
      }
      const fresh = await store.resetForFullSync(calendarId, tenantId);
      Object.assign(result, { mode: 'full', restarted: true, resumed: false });
      await pages(options, fresh.syncToken, fresh.pageToken, result);
    }
    return result;
  } catch (error) {
    const failure = failureOf(error, Date.now());
    if (failure === null) {
      throw error;
    }
    await store.recordFailure(calendarId, tenantId, `events.list: ${describeFailure(failure)}`);
    throw permanentError(failure, { operation: 'events.list', calendarId: options.externalId });
  }
}

async function pages(
  options: SyncCalendarOptions,
  syncToken: string | null,
  firstPageToken: string | null,
  result: SyncResult,
): Promise<void> {
  const maxResults = Math.min(Math.max(1, options.pageSize ?? SYNC_PAGE_SIZE), MAX_PAGE_SIZE);
  let pageToken = firstPageToken;
  for (;;) {
    // A sync token rules out every other restriction; a full listing asks for deleted events too,
    // so cancelled instances (removed occurrences) reach the mirror.
    const params: calendar_v3.Params$Resource$Events$List = {
      calendarId: options.externalId,
      maxResults,
      singleEvents: false,
      ...(syncToken === null ? { showDeleted: true } : { syncToken }),
      ...(pageToken === null ? {} : { pageToken }),
    };
    const { data } = await options.calendar.events.list(params, { signal: options.signal, retry: false });
    const items = data.items ?? [];
    const next = data.nextPageToken ?? null;
    const token = data.nextSyncToken ?? null;
    if (next === null && token === null) {
      throw new CalgateError(
        'upstream_unavailable',
        `Google listed calendar '${options.externalId}' without a next page or sync token.`,
      );
    }
    const outcome: PageOutcome = await options.store.applyPage(
      options.calendarId,
      options.tenantId,
      items.filter((event) => typeof event.id === 'string').map(toMirrorEvent),
      { nextPageToken: next, nextSyncToken: next === null ? token : null },
    );
    result.pages += 1;
    result.received += items.length;
    result.upserted += outcome.upserted;
    result.deleted += outcome.deleted;
    result.swept += outcome.swept;
    if (next === null) {
      return;
    }
    pageToken = next;
  }
}

function isGone(error: unknown): boolean {
  const failure = failureOf(error, Date.now());
  return failure?.kind === 'http' && failure.status === 410;
}

const instant = (value: string | null | undefined): Date | null => {
  if (value === null || value === undefined) {
    return null;
  }
  const at = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
  return Number.isNaN(at.getTime()) ? null : at;
};

const text = (value: string | null | undefined): string | null => (value ? value : null);

/**
 * A Google event as the mirror keeps it. All-day events start and end at UTC midnight of their
 * dates (the dates themselves are kept); `raw` is the resource unchanged.
 */
export function toMirrorEvent(event: GoogleEvent): MirrorEventInput {
  const allDay = Boolean(event.start?.date);
  return {
    eventId: event.id as string,
    recurringEventId: text(event.recurringEventId),
    originalStart: instant(event.originalStartTime?.dateTime ?? event.originalStartTime?.date),
    status: event.status ?? 'confirmed',
    summary: text(event.summary),
    description: text(event.description),
    location: text(event.location),
    allDay,
    startAt: instant(event.start?.dateTime ?? event.start?.date),
    endAt: instant(event.end?.dateTime ?? event.end?.date),
    startDate: text(event.start?.date),
    endDate: text(event.end?.date),
    startTimeZone: text(event.start?.timeZone),
    endTimeZone: text(event.end?.timeZone),
    recurrence: event.recurrence ?? [],
    seriesEnd: seriesEndOf(event),
    attendees: event.attendees ?? null,
    updated: instant(event.updated),
    etag: text(event.etag),
    raw: event as Record<string, unknown>,
  };
}

const DAY_MS = 86_400_000;

/**
 * When a master's last occurrence ends, a day later (the zone of floating times is the
 * calendar's, unknown here: a day covers every zone). Null when it never ends or the rule
 * cannot be read (listings then always consider it).
 */
function seriesEndOf(event: GoogleEvent): Date | null {
  if (!event.recurrence?.length || event.recurringEventId || !event.start || !event.end) {
    return null;
  }
  const end = seriesEnd({
    recurrence: event.recurrence,
    start: dateTimeOf(event.start),
    end: dateTimeOf(event.end),
    defaultTimeZone: 'UTC',
  });
  return end.ok && end.value !== null ? new Date(end.value + DAY_MS) : null;
}

function dateTimeOf(value: calendar_v3.Schema$EventDateTime): EventDateTime {
  return {
    ...(value.dateTime ? { dateTime: value.dateTime } : {}),
    ...(value.date ? { date: value.date } : {}),
    ...(value.timeZone ? { timeZone: value.timeZone } : {}),
  };
}
