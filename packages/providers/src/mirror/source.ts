/**
 * What the event mirror needs from a calendar system, whatever it is: a sync source lists a
 * calendar from scratch (a full sync) or what changed since a cursor (an incremental sync), one
 * batch at a time, and says how its events are kept as mirror rows. The mirror's engine
 * (sync.ts), MirroredCalendarProvider and the gateway's jobs speak only this; each provider
 * brings one source (Google's is google/sync.ts).
 *
 * Cursors and page tokens are opaque strings the source makes and reads back (Google's sync and
 * page tokens; a Graph delta or next link; a CalDAV sync token). The engine stores each batch
 * with the token to continue from before asking for the next, so a sync stopped between batches
 * resumes there.
 */
import type { MirrorEventInput, MirrorResourceRow } from '@calgate/store';
import type { CalendarEvent, CalendarRef } from '../types.ts';

/** The calendar being synced: Calgate's id and tenant (where rows go) and the upstream's id. */
export interface SyncCalendar {
  calendarId: string;
  tenantId: string;
  /** The calendar's id at the upstream. */
  externalId: string;
}

/** The span a windowed full sync covers (a source that lists everything has no window). */
export interface SyncWindow {
  timeMin?: Date;
  timeMax?: Date;
}

/** One batch of a sync and where the sync goes on from. */
export interface SyncBatch {
  kind: 'batch';
  /** Events as the mirror keeps them (a cancelled one removes or hides what it names). */
  upserts: MirrorEventInput[];
  /** Ids the upstream reports gone without a resource (a removed single event or series). */
  removals: string[];
  /** Items the upstream sent in this batch (for logs). */
  received: number;
  /** More batches follow from `pageToken`, or this was the last and `cursor` starts the next sync. */
  next: { pageToken: string } | { cursor: string };
}

/**
 * The cursor (or the page token of a sync under way) is no longer accepted (Google's 410 Gone,
 * a Graph delta token gone stale, an invalid CalDAV sync token): the engine starts a full sync over.
 */
export interface CursorExpired {
  kind: 'expired';
  /** What the upstream answered; thrown (through `failure`) if a new full sync is refused too. */
  error?: unknown;
}

export type SyncStep = SyncBatch | CursorExpired;

/** A failure the source recognises: recorded on the calendar's sync state, then thrown. */
export interface SyncFailure {
  /** One line kept as the calendar's sync error. */
  message: string;
  /** What the sync throws (a CalgateError whose `retry` says whether the job should run again). */
  error: Error;
}

/**
 * How a provider's events are kept in the mirror and read back from it. A row's `raw` is also
 * what its search document is made from, so it carries `summary`, `description`, `location`,
 * `attendees` and `organizer` in Calgate's (and Google's) shape.
 */
export interface MirrorFormat {
  /** An event as its provider answered a write (or listed it), as a mirror row. */
  toMirrorEvent(event: CalendarEvent): MirrorEventInput;
  /** The row a delete through Calgate leaves: a single event or series removed, an occurrence cancelled. */
  deletion(calendar: CalendarRef, eventId: string, at: number): MirrorEventInput;
  /** A stored row read back as an event (rows keep the resource as the provider sent it). */
  toEvent(row: MirrorResourceRow): CalendarEvent;
  /**
   * The zone whose midnights an all-day row's dates are (Outlook: the event's own); absent or
   * undefined: the calendar's, Google's rule. Read for a row's own event, not a series' instances.
   */
  allDayZone?(row: MirrorResourceRow): string | undefined;
  /**
   * The link of one occurrence of a series expanded from the mirror, from the series' link;
   * absent: occurrences carry the series' link.
   */
  instanceLink?(masterLink: string, masterId: string, instanceId: string): string;
  /**
   * Whether the mirror holds every event of a listing's window (ms since the epoch; undefined:
   * open); absent: it holds everything. A window it does not cover is read from the upstream.
   */
  covers?(timeMin: number | undefined, timeMax: number | undefined, now: number): boolean;
  /**
   * Whether a write's answer can be kept as a row at once; absent: always. When not (Outlook's
   * series masters: its mirror holds occurrences), the calendar is synced before the next read.
   */
  keeps?(event: CalendarEvent): boolean;
}

/** A push channel as the upstream opened it. */
export interface OpenedChannel {
  /** The upstream's handle on the channel, needed to stop it. */
  resourceId: string;
  /** Epoch milliseconds after which the upstream stops sending. */
  expiration: number;
}

/**
 * Change notifications from the upstream: a channel per calendar, opened towards `address` with
 * a `token` the receiver checks, renewed (a new one opened, then the old stopped) before it ends.
 * A source without push is polled instead.
 */
export interface PushHooks {
  /** Where the upstream delivers, under PUBLIC_URL (e.g. '/api/google/push'). */
  readonly path: string;
  open(
    calendar: SyncCalendar,
    channel: { channelId: string; address: string; token: string },
  ): Promise<OpenedChannel>;
  /** Stops a channel; one the upstream no longer knows counts as stopped. */
  stop(calendar: SyncCalendar, channel: { channelId: string; resourceId: string }): Promise<void>;
}

export interface SyncSource {
  /** The provider whose calendars it syncs (`connections.provider`). */
  readonly provider: string;
  readonly format: MirrorFormat;
  /** One batch of a full sync: from the start when `pageToken` is null, else from there. */
  full(
    calendar: SyncCalendar,
    page: { window?: SyncWindow | undefined; pageToken: string | null },
    signal?: AbortSignal,
  ): Promise<SyncStep>;
  /** One batch of what changed since `cursor`: from the start when `pageToken` is null. */
  changes(
    calendar: SyncCalendar,
    page: { cursor: string; pageToken: string | null },
    signal?: AbortSignal,
  ): Promise<SyncStep>;
  /** What an error thrown while syncing the calendar means; null: thrown on as it is (a bug, an abort). */
  failure(error: unknown, calendar: SyncCalendar): SyncFailure | null;
  /** Change notifications, when the upstream has them. */
  readonly push?: PushHooks;
}
