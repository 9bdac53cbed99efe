/**
 * The mirror's sync source for CalDAV calendars (mirror/source.ts). A full sync asks
 * sync-collection (RFC 6578) with no token for every object and the token to go on from; a
 * server without it is listed by PROPFIND (ETags) and its getctag kept. Objects are then read by
 * calendar-multiget in batches, each batch one step of the engine (so a stopped sync resumes
 * there): the page token holds the hrefs still to read and the cursor the next sync starts from.
 *
 * Cursors: `s:<sync token>`, or `e:` + JSON `{ctag, etags}` (event id → ETag) where
 * sync-collection is not offered, compared object by object when the ctag moved. A token the
 * server no longer honours is `expired`, and the engine starts a full sync over.
 *
 * Rows are CALENDAR_EVENT_FORMAT: each object's master (or single event) and its overrides as
 * exceptions, ids as the provider makes them (caldavEventId).
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import type { MirrorEventInput } from '@calgate/store';
import { CALENDAR_EVENT_FORMAT } from '../mirror/format.ts';
import type { SyncCalendar, SyncSource, SyncStep } from '../mirror/source.ts';
import type { CaldavClient, CaldavEtag, CaldavObject } from './client.ts';
import { parseCalendarText } from './ical/read.ts';
import { caldavEventId, markSelf, resourceEvents } from './provider.ts';

export interface CaldavSyncOptions {
  /** Objects read per batch (calendar-multiget). */
  batchSize?: number;
  /** The calendar's IANA zone (floating and all-day times are read there). */
  zoneOf: (calendar: SyncCalendar) => Promise<string>;
  /**
   * The exceptions the mirror holds of these series (ids): an override removed on the server
   * since is removed from the mirror too, and its occurrence follows the series again.
   */
  exceptionsOf?: (calendar: SyncCalendar, seriesIds: readonly string[]) => Promise<string[]>;
  /** The account's address: its own attendee entries are marked `self` (markSelf). */
  accountEmail?: string;
}

interface PageState {
  /** The cursor the sync ends with. */
  c: string;
  /** Hrefs still to read. */
  h: string[];
}

const collection = (calendar: SyncCalendar) =>
  calendar.externalId.endsWith('/') ? calendar.externalId : `${calendar.externalId}/`;

function encodePage(state: PageState): string {
  return JSON.stringify(state);
}

function decodePage(token: string): PageState | undefined {
  try {
    const value = JSON.parse(token) as PageState;
    return typeof value.c === 'string' && Array.isArray(value.h) ? value : undefined;
  } catch {
    return undefined;
  }
}

function etagCursor(ctag: string | undefined, etags: readonly CaldavEtag[]): string {
  const map: Record<string, string> = {};
  for (const entry of etags) {
    map[caldavEventId(entry.href)] = entry.etag ?? '';
  }
  return `e:${JSON.stringify({ ctag: ctag ?? null, etags: map })}`;
}

/** The rows of a batch of objects (parsed here, in the process that runs the sync). */
function rowsOf(
  objects: readonly CaldavObject[],
  zone: string,
  account: string | undefined,
): { upserts: MirrorEventInput[]; removals: string[] } {
  const upserts: MirrorEventInput[] = [];
  const removals: string[] = [];
  for (const object of objects) {
    const id = caldavEventId(object.href);
    try {
      const resource = parseCalendarText(object.data, zone).resources[0];
      const events =
        resource === undefined ? [] : markSelf(resourceEvents(resource, id, object.etag), account);
      if (events.length === 0) {
        removals.push(id);
      }
      for (const event of events) {
        // LAST-MODIFIED is whatever the last client wrote (or nothing), not a clock the server
        // keeps: what the server holds now always replaces the mirror's copy.
        upserts.push({ ...CALENDAR_EVENT_FORMAT.toMirrorEvent(event), updated: null });
      }
    } catch (error) {
      if (!isCalgateError(error)) {
        throw error;
      }
      // An object Calgate cannot read is left out of the mirror, as listings leave it out.
      removals.push(id);
    }
  }
  return { upserts, removals };
}

export function caldavSyncSource(client: CaldavClient, options: CaldavSyncOptions): SyncSource {
  const batchSize = options.batchSize ?? 200;

  async function step(
    calendar: SyncCalendar,
    state: PageState,
    removals: string[],
    signal?: AbortSignal,
  ): Promise<SyncStep> {
    const hrefs = state.h.slice(0, batchSize);
    const rest = state.h.slice(batchSize);
    const objects = await client.multiget(collection(calendar), hrefs, signal);
    const rows = rowsOf(objects, await options.zoneOf(calendar), options.accountEmail);
    const read = new Set(objects.map((object) => caldavEventId(object.href)));
    if (options.exceptionsOf !== undefined && read.size > 0) {
      const fresh = new Set(rows.upserts.map((row) => row.eventId));
      for (const id of await options.exceptionsOf(calendar, [...read])) {
        if (!fresh.has(id)) {
          rows.removals.push(id);
        }
      }
    }
    // Asked for but gone meanwhile: removed.
    for (const href of hrefs) {
      const id = caldavEventId(href);
      if (!read.has(id)) {
        rows.removals.push(id);
      }
    }
    return {
      kind: 'batch',
      upserts: rows.upserts,
      removals: [...removals, ...rows.removals],
      received: objects.length + removals.length,
      next: rest.length > 0 ? { pageToken: encodePage({ c: state.c, h: rest }) } : { cursor: state.c },
    };
  }

  return {
    provider: 'caldav',
    format: CALENDAR_EVENT_FORMAT,
    async full(calendar, page, signal) {
      if (page.pageToken !== null) {
        const state = decodePage(page.pageToken);
        if (state === undefined) {
          return { kind: 'expired' };
        }
        return step(calendar, state, [], signal);
      }
      const url = collection(calendar);
      const outcome = await client.syncCollection(url, undefined, signal);
      if (outcome.kind === 'changes' && outcome.token !== undefined) {
        return step(calendar, { c: `s:${outcome.token}`, h: outcome.changed.map((e) => e.href) }, [], signal);
      }
      const state = await client.collectionState(url, signal);
      const etags = await client.listEtags(url, signal);
      return step(calendar, { c: etagCursor(state.ctag, etags), h: etags.map((e) => e.href) }, [], signal);
    },
    async changes(calendar, page, signal) {
      if (page.pageToken !== null) {
        const state = decodePage(page.pageToken);
        return state === undefined ? { kind: 'expired' } : step(calendar, state, [], signal);
      }
      const url = collection(calendar);
      if (page.cursor.startsWith('s:')) {
        const outcome = await client.syncCollection(url, page.cursor.slice(2), signal);
        if (outcome.kind !== 'changes' || outcome.token === undefined) {
          return { kind: 'expired' };
        }
        return step(
          calendar,
          { c: `s:${outcome.token}`, h: outcome.changed.map((e) => e.href) },
          outcome.removed.map(caldavEventId),
          signal,
        );
      }
      if (!page.cursor.startsWith('e:')) {
        return { kind: 'expired' };
      }
      let before: { ctag: string | null; etags: Record<string, string> };
      try {
        before = JSON.parse(page.cursor.slice(2)) as typeof before;
      } catch {
        return { kind: 'expired' };
      }
      const state = await client.collectionState(url, signal);
      if (state.ctag !== undefined && state.ctag === before.ctag) {
        return { kind: 'batch', upserts: [], removals: [], received: 0, next: { cursor: page.cursor } };
      }
      const etags = await client.listEtags(url, signal);
      const now = new Set<string>();
      const changed: string[] = [];
      for (const entry of etags) {
        const id = caldavEventId(entry.href);
        now.add(id);
        if (
          before.etags[id] === undefined ||
          before.etags[id] !== (entry.etag ?? '') ||
          entry.etag === undefined
        ) {
          changed.push(entry.href);
        }
      }
      const removed = Object.keys(before.etags).filter((id) => !now.has(id));
      return step(calendar, { c: etagCursor(state.ctag, etags), h: changed }, removed, signal);
    },
    failure(error) {
      if (!isCalgateError(error)) {
        return null;
      }
      return {
        message: `CalDAV: ${error.message}`,
        error:
          error.code === 'needs_reauth'
            ? error
            : new CalgateError(error.code, error.message, { retry: error.retry, cause: error }),
      };
    },
  };
}
