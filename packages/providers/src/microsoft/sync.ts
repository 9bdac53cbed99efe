/**
 * Outlook's sync source for the event mirror (mirror/source.ts), over `calendarView/delta`. The
 * window goes only in the first request of a full sync; Graph then answers `@odata.nextLink`s
 * (`$skiptoken`) to follow as given and, at the end, an `@odata.deltaLink` (`$deltatoken`) that
 * the next incremental sync starts from. Items are occurrences, exceptions and single events
 * (never masters); `@removed` entries and occurrences the organizer cancelled leave the mirror.
 * A delta token Graph no longer knows (410, SyncStateNotFound) is the source's "cursor expired",
 * and so is a window anchored too long ago: a full sync then starts over with a window around now.
 *
 * Tokens are `<anchor ms>|<Graph link>`: the anchor says where the window was put.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import type { MirrorEventInput } from '@calgate/store';
import { CALENDAR_EVENT_FORMAT } from '../mirror/format.ts';
import type { MirrorFormat, PushHooks, SyncSource, SyncStep, SyncWindow } from '../mirror/source.ts';
import type { CalendarEvent } from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';
import { allDayZoneOf } from './event-from-graph.ts';
import type { GraphEvent } from './graph-types.ts';
import { PREFER_TEXT_BODY, toCalendarEvent } from './mapping.ts';
import { graphRangeBound } from './times.ts';

const DAY_MS = 86_400_000;
/** The mirrored window: this far back and ahead of its anchor. */
export const MICROSOFT_MIRROR_BEFORE_MS = 400 * DAY_MS;
export const MICROSOFT_MIRROR_AFTER_MS = 760 * DAY_MS;
/** A window older than this is re-anchored (a full sync over). */
export const MICROSOFT_MIRROR_REANCHOR_MS = 30 * DAY_MS;
/** Where Graph delivers change notifications, under PUBLIC_URL. */
export const MICROSOFT_PUSH_PATH = '/api/microsoft/push';
/** Graph keeps a subscription on Outlook events at most 4,230 minutes; ask for a little less. */
const SUBSCRIPTION_MINUTES = 4_200;

/**
 * A subscription's clientState: the channel id and its token, which the receiver checks (Graph
 * sends it back with every notification, and names the channel nowhere else).
 */
export function microsoftClientState(channelId: string, token: string): string {
  return `${channelId}.${token}`;
}

/** Events per delta page (Graph's `odata.maxpagesize` preference). */
export const MICROSOFT_SYNC_PAGE_SIZE = 200;

/**
 * What a mirror of an Outlook calendar always covers, whenever it was last re-anchored: a
 * listing outside it is read from Graph.
 */
export function microsoftMirrorCovers(timeMin: number | undefined, timeMax: number | undefined, now: number) {
  return (
    timeMin !== undefined &&
    timeMax !== undefined &&
    timeMin >= now - (MICROSOFT_MIRROR_BEFORE_MS - MICROSOFT_MIRROR_REANCHOR_MS) &&
    timeMax <= now + (MICROSOFT_MIRROR_AFTER_MS - MICROSOFT_MIRROR_REANCHOR_MS)
  );
}

/** Where a row of an all-day event keeps the event's own zone, beside the event in `raw`. */
const ALL_DAY_ZONE = 'allDayTimeZone';

/**
 * Outlook events in the mirror: rows keep Calgate's CalendarEvent; reads stay within the window.
 * The mirror holds a series as its occurrences (as calendarView/delta lists them), so a series
 * master written through Calgate is not kept as a row: the next read syncs instead. An all-day
 * event's row keeps the event's own zone, where Graph puts its midnights (free/busy and windows
 * read its dates there, not in the calendar's zone); a row without one reads in the calendar's.
 */
export const MICROSOFT_MIRROR_FORMAT: MirrorFormat = {
  ...CALENDAR_EVENT_FORMAT,
  toMirrorEvent(event) {
    const row = CALENDAR_EVENT_FORMAT.toMirrorEvent(event);
    const zone = allDayZoneOf(event);
    return row.allDay && zone !== undefined ? { ...row, raw: { ...row.raw, [ALL_DAY_ZONE]: zone } } : row;
  },
  toEvent(row) {
    const { [ALL_DAY_ZONE]: _zone, ...event } = row.raw;
    return event as unknown as CalendarEvent;
  },
  allDayZone(row) {
    const zone = row.raw[ALL_DAY_ZONE];
    return typeof zone === 'string' ? zone : undefined;
  },
  covers: microsoftMirrorCovers,
  keeps: (event) => (event.recurrence?.length ?? 0) === 0 || event.recurringEventId !== undefined,
};

function encode(anchor: number, link: string): string {
  return `${anchor}|${link}`;
}

function decode(token: string): { anchor: number; link: string } | null {
  const bar = token.indexOf('|');
  const anchor = Number(token.slice(0, bar));
  return bar < 1 || !Number.isFinite(anchor) ? null : { anchor, link: token.slice(bar + 1) };
}

export interface MicrosoftSyncOptions {
  pageSize?: number;
  now?: () => number;
  /** The account's address, so its attendee entry reads as `self`. */
  account?: string;
}

/** Outlook's sync source over a Graph client authorised for the calendars' mailbox. */
export function microsoftSyncSource(client: GraphClient, options: MicrosoftSyncOptions = {}): SyncSource {
  const now = options.now ?? Date.now;
  const pageSize = Math.max(1, Math.min(options.pageSize ?? MICROSOFT_SYNC_PAGE_SIZE, 1000));
  const prefer = ['outlook.timezone="UTC"', PREFER_TEXT_BODY, `odata.maxpagesize=${pageSize}`];

  const step = async (
    externalId: string,
    anchor: number,
    link: string | undefined,
    window: { from: number; to: number } | undefined,
    signal: AbortSignal | undefined,
  ): Promise<SyncStep> => {
    let page: Awaited<ReturnType<GraphClient['page']>>;
    try {
      page = await client.page<GraphEvent>(
        {
          path: graphPath`/me/calendars/${externalId}/calendarView/delta`,
          ...(window === undefined
            ? {}
            : {
                query: {
                  startDateTime: graphRangeBound(window.from),
                  endDateTime: graphRangeBound(window.to),
                },
              }),
          prefer,
          operation: 'events.delta',
          calendarId: externalId,
          ...(signal === undefined ? {} : { signal }),
        },
        link,
      );
    } catch (error) {
      if (isCalgateError(error) && error.context.fullSyncRequired === true) {
        return { kind: 'expired', error };
      }
      throw error;
    }
    const upserts: MirrorEventInput[] = [];
    const removals: string[] = [];
    for (const raw of page.value as (GraphEvent & { '@removed'?: unknown })[]) {
      if (typeof raw.id !== 'string' || raw.id === '') {
        continue;
      }
      if (raw['@removed'] !== undefined || raw.isCancelled === true) {
        removals.push(raw.id);
        continue;
      }
      const mapped = toCalendarEvent(raw, options.account);
      if (!mapped.ok) {
        throw mapped.error;
      }
      upserts.push(MICROSOFT_MIRROR_FORMAT.toMirrorEvent(mapped.value.event));
    }
    let next: { pageToken: string } | { cursor: string };
    if (page.nextLink !== undefined) {
      next = { pageToken: encode(anchor, page.nextLink) };
    } else if (page.deltaLink !== undefined) {
      next = { cursor: encode(anchor, page.deltaLink) };
    } else {
      throw new CalgateError(
        'upstream_unavailable',
        `Microsoft Graph answered a delta page of calendar '${externalId}' without a next or delta link.`,
      );
    }
    return { kind: 'batch', upserts, removals, received: page.value.length, next };
  };

  const windowAround = (anchor: number, given: SyncWindow | undefined) => ({
    from: given?.timeMin?.getTime() ?? anchor - MICROSOFT_MIRROR_BEFORE_MS,
    to: given?.timeMax?.getTime() ?? anchor + MICROSOFT_MIRROR_AFTER_MS,
  });

  const push: PushHooks = {
    path: MICROSOFT_PUSH_PATH,
    async open(calendar, channel) {
      const expiration = now() + SUBSCRIPTION_MINUTES * 60_000;
      const created = await client.request<{ id?: string; expirationDateTime?: string }>({
        method: 'POST',
        path: '/subscriptions',
        body: {
          changeType: 'created,updated,deleted',
          notificationUrl: channel.address,
          // A resource path in the body, not a URL: the id as it is.
          resource: `/me/calendars/${calendar.externalId}/events`,
          expirationDateTime: new Date(expiration).toISOString(),
          clientState: microsoftClientState(channel.channelId, channel.token),
        },
        operation: 'subscriptions.create',
        calendarId: calendar.externalId,
      });
      if (typeof created?.id !== 'string' || created.id === '') {
        throw new CalgateError(
          'upstream_unavailable',
          `Microsoft Graph opened a subscription on ${calendar.calendarId} without an id.`,
        );
      }
      const ends = Date.parse(created.expirationDateTime ?? '');
      return { resourceId: created.id, expiration: Number.isNaN(ends) ? expiration : ends };
    },
    async stop(_calendar, channel) {
      try {
        await client.request<void>({
          method: 'DELETE',
          path: graphPath`/subscriptions/${channel.resourceId}`,
          operation: 'subscriptions.delete',
        });
      } catch (error) {
        if (!(isCalgateError(error) && error.code === 'not_found')) {
          throw error;
        }
      }
    },
  };

  return {
    provider: 'microsoft',
    format: MICROSOFT_MIRROR_FORMAT,
    push,
    full(calendar, { window, pageToken }, signal) {
      if (pageToken === null) {
        const anchor = now();
        return step(calendar.externalId, anchor, undefined, windowAround(anchor, window), signal);
      }
      const resumed = decode(pageToken);
      if (resumed === null) {
        return Promise.resolve({ kind: 'expired' });
      }
      return step(calendar.externalId, resumed.anchor, resumed.link, undefined, signal);
    },
    changes(calendar, { cursor, pageToken }, signal) {
      const at = decode(pageToken ?? cursor);
      if (at === null || now() - at.anchor > MICROSOFT_MIRROR_REANCHOR_MS) {
        // A window put too long ago no longer covers what reads expect: start over around now.
        return Promise.resolve({ kind: 'expired' });
      }
      return step(calendar.externalId, at.anchor, at.link, undefined, signal);
    },
    failure(error, calendar) {
      if (!isCalgateError(error)) {
        return null;
      }
      return {
        message: `calendarView/delta of ${calendar.externalId}: ${error.message}`,
        error,
      };
    },
  };
}
