/**
 * Keeps a calendar's mirror current from its provider's sync source (source.ts). Without a
 * cursor it lists everything (a full sync); with one it asks only for what changed since. Each
 * batch is stored before the next is asked for, together with the token to continue from, so a
 * sync stopped between batches resumes there and repeats nothing. A cursor the upstream no
 * longer accepts starts a full sync over.
 *
 * Retries belong to the job that runs the sync, which can simply run it again.
 */
import { CalgateError } from '@calgate/core';
import type { MirrorEventInput, MirrorSink, MirrorSyncState, PageOutcome } from '@calgate/store';
import type { SyncCalendar, SyncSource, SyncWindow } from './source.ts';

export interface SyncMirrorOptions extends SyncCalendar {
  source: SyncSource;
  /** The stored state (read from the store when not given). */
  state?: MirrorSyncState | null;
  store: MirrorSink;
  /** The span of a full sync, for sources that list a window. */
  window?: SyncWindow;
  signal?: AbortSignal;
}

export interface SyncResult {
  mode: 'full' | 'incremental';
  /** The cursor had expired (Google's 410 Gone), so a full sync ran instead. */
  restarted: boolean;
  /** The sync went on from a page token stored by an earlier, unfinished sync. */
  resumed: boolean;
  pages: number;
  /** Items the upstream sent. */
  received: number;
  upserted: number;
  deleted: number;
  swept: number;
}

/** Runs one sync of a calendar to its end; see the module comment. */
export async function syncMirror(options: SyncMirrorOptions): Promise<SyncResult> {
  const { store, calendarId, tenantId, source } = options;
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
    if (!(await batches(options, current.syncToken, current.pageToken, result))) {
      const fresh = await store.resetForFullSync(calendarId, tenantId);
      Object.assign(result, { mode: 'full', restarted: true, resumed: false });
      await batches(options, fresh.syncToken, fresh.pageToken, result, true);
    }
    return result;
  } catch (error) {
    const failure = source.failure(error, { calendarId, tenantId, externalId: options.externalId });
    if (failure === null) {
      throw error;
    }
    await store.recordFailure(calendarId, tenantId, failure.message);
    throw failure.error;
  }
}

/** Applies batches to the end; false when the cursor expired (nothing was stored then). */
async function batches(
  options: SyncMirrorOptions,
  cursor: string | null,
  firstPageToken: string | null,
  result: SyncResult,
  restarted = false,
): Promise<boolean> {
  const { source, store } = options;
  const calendar: SyncCalendar = {
    calendarId: options.calendarId,
    tenantId: options.tenantId,
    externalId: options.externalId,
  };
  let pageToken = firstPageToken;
  // The cursor a sync ends with reflects the upstream no earlier than its first read.
  const readAt = Date.now();
  for (;;) {
    const step =
      cursor === null
        ? await source.full(calendar, { window: options.window, pageToken }, options.signal)
        : await source.changes(calendar, { cursor, pageToken }, options.signal);
    if (step.kind === 'expired') {
      if (!restarted) {
        return false;
      }
      throw (
        step.error ??
        new CalgateError(
          'upstream_unavailable',
          `The upstream refused a new full sync of calendar '${options.externalId}' as expired.`,
        )
      );
    }
    const next = 'pageToken' in step.next ? step.next.pageToken : null;
    const outcome: PageOutcome = await store.applyPage(
      options.calendarId,
      options.tenantId,
      [...step.upserts, ...step.removals.map(removal)],
      { nextPageToken: next, nextSyncToken: 'cursor' in step.next ? step.next.cursor : null, readAt },
    );
    result.pages += 1;
    result.received += step.received;
    result.upserted += outcome.upserted;
    result.deleted += outcome.deleted;
    result.swept += outcome.swept;
    if (next === null) {
      return true;
    }
    pageToken = next;
  }
}

/** An id reported gone: a cancelled event outside any series, which the mirror removes. */
function removal(eventId: string): MirrorEventInput {
  return {
    eventId,
    recurringEventId: null,
    originalStart: null,
    status: 'cancelled',
    summary: null,
    description: null,
    location: null,
    allDay: false,
    startAt: null,
    endAt: null,
    startDate: null,
    endDate: null,
    startTimeZone: null,
    endTimeZone: null,
    recurrence: [],
    attendees: null,
    updated: null,
    etag: null,
    raw: { id: eventId, status: 'cancelled' },
  };
}
