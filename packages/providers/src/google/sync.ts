/**
 * Google's sync source for the event mirror (mirror/source.ts). A full sync lists everything, with
 * no window (singleEvents=false, showDeleted: masters, exceptions and cancelled instances); an
 * incremental one asks events.list with the sync token for what changed since. 410 Gone (the
 * token expired) is the source's "cursor expired". Push channels are events.watch and channels.stop.
 *
 * The source is given a googleapis client with its auth set up; retries belong to the job that
 * runs the sync, which can simply run it again. syncCalendar runs the mirror's engine with it.
 */
import { CalgateError, seriesEnd } from '@calgate/core';
import type { MirrorEventInput, MirrorSink, MirrorSyncState } from '@calgate/store';
import type { calendar_v3 } from '@googleapis/calendar';
import { instantOfKey, parseInstanceId } from '../local/rows.ts';
import type { MirrorFormat, PushHooks, SyncSource, SyncStep } from '../mirror/source.ts';
import { type SyncResult, syncMirror } from '../mirror/sync.ts';
import type { CalendarRef, EventDateTime } from '../types.ts';
import { describeFailure, failureOf, permanentError } from './failure.ts';
import { toCalendarEvent } from './mapping.ts';
import { MAX_PAGE_SIZE } from './page-size.ts';

/** Google's own default page size for events.list. */
export const SYNC_PAGE_SIZE = 250;
/** Where Google sends push notifications, under PUBLIC_URL. */
export const GOOGLE_PUSH_PATH = '/api/google/push';
/** Google's default and longest lifetime for events channels is 7 days; ask for it explicitly. */
const CHANNEL_TTL_S = 7 * 24 * 60 * 60;

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

type GoogleEvent = calendar_v3.Schema$Event;

/** Runs one sync of a Google calendar to its end through the mirror's engine. */
export function syncCalendar(options: SyncCalendarOptions): Promise<SyncResult> {
  const { calendar, pageSize, ...rest } = options;
  return syncMirror({
    ...rest,
    source: googleSyncSource(calendar, pageSize === undefined ? {} : { pageSize }),
  });
}

/** Google's sync source over a client authorised for the calendars' account. */
export function googleSyncSource(
  api: calendar_v3.Calendar,
  options: { pageSize?: number; now?: () => number } = {},
): SyncSource {
  const maxResults = Math.min(Math.max(1, options.pageSize ?? SYNC_PAGE_SIZE), MAX_PAGE_SIZE);
  const now = options.now ?? Date.now;
  const page = async (
    externalId: string,
    syncToken: string | null,
    pageToken: string | null,
    signal: AbortSignal | undefined,
  ): Promise<SyncStep> => {
    // A sync token rules out every other restriction; a full listing asks for deleted events too,
    // so cancelled instances (removed occurrences) reach the mirror.
    const params: calendar_v3.Params$Resource$Events$List = {
      calendarId: externalId,
      maxResults,
      singleEvents: false,
      ...(syncToken === null ? { showDeleted: true } : { syncToken }),
      ...(pageToken === null ? {} : { pageToken }),
    };
    let data: calendar_v3.Schema$Events;
    try {
      ({ data } = await api.events.list(params, { signal, retry: false }));
    } catch (error) {
      if (isGone(error)) {
        return { kind: 'expired', error };
      }
      throw error;
    }
    const items = data.items ?? [];
    const next = data.nextPageToken ?? null;
    const token = data.nextSyncToken ?? null;
    if (next === null && token === null) {
      throw new CalgateError(
        'upstream_unavailable',
        `Google listed calendar '${externalId}' without a next page or sync token.`,
      );
    }
    return {
      kind: 'batch',
      upserts: items.filter((event) => typeof event.id === 'string').map(toMirrorEvent),
      removals: [],
      received: items.length,
      next: next === null ? { cursor: token as string } : { pageToken: next },
    };
  };
  const push: PushHooks = {
    path: GOOGLE_PUSH_PATH,
    async open(calendar, channel) {
      const { data } = await api.events.watch({
        calendarId: calendar.externalId,
        requestBody: {
          id: channel.channelId,
          type: 'web_hook',
          address: channel.address,
          token: channel.token,
          params: { ttl: String(CHANNEL_TTL_S) },
        },
      });
      if (!data.resourceId) {
        throw new Error(
          `Google opened channel ${channel.channelId} on ${calendar.calendarId} without a resourceId.`,
        );
      }
      const expiration = data.expiration ? Number(data.expiration) : now() + CHANNEL_TTL_S * 1000;
      return { resourceId: data.resourceId, expiration };
    },
    async stop(_calendar, channel) {
      try {
        await api.channels.stop({ requestBody: { id: channel.channelId, resourceId: channel.resourceId } });
      } catch (error) {
        if (statusOf(error) !== 404) {
          throw error;
        }
      }
    },
  };
  return {
    provider: 'google',
    format: GOOGLE_MIRROR_FORMAT,
    full: (calendar, { pageToken }, signal) => page(calendar.externalId, null, pageToken, signal),
    changes: (calendar, { cursor, pageToken }, signal) =>
      page(calendar.externalId, cursor, pageToken, signal),
    failure(error, calendar) {
      const failure = failureOf(error, Date.now());
      if (failure === null) {
        return null;
      }
      return {
        message: `events.list: ${describeFailure(failure)}`,
        error: permanentError(failure, { operation: 'events.list', calendarId: calendar.externalId }),
      };
    },
    push,
  };
}

function isGone(error: unknown): boolean {
  const failure = failureOf(error, Date.now());
  return failure?.kind === 'http' && failure.status === 410;
}

function statusOf(error: unknown): number | undefined {
  if (error !== null && typeof error === 'object' && 'status' in error && typeof error.status === 'number') {
    return error.status;
  }
  return undefined;
}

/** Google events in the mirror: rows keep the resource as Google sent it. */
export const GOOGLE_MIRROR_FORMAT: MirrorFormat = {
  toMirrorEvent: (event) => toMirrorEvent(event as GoogleEvent),
  deletion,
  toEvent: (row) => toCalendarEvent(row.raw as GoogleEvent),
  instanceLink,
};

/** What a delete leaves in the mirror: a single event or series removed, an instance cancelled. */
function deletion(calendar: CalendarRef, eventId: string, now: number): MirrorEventInput {
  const parsed = parseInstanceId(eventId);
  const originalStart = parsed === null ? null : instantOfKey(parsed.key, calendar.timeZone);
  return toMirrorEvent({
    id: eventId,
    status: 'cancelled',
    updated: new Date(now).toISOString(),
    ...(parsed === null || originalStart === null
      ? {}
      : {
          recurringEventId: parsed.masterId,
          originalStartTime: { dateTime: new Date(originalStart).toISOString() },
        }),
  });
}

/**
 * Google's link to one occurrence: the series' link with `eid` = base64url("<instanceId> <calendar>")
 * in place of "<masterId> <calendar>". A link of another form is kept as it is.
 */
function instanceLink(masterLink: string, masterId: string, instanceId: string): string {
  const match = /([?&]eid=)([A-Za-z0-9_-]+)/.exec(masterLink);
  if (match === null) {
    return masterLink;
  }
  const decoded = Buffer.from(match[2] as string, 'base64url').toString('utf8');
  if (!decoded.startsWith(`${masterId} `)) {
    return masterLink;
  }
  const eid = Buffer.from(`${instanceId}${decoded.slice(masterId.length)}`).toString('base64url');
  return masterLink.replace(match[0], `${match[1]}${eid}`);
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
