/**
 * Discovery (RFC 6764, RFC 4791): from any URL to the principal, its calendar homes and their
 * VEVENT calendars with name, colour, zone, write access and sync state.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import ICAL from 'ical.js';
import type { CaldavAccount, CaldavCalendar } from './client.ts';
import { ianaNameFor } from './ical/zones.ts';
import { type DavSession, dav } from './transport.ts';
import {
  childNames,
  type DavResponse,
  foundProps,
  hrefsOf,
  propfindBody,
  textOf,
  type XmlNode,
} from './xml.ts';

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
/**
 * The account's calendars from any URL: a server root, `/.well-known/caldav`, a principal or
 * a calendar (RFC 6764 and RFC 4791).
 */
export async function discover(
  session: DavSession,
  startUrl: string,
  signal?: AbortSignal,
): Promise<CaldavAccount> {
  const wellKnown = new URL('/.well-known/caldav', startUrl).toString();
  let probe: Awaited<ReturnType<typeof probeUrl>>;
  try {
    probe = await probeUrl(session, startUrl, signal);
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
    probe = await probeUrl(session, wellKnown, signal).catch(() => {
      throw error;
    });
  }
  if (probe.principal === undefined && !probe.isCalendar && probe.homeSets.length === 0) {
    if (new URL(probe.url).pathname !== '/.well-known/caldav') {
      const fallback = probe;
      probe = await probeUrl(session, wellKnown, signal).catch(() => fallback);
    }
  }
  if (probe.isCalendar) {
    const calendar = calendarOf(probe.response, probe.url);
    let accountEmail: string | undefined;
    let principalUrl: string | undefined;
    if (probe.principal !== undefined) {
      principalUrl = probe.principal;
      accountEmail = (await readPrincipal(session, probe.principal, signal).catch(() => undefined))?.email;
    }
    return { principalUrl, homeSetUrls: [], accountEmail, calendars: calendar ? [calendar] : [] };
  }
  let homeSetUrls = probe.homeSets;
  let accountEmail: string | undefined;
  const principalUrl = probe.principal ?? (probe.homeSets.length > 0 ? probe.url : undefined);
  if (probe.principal !== undefined) {
    const principal = await readPrincipal(session, probe.principal, signal);
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
    calendars.push(...(await listCalendars(session, home, signal)));
  }
  return { principalUrl, homeSetUrls, accountEmail, calendars };
}

/** PROPFIND depth 0 of one URL: what it is and where it points (principal, home sets). */
export async function probeUrl(session: DavSession, url: string, signal?: AbortSignal) {
  const { multistatus, url: answered } = await dav(
    session,
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

async function readPrincipal(session: DavSession, url: string, signal?: AbortSignal) {
  const { multistatus, url: answered } = await dav(
    session,
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
export async function listCalendars(
  session: DavSession,
  homeUrl: string,
  signal?: AbortSignal,
): Promise<CaldavCalendar[]> {
  const { multistatus, url } = await dav(
    session,
    'PROPFIND',
    homeUrl,
    propfindBody(CALENDAR_PROPS),
    '1',
    signal,
  );
  const out: CaldavCalendar[] = [];
  for (const response of multistatus.responses) {
    const calendar = calendarOf(response, url);
    if (calendar !== undefined) {
      out.push(calendar);
    }
  }
  return out;
}

function calendarOf(response: DavResponse | undefined, base: string): CaldavCalendar | undefined {
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
