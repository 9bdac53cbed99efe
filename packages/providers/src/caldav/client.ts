/**
 * A CalDAV client (RFC 4791, RFC 6578, RFC 6764) over Node's HTTP with the scheduler's outbound
 * URL policy: every URL it is sent to (the one given, each redirect, each href on another host)
 * is checked with `checkTargetUrl` and connected to through the vetted addresses only.
 *
 * Hrefs are kept as the server wrote them and resolved against the URL that named them; they are
 * never made from UIDs (a new resource gets a random name). After a write the object is read
 * back, since servers rewrite what they are sent and its ETag with it.
 */
import { randomUUID } from 'node:crypto';
import { CalgateError, isCalgateError } from '@calgate/core';
import { checkTargetUrl, pinnedFetch, type TargetUrlPolicy } from '@calgate/scheduler';
import ICAL from 'ical.js';
import { ianaNameFor } from './ical/zones.ts';
import {
  calendarQueryBody,
  childNames,
  type DavResponse,
  errorConditions,
  foundProps,
  hrefsOf,
  type Multistatus,
  multigetBody,
  parseMultistatus,
  propertyQueryBody,
  propfindBody,
  syncCollectionBody,
  textOf,
  uidQueryBody,
  type XmlNode,
} from './xml.ts';

export interface CaldavCredentials {
  username: string;
  password: string;
}

export interface CaldavClientOptions {
  credentials: CaldavCredentials;
  /** OUTBOUND_ALLOW_PRIVATE lets loopback and private servers (and plain http) through. */
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

interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The URL that answered, after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

const CALENDAR_PROPS = [
  'd:resourcetype',
  'd:displayname',
  'c:calendar-description',
  'ical:calendar-color',
  'c:calendar-timezone',
  'd:current-user-privilege-set',
  'c:supported-calendar-component-set',
  'cs:getctag',
  'd:sync-token',
];

const WRITE_PRIVILEGES = new Set(['all', 'write', 'write-content', 'bind']);

function upstream(message: string, retry = true, status?: number): CalgateError {
  return new CalgateError('upstream_unavailable', message, {
    retry,
    ...(status === undefined ? {} : { context: { status } }),
  });
}

function basicAuth({ username, password }: CaldavCredentials): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export class CaldavClient {
  readonly #options: CaldavClientOptions;
  readonly #authorization: string;

  constructor(options: CaldavClientOptions) {
    this.#options = options;
    this.#authorization = basicAuth(options.credentials);
  }

  /** One request, following redirects (each target checked); 401 → `needs_reauth`. */
  async request(
    method: string,
    url: string,
    init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
  ): Promise<RawResponse> {
    let current = url;
    let currentMethod = method;
    let body = init.body;
    for (let hop = 0; ; hop += 1) {
      const checked = await checkTargetUrl(current, this.#options.policy);
      if (!checked.ok) {
        throw new CalgateError(
          checked.error.code,
          `The CalDAV server address ${new URL(current).origin} is refused: ${checked.error.message}.`,
          { retry: checked.error.retry, context: checked.error.context },
        );
      }
      const timeout = AbortSignal.timeout(this.#options.timeoutMs ?? 30_000);
      const signal = init.signal === undefined ? timeout : AbortSignal.any([timeout, init.signal]);
      const send = pinnedFetch(checked.value, {
        maxResponseBytes: this.#options.maxResponseBytes ?? 64 * 1024 * 1024,
      });
      let response: Response;
      let text: string;
      try {
        response = await send(current, {
          method: currentMethod,
          headers: {
            authorization: this.#authorization,
            'user-agent': 'Calgate-CalDAV',
            ...(body === undefined ? {} : { 'content-type': 'application/xml; charset=utf-8' }),
            ...init.headers,
          },
          ...(body === undefined ? {} : { body }),
          signal,
        });
        text = await response.text();
      } catch (cause) {
        if (init.signal?.aborted) {
          throw cause;
        }
        const code = (cause as { code?: unknown }).code;
        throw new CalgateError(
          'upstream_unavailable',
          timeout.aborted
            ? `The CalDAV server at ${new URL(current).origin} did not answer within ${Math.round((this.#options.timeoutMs ?? 30_000) / 1000)} s.`
            : `The CalDAV server at ${new URL(current).origin} could not be reached${typeof code === 'string' ? ` (${code})` : ''}.`,
          { retry: true, cause },
        );
      }
      const location = response.headers.get('location');
      if (REDIRECTS.has(response.status) && location !== null) {
        if (hop >= MAX_REDIRECTS) {
          throw upstream(`The CalDAV server redirected more than ${MAX_REDIRECTS} times.`, false);
        }
        current = new URL(location, current).toString();
        if (response.status === 303) {
          currentMethod = 'GET';
          body = undefined;
        }
        continue;
      }
      if (response.status === 401) {
        throw new CalgateError(
          'needs_reauth',
          'The CalDAV server refused the username or password; reconnect the account with the current password (an app-specific password for iCloud).',
          { context: { status: 401 } },
        );
      }
      return { status: response.status, headers: response.headers, body: text, url: current };
    }
  }

  async #dav(method: string, url: string, body: string, depth: '0' | '1', signal?: AbortSignal) {
    const response = await this.request(method, url, {
      headers: { depth },
      body,
      ...(signal === undefined ? {} : { signal }),
    });
    if (response.status === 404) {
      throw new CalgateError(
        'not_found',
        `The CalDAV server has nothing at ${new URL(response.url).pathname}.`,
      );
    }
    if (response.status === 403) {
      throw new CalgateError(
        'permission_denied',
        `The CalDAV server does not let this account read ${new URL(response.url).pathname}.`,
      );
    }
    if (response.status !== 207) {
      throw upstream(
        `The CalDAV server answered ${method} ${new URL(response.url).pathname} with HTTP ${response.status} instead of a multistatus.`,
        response.status >= 500,
        response.status,
      );
    }
    return { multistatus: parseMultistatus(response.body), url: response.url };
  }

  /**
   * The account's calendars from any URL: a server root, `/.well-known/caldav`, a principal or
   * a calendar (RFC 6764 and RFC 4791).
   */
  async discover(startUrl: string, signal?: AbortSignal): Promise<CaldavAccount> {
    const wellKnown = new URL('/.well-known/caldav', startUrl).toString();
    let probe: Awaited<ReturnType<CaldavClient['probeUrl']>>;
    try {
      probe = await this.probeUrl(startUrl, signal);
    } catch (error) {
      // A server root that is no WebDAV resource (404, 405, an HTML page): RFC 6764's well-known URL.
      if (
        !isCalgateError(error) ||
        !['not_found', 'upstream_unavailable'].includes(error.code) ||
        error.retry
      ) {
        throw error;
      }
      if (new URL(startUrl).pathname === '/.well-known/caldav') {
        throw error;
      }
      probe = await this.probeUrl(wellKnown, signal).catch(() => {
        throw error;
      });
    }
    if (probe.principal === undefined && !probe.isCalendar && probe.homeSets.length === 0) {
      if (new URL(probe.url).pathname !== '/.well-known/caldav') {
        const fallback = probe;
        probe = await this.probeUrl(wellKnown, signal).catch(() => fallback);
      }
    }
    if (probe.isCalendar) {
      const calendar = this.#calendarOf(probe.response, probe.url);
      let accountEmail: string | undefined;
      let principalUrl: string | undefined;
      if (probe.principal !== undefined) {
        principalUrl = probe.principal;
        accountEmail = (await this.#principal(probe.principal, signal).catch(() => undefined))?.email;
      }
      return { principalUrl, homeSetUrls: [], accountEmail, calendars: calendar ? [calendar] : [] };
    }
    let homeSetUrls = probe.homeSets;
    let accountEmail: string | undefined;
    const principalUrl = probe.principal ?? (probe.homeSets.length > 0 ? probe.url : undefined);
    if (probe.principal !== undefined) {
      const principal = await this.#principal(probe.principal, signal);
      homeSetUrls = principal.homeSets;
      accountEmail = principal.email;
    }
    if (homeSetUrls.length === 0) {
      throw new CalgateError(
        'not_found',
        `No CalDAV calendars were found from ${startUrl}: the server names no principal or calendar home there; give the server's CalDAV URL.`,
      );
    }
    const calendars: CaldavCalendar[] = [];
    for (const home of homeSetUrls) {
      calendars.push(...(await this.listCalendars(home, signal)));
    }
    return { principalUrl, homeSetUrls, accountEmail, calendars };
  }

  /** PROPFIND depth 0 of one URL: what it is and where it points (principal, home sets). */
  async probeUrl(url: string, signal?: AbortSignal) {
    const { multistatus, url: answered } = await this.#dav(
      'PROPFIND',
      url,
      propfindBody(['d:current-user-principal', 'c:calendar-home-set', ...CALENDAR_PROPS]),
      '0',
      signal,
    );
    const response = multistatus.responses[0];
    const props = response === undefined ? {} : foundProps(response);
    const base = response === undefined ? answered : new URL(response.href, answered).toString();
    const principalHref = hrefsOf(props['current-user-principal'])[0];
    return {
      url: base,
      response,
      isCalendar: childNames(props.resourcetype).includes('calendar'),
      principal: principalHref === undefined ? undefined : new URL(principalHref, answered).toString(),
      homeSets: hrefsOf(props['calendar-home-set']).map((h) => new URL(h, answered).toString()),
    };
  }

  async #principal(url: string, signal?: AbortSignal) {
    const { multistatus, url: answered } = await this.#dav(
      'PROPFIND',
      url,
      propfindBody(['c:calendar-home-set', 'c:calendar-user-address-set', 'd:displayname']),
      '0',
      signal,
    );
    const response = multistatus.responses[0];
    const props = response === undefined ? {} : foundProps(response);
    const email = hrefsOf(props['calendar-user-address-set'])
      .find((h) => /^mailto:/i.test(h))
      ?.replace(/^mailto:/i, '');
    return {
      homeSets: hrefsOf(props['calendar-home-set']).map((h) => new URL(h, answered).toString()),
      email,
    };
  }

  /** The calendars (VEVENT collections) directly inside a calendar home. */
  async listCalendars(homeUrl: string, signal?: AbortSignal): Promise<CaldavCalendar[]> {
    const { multistatus, url } = await this.#dav(
      'PROPFIND',
      homeUrl,
      propfindBody(CALENDAR_PROPS),
      '1',
      signal,
    );
    const out: CaldavCalendar[] = [];
    for (const response of multistatus.responses) {
      const calendar = this.#calendarOf(response, url);
      if (calendar !== undefined) {
        out.push(calendar);
      }
    }
    return out;
  }

  #calendarOf(response: DavResponse | undefined, base: string): CaldavCalendar | undefined {
    if (response === undefined) {
      return undefined;
    }
    const props = foundProps(response);
    if (!childNames(props.resourcetype).includes('calendar')) {
      return undefined;
    }
    const components = props['supported-calendar-component-set'];
    if (components !== undefined && components !== null && typeof components === 'object') {
      const comps = ((components as XmlNode).comp as XmlNode[] | undefined) ?? [];
      const names = comps.map((comp) => String(comp['@name'] ?? '').toUpperCase());
      if (names.length > 0 && !names.includes('VEVENT')) {
        return undefined;
      }
    }
    const url = new URL(response.href, base).toString();
    const displayName = textOf(props.displayname)?.trim();
    const calendar: CaldavCalendar = {
      url,
      displayName:
        displayName === undefined || displayName === '' ? decodeURIComponent(lastSegment(url)) : displayName,
      writable: isWritable(props['current-user-privilege-set']),
    };
    const description = textOf(props['calendar-description'])?.trim();
    if (description) {
      calendar.description = description;
    }
    const color = /^#?([0-9a-f]{6})/i.exec(textOf(props['calendar-color'])?.trim() ?? '');
    if (color !== null) {
      calendar.color = `#${color[1]?.toLowerCase()}`;
    }
    const zone = zoneOfCalendarTimezone(textOf(props['calendar-timezone']));
    if (zone !== undefined) {
      calendar.timeZone = zone;
    }
    const ctag = textOf(props.getctag)?.trim();
    if (ctag) {
      calendar.ctag = ctag;
    }
    const syncToken = textOf(props['sync-token'])?.trim();
    if (syncToken) {
      calendar.syncToken = syncToken;
    }
    return calendar;
  }

  /**
   * Objects with a VEVENT overlapping [from, to). The server is asked for a day more on each
   * side: some (Radicale) compare floating and all-day times as UTC. Callers filter in the
   * calendar's zone.
   */
  async calendarQuery(
    calendarUrl: string,
    from?: number,
    to?: number,
    signal?: AbortSignal,
  ): Promise<CaldavObject[]> {
    const day = 86_400_000;
    const { multistatus, url } = await this.#dav(
      'REPORT',
      calendarUrl,
      calendarQueryBody(
        from === undefined ? undefined : from - day,
        to === undefined ? undefined : to + day,
        true,
      ),
      '1',
      signal,
    );
    return objectsOf(multistatus.responses, url);
  }

  /**
   * Every object whose VEVENT has an RRULE or RDATE, whenever it starts: servers' time-range
   * filters cannot all be trusted with recurrence (Xandikos misses series that began before the
   * range), so a window read adds these and expands them itself.
   */
  async recurringObjects(calendarUrl: string, signal?: AbortSignal): Promise<CaldavObject[]> {
    const byHref = new Map<string, CaldavObject>();
    for (const name of ['RRULE', 'RDATE']) {
      const { multistatus, url } = await this.#dav(
        'REPORT',
        calendarUrl,
        propertyQueryBody(name),
        '1',
        signal,
      );
      for (const object of objectsOf(multistatus.responses, url)) {
        byHref.set(object.href, object);
      }
    }
    return [...byHref.values()];
  }

  /**
   * The UID of every event object in a calendar, with its href, from one calendar-query: the
   * server is asked for the UIDs alone (partial calendar-data), and for whole objects where it
   * refuses that. An object whose data cannot be read is left out.
   */
  async uidIndex(calendarUrl: string, signal?: AbortSignal): Promise<{ href: string; uid: string }[]> {
    let partial: { multistatus: Multistatus; url: string } | undefined;
    try {
      partial = await this.#dav('REPORT', calendarUrl, uidQueryBody(true), '1', signal);
    } catch (error) {
      if (!isCalgateError(error) || error.code === 'needs_reauth' || error.code === 'not_found') {
        throw error;
      }
    }
    if (partial === undefined) {
      const { multistatus, url } = await this.#dav('REPORT', calendarUrl, uidQueryBody(false), '1', signal);
      return uidsOf(objectsOf(multistatus.responses, url));
    }
    const out: { href: string; uid: string }[] = [];
    const unread: string[] = [];
    const collection = new URL(partial.url).pathname;
    for (const response of partial.multistatus.responses) {
      if (new URL(response.href, partial.url).pathname === collection) {
        continue;
      }
      const data = textOf(foundProps(response)['calendar-data']);
      const uid = data === undefined ? undefined : uidOfData(data);
      if (uid === undefined) {
        unread.push(response.href);
      } else {
        out.push({ href: response.href, uid });
      }
    }
    // A server that answers the partial request without the UIDs (Xandikos) is asked once more,
    // for those objects whole.
    if (unread.length > 0) {
      out.push(...uidsOf(await this.multiget(calendarUrl, unread, signal)));
    }
    return out;
  }

  /** The named objects (hrefs as the server gave them); missing ones are left out. */
  async multiget(
    calendarUrl: string,
    hrefs: readonly string[],
    signal?: AbortSignal,
  ): Promise<CaldavObject[]> {
    if (hrefs.length === 0) {
      return [];
    }
    const { multistatus, url } = await this.#dav('REPORT', calendarUrl, multigetBody(hrefs), '1', signal);
    return objectsOf(multistatus.responses, url);
  }

  /** RFC 6578 sync-collection: changes since `token` (everything when undefined). */
  async syncCollection(
    calendarUrl: string,
    token: string | undefined,
    signal?: AbortSignal,
  ): Promise<SyncOutcome> {
    const response = await this.request('REPORT', calendarUrl, {
      headers: { depth: '1' },
      body: syncCollectionBody(token),
      ...(signal === undefined ? {} : { signal }),
    });
    if (response.status !== 207) {
      const conditions = errorConditions(response.body);
      if (token !== undefined && conditions.includes('valid-sync-token')) {
        return { kind: 'token-invalid' };
      }
      if (
        conditions.includes('sync-traversal-supported') ||
        response.status === 501 ||
        (token === undefined &&
          (response.status === 403 || response.status === 405 || response.status === 400))
      ) {
        return { kind: 'unsupported' };
      }
      if (
        token !== undefined &&
        (response.status === 400 || response.status === 409 || response.status === 412)
      ) {
        return { kind: 'token-invalid' };
      }
      if (token !== undefined && response.status >= 500) {
        // Some servers (Xandikos) fail on a token they cannot use instead of naming the
        // precondition. When the collection itself still answers, the token was the trouble.
        const healthy = await this.collectionState(calendarUrl, signal).then(
          () => true,
          () => false,
        );
        if (healthy) {
          return { kind: 'token-invalid' };
        }
      }
      throw upstream(
        `The CalDAV server answered sync-collection with HTTP ${response.status}.`,
        response.status >= 500,
        response.status,
      );
    }
    const multistatus = parseMultistatus(response.body);
    const changed: CaldavEtag[] = [];
    const removed: string[] = [];
    const collection = new URL(response.url).pathname;
    for (const entry of multistatus.responses) {
      const entryUrl = new URL(entry.href, response.url);
      if (entryUrl.pathname === collection) {
        continue;
      }
      if (entry.status === 404) {
        removed.push(entry.href);
        continue;
      }
      const props = foundProps(entry);
      if (childNames(props.resourcetype).includes('collection')) {
        continue;
      }
      changed.push({ href: entry.href, url: entryUrl.toString(), etag: textOf(props.getetag)?.trim() });
    }
    return { kind: 'changes', token: multistatus.syncToken, changed, removed };
  }

  /** getctag and sync-token of a collection (either may be missing). */
  async collectionState(calendarUrl: string, signal?: AbortSignal): Promise<CollectionState> {
    const { multistatus } = await this.#dav(
      'PROPFIND',
      calendarUrl,
      propfindBody(['cs:getctag', 'd:sync-token']),
      '0',
      signal,
    );
    const response = multistatus.responses[0];
    const props = response === undefined ? {} : foundProps(response);
    const ctag = textOf(props.getctag)?.trim();
    const syncToken = textOf(props['sync-token'])?.trim();
    return { ctag: ctag || undefined, syncToken: syncToken || undefined };
  }

  /** Every object's href and ETag (the fallback when sync-collection is not offered). */
  async listEtags(calendarUrl: string, signal?: AbortSignal): Promise<CaldavEtag[]> {
    const { multistatus, url } = await this.#dav(
      'PROPFIND',
      calendarUrl,
      propfindBody(['d:getetag', 'd:resourcetype']),
      '1',
      signal,
    );
    const collection = new URL(url).pathname;
    const out: CaldavEtag[] = [];
    for (const entry of multistatus.responses) {
      const entryUrl = new URL(entry.href, url);
      const props = foundProps(entry);
      if (entryUrl.pathname === collection || childNames(props.resourcetype).includes('collection')) {
        continue;
      }
      out.push({ href: entry.href, url: entryUrl.toString(), etag: textOf(props.getetag)?.trim() });
    }
    return out;
  }

  /** One object; `not_found` when it is gone. */
  async get(href: string, base: string, signal?: AbortSignal): Promise<CaldavObject> {
    const url = new URL(href, base).toString();
    const response = await this.request('GET', url, signal === undefined ? {} : { signal });
    if (response.status === 404 || response.status === 410) {
      throw new CalgateError(
        'not_found',
        `The event at ${new URL(url).pathname} no longer exists on the CalDAV server.`,
      );
    }
    if (response.status !== 200) {
      throw upstream(
        `The CalDAV server answered GET with HTTP ${response.status}.`,
        response.status >= 500,
        response.status,
      );
    }
    return { href, url, etag: response.headers.get('etag') ?? undefined, data: response.body };
  }

  async #put(
    url: string,
    data: string,
    condition: { ifMatch: string } | { ifNoneMatch: '*' },
  ): Promise<number> {
    const response = await this.request('PUT', url, {
      headers: {
        'content-type': 'text/calendar; charset=utf-8',
        ...('ifMatch' in condition ? { 'if-match': condition.ifMatch } : { 'if-none-match': '*' }),
      },
      body: data,
    });
    if (response.status === 412) {
      return 412;
    }
    if (response.status === 403 || response.status === 405) {
      throw new CalgateError(
        'permission_denied',
        `The CalDAV server does not let this account write ${new URL(url).pathname} (HTTP ${response.status}).`,
      );
    }
    if (response.status < 200 || response.status >= 300) {
      const retry = response.status >= 500;
      throw new CalgateError(
        retry ? 'upstream_unavailable' : 'invalid_argument',
        `The CalDAV server refused the event (HTTP ${response.status}).`,
        { retry, context: { status: response.status } },
      );
    }
    return response.status;
  }

  /**
   * Stores a new object in the calendar under `name` (a fresh random name when absent); returns
   * it as the server keeps it. An object already there is `already_exists`.
   */
  async create(calendarUrl: string, data: string, name?: string): Promise<CaldavObject> {
    const base = calendarUrl.endsWith('/') ? calendarUrl : `${calendarUrl}/`;
    const href = new URL(encodeURIComponent(name ?? `${randomUUID()}.ics`), base).pathname;
    const url = new URL(href, base).toString();
    const status = await this.#put(url, data, { ifNoneMatch: '*' });
    if (status === 412) {
      throw new CalgateError('already_exists', `The CalDAV server already has an object at ${href}.`);
    }
    return this.get(href, base);
  }

  /**
   * Rewrites one object with `transform` under If-Match. On 412 (changed elsewhere) the object is
   * read again and `transform` applied to the new text once; a second 412 is a `conflict` naming
   * the event. `known` is the copy the caller already holds (else the object is read first).
   */
  async update(
    href: string,
    base: string,
    transform: (data: string) => string | Promise<string>,
    options: { label: string; known?: { etag: string; data: string } },
  ): Promise<CaldavObject> {
    let current = options.known ?? (await this.get(href, base));
    const url = new URL(href, base).toString();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (current.etag === undefined) {
        throw upstream(
          'The CalDAV server gives no ETag for the event, so it cannot be changed safely.',
          false,
        );
      }
      const status = await this.#put(url, await transform(current.data), { ifMatch: current.etag });
      if (status !== 412) {
        return this.get(href, base);
      }
      if (attempt === 0) {
        current = await this.get(href, base);
      }
    }
    throw new CalgateError(
      'conflict',
      `The event "${options.label}" was changed on the CalDAV server while Calgate was saving it; read it again and retry.`,
      { retry: true },
    );
  }

  /** Removes an object; with `ifMatch`, only the version last read (412 → `precondition_failed`). */
  async delete(
    href: string,
    base: string,
    options: { ifMatch?: string; label?: string } = {},
  ): Promise<void> {
    const url = new URL(href, base).toString();
    const response = await this.request('DELETE', url, {
      headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch },
    });
    if (response.status === 412) {
      throw new CalgateError(
        'precondition_failed',
        `The event ${options.label === undefined ? '' : `"${options.label}" `}was changed on the CalDAV server since it was read; read it again before deleting.`,
      );
    }
    if (response.status === 404 || response.status === 410) {
      throw new CalgateError(
        'not_found',
        `The event at ${new URL(url).pathname} no longer exists on the CalDAV server.`,
      );
    }
    if (response.status === 403 || response.status === 405) {
      throw new CalgateError(
        'permission_denied',
        `The CalDAV server does not let this account delete ${new URL(url).pathname}.`,
      );
    }
    if (response.status < 200 || response.status >= 300) {
      throw upstream(
        `The CalDAV server answered DELETE with HTTP ${response.status}.`,
        response.status >= 500,
        response.status,
      );
    }
  }
}

function lastSegment(url: string): string {
  const parts = new URL(url).pathname.split('/').filter((p) => p !== '');
  return parts[parts.length - 1] ?? '';
}

function isWritable(privilegeSet: unknown): boolean {
  if (privilegeSet === undefined || privilegeSet === null || typeof privilegeSet !== 'object') {
    // Not reported: assume the account may write; a refused write says so.
    return true;
  }
  const privileges = ((privilegeSet as XmlNode).privilege as unknown[] | undefined) ?? [];
  return privileges.some((privilege) => childNames(privilege).some((name) => WRITE_PRIVILEGES.has(name)));
}

function zoneOfCalendarTimezone(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') {
    return undefined;
  }
  const trimmed = text.trim();
  if (!trimmed.startsWith('BEGIN:')) {
    // RFC 7809's calendar-timezone-id style: a bare zone name.
    return ianaNameFor(trimmed);
  }
  try {
    const calendar = ICAL.Component.fromString(trimmed);
    const vtimezone = calendar.name === 'vtimezone' ? calendar : calendar.getFirstSubcomponent('vtimezone');
    const tzid = vtimezone?.getFirstPropertyValue('tzid');
    const location = vtimezone?.getFirstPropertyValue('x-lic-location');
    return (
      (typeof tzid === 'string' ? ianaNameFor(tzid) : undefined) ??
      (typeof location === 'string' ? ianaNameFor(location) : undefined)
    );
  } catch {
    return undefined;
  }
}

function objectsOf(responses: DavResponse[], base: string): CaldavObject[] {
  const out: CaldavObject[] = [];
  for (const response of responses) {
    const props = foundProps(response);
    const data = textOf(props['calendar-data']);
    if (data === undefined || data === '') {
      continue;
    }
    out.push({
      href: response.href,
      url: new URL(response.href, base).toString(),
      etag: textOf(props.getetag)?.trim(),
      data,
    });
  }
  return out;
}

function uidsOf(objects: readonly CaldavObject[]): { href: string; uid: string }[] {
  const out: { href: string; uid: string }[] = [];
  for (const object of objects) {
    const uid = uidOfData(object.data);
    if (uid !== undefined) {
      out.push({ href: object.href, uid });
    }
  }
  return out;
}

/** The UID of an object's events (all of one object's VEVENTs share it), read with ical.js. */
function uidOfData(data: string): string | undefined {
  try {
    const calendar = new ICAL.Component(ICAL.parse(data));
    for (const event of calendar.getAllSubcomponents('vevent')) {
      const uid = event.getFirstPropertyValue('uid');
      if (typeof uid === 'string' && uid !== '') {
        return uid;
      }
    }
  } catch {}
  return undefined;
}
