/**
 * The contract between Calgate's calendar service and an upstream calendar system.
 * Shapes follow Google Calendar API v3 (start/end objects, RFC 3339 times, exclusive all-day
 * end dates) so that tools speak one dialect whatever the provider.
 *
 * Providers throw `CalgateError` (from @calgate/core) with a meaningful code: `not_found`,
 * `invalid_argument`, `precondition_failed` (ETag mismatch), `already_exists`, `rate_limited`,
 * `upstream_unavailable`, `needs_reauth`. They never decide about grants: the caller has already
 * checked that the key may touch the calendar.
 */

/** `{dateTime, timeZone?}` for timed events, `{date}` (YYYY-MM-DD) for all-day events. */
export interface EventDateTime {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

export interface EventAttendee {
  email: string;
  displayName?: string;
  optional?: boolean;
  organizer?: boolean;
  self?: boolean;
  responseStatus?: 'needsAction' | 'declined' | 'tentative' | 'accepted';
  comment?: string;
}

export interface EventReminders {
  useDefault: boolean;
  overrides?: { method: 'email' | 'popup'; minutes: number }[];
}

export type EventStatus = 'confirmed' | 'tentative' | 'cancelled';
export type Transparency = 'opaque' | 'transparent';
export type Visibility = 'default' | 'public' | 'private' | 'confidential';

export interface CalendarEvent {
  id: string;
  status: EventStatus;
  summary?: string;
  description?: string;
  location?: string;
  start: EventDateTime;
  end: EventDateTime;
  /** RRULE/EXRULE/RDATE/EXDATE lines of a recurring series' master. */
  recurrence?: string[];
  /** For an instance of a recurring series: the master's id. */
  recurringEventId?: string;
  /** For an instance: the start it would have had by the rule. */
  originalStartTime?: EventDateTime;
  attendees?: EventAttendee[];
  organizer?: { email?: string; displayName?: string; self?: boolean };
  reminders?: EventReminders;
  transparency?: Transparency;
  visibility?: Visibility;
  colorId?: string;
  htmlLink?: string;
  iCalUID?: string;
  etag?: string;
  sequence?: number;
  created?: string;
  updated?: string;
}

/** What a caller supplies to create an event. */
export interface EventInput {
  /** A client-chosen id (base32hex, 5–1024 chars) makes the insert idempotent. */
  id?: string;
  summary?: string;
  description?: string;
  location?: string;
  start: EventDateTime;
  end: EventDateTime;
  recurrence?: string[];
  attendees?: EventAttendee[];
  reminders?: EventReminders;
  transparency?: Transparency;
  visibility?: Visibility;
  colorId?: string;
  status?: EventStatus;
  /** The iCalendar UID to keep (an import); the provider makes one when absent. */
  iCalUID?: string;
}

/** PATCH semantics: absent fields stay as they are. */
export type EventPatch = Partial<Omit<EventInput, 'id' | 'iCalUID'>>;

/** Identifies one calendar as the provider knows it. */
export interface CalendarRef {
  /** Calgate's id (`cal_…`). */
  id: string;
  /** The upstream id (Google's calendar id; for local calendars the same as `id`). */
  externalId: string;
  /** The calendar's IANA time zone, used for all-day events and floating times. */
  timeZone: string;
}

export interface ListEventsQuery {
  /** Inclusive lower bound on an event's end (RFC 3339). */
  timeMin?: string;
  /** Exclusive upper bound on an event's start (RFC 3339). */
  timeMax?: string;
  /** Page size the caller wants; the provider may return fewer. */
  maxResults: number;
  /**
   * Words every listed event matches, as @calgate/core's eventMatcher decides (summary,
   * description, location, attendees, organizer; word beginnings, accents and case folded).
   */
  query?: string;
  /** Expand recurring series into instances. */
  singleEvents: boolean;
  /** `startTime` needs singleEvents. */
  orderBy?: 'startTime' | 'updated';
  pageToken?: string;
  showDeleted?: boolean;
  /**
   * Read the calendar system itself, never a copy of it (booking's conflict checks): a mirrored
   * calendar is then read upstream.
   */
  fresh?: boolean;
  /**
   * The caller merges several calendars' listings in start order and takes a page that is
   * complete only up to its `completeBefore` (possibly empty) when that is cheaper: a mirror read
   * together with other calendars' then answers with what all of them together are known to
   * hold. Without it every page is full (or the last).
   */
  elastic?: boolean;
}

export interface EventPage {
  items: CalendarEvent[];
  nextPageToken?: string;
  /**
   * When the page was read from a mirror (a copy kept in sync): the sync it reflects (RFC 3339).
   * Absent when the calendar system itself answered.
   */
  syncedAt?: string;
  /**
   * For a listing in start order whose page may be short (a mirror read merged across calendars):
   * every event of the listing starting before this instant (ms since the epoch, all-day events
   * at their date's UTC midnight) is in this page or an earlier one, so the next page starts at
   * or after it. A merge across calendars need not read the next page before that.
   */
  completeBefore?: number;
}

export interface WriteOptions {
  /** The event's ETag as last read: the write fails with `precondition_failed` if it changed. */
  ifMatch?: string;
  sendUpdates?: 'all' | 'externalOnly' | 'none';
}

/** Upstream facts about a calendar, as discovered on a connection. */
export interface CalendarInfo {
  externalId: string;
  summary: string;
  description?: string;
  timeZone: string;
  primary: boolean;
  accessRole: 'owner' | 'writer' | 'reader' | 'freeBusyReader';
}

/** A busy interval in UTC (RFC 3339). */
export interface BusyInterval {
  start: string;
  end: string;
}

/** An event that makes its calendar busy, as a free/busy answer read from events names it. */
export interface BusyEvent {
  eventId: string;
  summary?: string;
  /** Epoch milliseconds (all-day events by the calendar's zone), not clipped to the window. */
  start: number;
  end: number;
}

/** Free/busy of one calendar: its busy intervals, or why they could not be read. */
export interface FreeBusyResult {
  /** Calgate's id of the calendar (`CalendarRef.id`). */
  calendarId: string;
  busy?: readonly BusyInterval[];
  /** `busy` as epoch milliseconds, when the provider has them at hand (callers need not parse). */
  intervals?: readonly { readonly start: number; readonly end: number }[];
  error?: { code: string; message: string };
  /**
   * When the answer was read from a mirror (a copy kept in sync): the sync it reflects (RFC 3339).
   * Absent when the calendar system itself answered.
   */
  syncedAt?: string;
  /**
   * With `withEvents`, when the answer was made from the calendar's events (a mirror, a local
   * calendar): those that make it busy, in start order. Absent when the upstream answered with
   * intervals only; a caller wanting names then lists the window.
   */
  events?: readonly BusyEvent[];
}

export interface FreeBusyOptions {
  /**
   * Ask the calendar system itself, never a copy of it (booking's conflict check): a mirrored
   * calendar is then read upstream.
   */
  fresh?: boolean;
  /** Also return the busy events (FreeBusyResult.events) when the answer is read from events. */
  withEvents?: boolean;
}

export interface ColorDefinition {
  background: string;
  foreground: string;
}

/** Colour ids usable as `colorId` on events and calendars. */
export interface ColorPalette {
  event: Record<string, ColorDefinition>;
  calendar: Record<string, ColorDefinition>;
}

export interface NewCalendar {
  summary: string;
  description?: string;
  timeZone?: string;
}

/**
 * Event ids may name a single instance of a recurring series (`<masterId>_<start>`, as Google
 * writes them): getEvent, patchEvent and deleteEvent then act on that instance alone.
 */
/** Where a provider's calendars live (a connection's `provider`). */
export type ProviderKind = 'google' | 'local' | 'microsoft' | 'caldav' | 'ics';

export interface CalendarProvider {
  readonly kind: ProviderKind;
  /**
   * Listings are answered from Postgres (Calgate's own calendars, mirrors), not by an upstream
   * API: fan-outs need not spare the account's quota.
   */
  readonly readsLocally?: boolean;
  listEvents(calendar: CalendarRef, query: ListEventsQuery, signal?: AbortSignal): Promise<EventPage>;
  /**
   * A page token listing from the `index`-th event of the page `pageToken` named (undefined: the
   * first page), where tokens are positions in the listing; undefined when they are not. A merge
   * that stops mid-page resumes there, rather than re-reading that page, whose length can differ
   * from one read to the next (see EventPage.completeBefore).
   */
  pageTokenAt?(pageToken: string | undefined, index: number): string | undefined;
  getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent>;
  insertEvent(calendar: CalendarRef, input: EventInput, options?: WriteOptions): Promise<CalendarEvent>;
  patchEvent(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options?: WriteOptions,
  ): Promise<CalendarEvent>;
  deleteEvent(calendar: CalendarRef, eventId: string, options?: WriteOptions): Promise<void>;
  /**
   * Busy intervals of several calendars in [timeMin, timeMax): opaque, non-cancelled events
   * (transparent ones are free; events the account declined are free). Failures are per calendar.
   */
  freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
    options?: FreeBusyOptions,
  ): Promise<FreeBusyResult[]>;
  /** Creates an event from a sentence ("Lunch with Ann tomorrow at noon"), read in the calendar's zone. */
  quickAdd(calendar: CalendarRef, text: string, options?: WriteOptions): Promise<CalendarEvent>;
  colors(signal?: AbortSignal): Promise<ColorPalette>;
  /**
   * The ids of the live events (singles and masters) carrying these iCalendar UIDs, by UID:
   * imports update what they wrote before. Absent: the provider cannot import.
   */
  findByICalUIDs?(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Where occurrences have ids of their own (Outlook), the id of the occurrence of a series whose
   * original start an instance key names (`20260107T080000Z`, `20260107` for all-day series), or
   * undefined when the series has none there. Such a provider stores a series' RRULE alone: an
   * import turns EXDATEs into deleted occurrences. Absent: occurrences are `<masterId>_<key>`.
   */
  occurrenceId?(calendar: CalendarRef, masterId: string, key: string): Promise<string | undefined>;
  /**
   * Stored events (singles and masters) by id in one request, leaving out ids it does not hold:
   * an import compares many at once. Optional (getEvent one by one otherwise).
   */
  getEvents?(calendar: CalendarRef, ids: readonly string[]): Promise<Map<string, CalendarEvent>>;
  /** Creates many events at once, all or none (imports); the ids made, in order. Optional. */
  insertEvents?(calendar: CalendarRef, inputs: readonly EventInput[]): Promise<string[]>;
  /** Creates a calendar on this provider's account (Google OAuth only). */
  createCalendar?(input: NewCalendar): Promise<CalendarInfo>;
}
