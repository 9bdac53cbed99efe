/**
 * A CalDAV client (RFC 4791, RFC 6578, RFC 6764) over Node's HTTP with the scheduler's outbound
 * URL policy: every URL it is sent to (the one given, each redirect, each href on another host)
 * is checked with `checkTargetUrl` and connected to through the vetted addresses only.
 *
 * Hrefs are kept as the server wrote them and resolved against the URL that named them; they are
 * never made from UIDs (a new resource gets a random name). After a write the object is read
 * back, since servers rewrite what they are sent and its ETag with it.
 */
import type { TargetUrlPolicy } from '@calgate/scheduler';
import { collectionState, listEtags, syncCollection } from './collection-changes.ts';
import { discover, listCalendars, probeUrl } from './discovery.ts';
import { createObject, deleteObject, getObject, type UpdateOptions, updateObject } from './objects.ts';
import { calendarQuery, multiget, recurringObjects, uidIndex } from './reports.ts';
import { basicAuth, type DavSession, type RawResponse, request } from './transport.ts';

export interface CaldavCredentials {
  username: string;
  password: string;
}

export interface CaldavClientOptions {
  credentials: CaldavCredentials;
  /**
   * OUTBOUND_ALLOW_PRIVATE lets loopback and private servers through, and plain http to them;
   * plain http to a public address is refused unless `httpOnlyPrivate` is false (the password
   * would travel in clear).
   */
  policy: TargetUrlPolicy;
  /** Whole exchange per request; default 30 s. */
  timeoutMs?: number;
  /** Largest answer accepted; default 64 MiB. */
  maxResponseBytes?: number;
}

/** One calendar collection as discovery found it. */
export interface CaldavCalendar {
  /** Absolute URL of the collection. */
  url: string;
  displayName: string;
  description?: string;
  /** `#RRGGBB` (Apple's calendar-color, alpha dropped). */
  color?: string;
  /** The IANA zone of `calendar-timezone`, when it names or matches one. */
  timeZone?: string;
  /** From current-user-privilege-set: false when the account may only read. */
  writable: boolean;
  ctag?: string;
  syncToken?: string;
}

export interface CaldavAccount {
  principalUrl: string | undefined;
  homeSetUrls: string[];
  /** The first mailto: of calendar-user-address-set, if the server gives one. */
  accountEmail: string | undefined;
  calendars: CaldavCalendar[];
}

/** A calendar object resource. */
export interface CaldavObject {
  /** The href as the server wrote it. */
  href: string;
  /** `href` resolved to an absolute URL. */
  url: string;
  etag: string | undefined;
  data: string;
}

export interface CaldavEtag {
  href: string;
  url: string;
  etag: string | undefined;
}

export type SyncOutcome =
  | { kind: 'changes'; token: string | undefined; changed: CaldavEtag[]; removed: string[] }
  /** The server no longer honours the token (RFC 6578 valid-sync-token): start over. */
  | { kind: 'token-invalid' }
  /** The collection offers no sync-collection: compare getctag and ETags instead. */
  | { kind: 'unsupported' };

export interface CollectionState {
  ctag: string | undefined;
  syncToken: string | undefined;
}
/**
 * The client's operations live beside it by concern (transport, discovery, reports, collection
 * changes, objects); each sends through `request`, so a subclass overriding it sees every request.
 */
export class CaldavClient {
  readonly #options: CaldavClientOptions;
  readonly #authorization: string;
  readonly #session: DavSession;

  constructor(options: CaldavClientOptions) {
    this.#options = {
      ...options,
      policy: { ...options.policy, httpOnlyPrivate: options.policy.httpOnlyPrivate ?? true },
    };
    this.#authorization = basicAuth(options.credentials);
    this.#session = { request: (method, url, init) => this.request(method, url, init) };
  }

  /** One request, following redirects (each target checked); 401 → `needs_reauth`. */
  request(
    method: string,
    url: string,
    init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
  ): Promise<RawResponse> {
    return request(this.#options, this.#authorization, method, url, init);
  }

  /**
   * The account's calendars from any URL: a server root, `/.well-known/caldav`, a principal or
   * a calendar (RFC 6764 and RFC 4791).
   */
  discover(startUrl: string, signal?: AbortSignal): Promise<CaldavAccount> {
    return discover(this.#session, startUrl, signal);
  }

  /** PROPFIND depth 0 of one URL: what it is and where it points (principal, home sets). */
  probeUrl(url: string, signal?: AbortSignal) {
    return probeUrl(this.#session, url, signal);
  }

  /** The calendars (VEVENT collections) directly inside a calendar home. */
  listCalendars(homeUrl: string, signal?: AbortSignal): Promise<CaldavCalendar[]> {
    return listCalendars(this.#session, homeUrl, signal);
  }

  /**
   * Objects with a VEVENT overlapping [from, to). The server is asked for a day more on each
   * side: some (Radicale) compare floating and all-day times as UTC. Callers filter in the
   * calendar's zone.
   */
  calendarQuery(
    calendarUrl: string,
    from?: number,
    to?: number,
    signal?: AbortSignal,
  ): Promise<CaldavObject[]> {
    return calendarQuery(this.#session, calendarUrl, from, to, signal);
  }

  /**
   * Every object whose VEVENT has an RRULE or RDATE, whenever it starts: servers' time-range
   * filters cannot all be trusted with recurrence (Xandikos misses series that began before the
   * range), so a window read adds these and expands them itself.
   */
  recurringObjects(calendarUrl: string, signal?: AbortSignal): Promise<CaldavObject[]> {
    return recurringObjects(this.#session, calendarUrl, signal);
  }

  /**
   * The UID of every event object in a calendar, with its href, from one calendar-query: the
   * server is asked for the UIDs alone (partial calendar-data), and for whole objects where it
   * refuses that. An object whose data cannot be read is left out.
   */
  uidIndex(calendarUrl: string, signal?: AbortSignal): Promise<{ href: string; uid: string }[]> {
    return uidIndex(this.#session, calendarUrl, signal);
  }

  /** The named objects (hrefs as the server gave them); missing ones are left out. */
  multiget(calendarUrl: string, hrefs: readonly string[], signal?: AbortSignal): Promise<CaldavObject[]> {
    return multiget(this.#session, calendarUrl, hrefs, signal);
  }

  /** RFC 6578 sync-collection: changes since `token` (everything when undefined). */
  syncCollection(calendarUrl: string, token: string | undefined, signal?: AbortSignal): Promise<SyncOutcome> {
    return syncCollection(this.#session, calendarUrl, token, signal);
  }

  /** getctag and sync-token of a collection (either may be missing). */
  collectionState(calendarUrl: string, signal?: AbortSignal): Promise<CollectionState> {
    return collectionState(this.#session, calendarUrl, signal);
  }

  /** Every object's href and ETag (the fallback when sync-collection is not offered). */
  listEtags(calendarUrl: string, signal?: AbortSignal): Promise<CaldavEtag[]> {
    return listEtags(this.#session, calendarUrl, signal);
  }

  /** One object; `not_found` when it is gone. */
  get(href: string, base: string, signal?: AbortSignal): Promise<CaldavObject> {
    return getObject(this.#session, href, base, signal);
  }

  /**
   * Stores a new object in the calendar under `name` (a fresh random name when absent); returns
   * it as the server keeps it. An object already there is `already_exists`.
   */
  create(calendarUrl: string, data: string, name?: string): Promise<CaldavObject> {
    return createObject(this.#session, calendarUrl, data, name);
  }

  /**
   * Rewrites one object with `transform` under If-Match. On 412 (changed elsewhere) the object is
   * read again and `transform` applied to the new text once, unless the other change touched what
   * `transform` sets (`options.clash`); that, or a second 412, is a `conflict` naming the event.
   */
  update(
    href: string,
    base: string,
    transform: (data: string) => string | Promise<string>,
    options: UpdateOptions,
  ): Promise<CaldavObject> {
    return updateObject(this.#session, href, base, transform, options);
  }

  /** Removes an object; with `ifMatch`, only the version last read (412 → `precondition_failed`). */
  delete(href: string, base: string, options: { ifMatch?: string; label?: string } = {}): Promise<void> {
    return deleteObject(this.#session, href, base, options);
  }
}
