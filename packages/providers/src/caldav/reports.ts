/**
 * Reading calendar objects with REPORTs: a time range, every recurring object, the UID index
 * and multiget by href.
 */
import { isCalgateError } from '@calgate/core';
import ICAL from 'ical.js';
import type { CaldavObject } from './client.ts';
import { type DavSession, dav } from './transport.ts';
import {
  calendarQueryBody,
  type DavResponse,
  foundProps,
  type Multistatus,
  multigetBody,
  propertyQueryBody,
  textOf,
  uidQueryBody,
} from './xml.ts';

/**
 * Objects with a VEVENT overlapping [from, to). The server is asked for a day more on each
 * side: some (Radicale) compare floating and all-day times as UTC. Callers filter in the
 * calendar's zone.
 */
export async function calendarQuery(
  session: DavSession,
  calendarUrl: string,
  from?: number,
  to?: number,
  signal?: AbortSignal,
): Promise<CaldavObject[]> {
  const day = 86_400_000;
  const { multistatus, url } = await dav(
    session,
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
export async function recurringObjects(
  session: DavSession,
  calendarUrl: string,
  signal?: AbortSignal,
): Promise<CaldavObject[]> {
  const byHref = new Map<string, CaldavObject>();
  for (const name of ['RRULE', 'RDATE']) {
    const { multistatus, url } = await dav(
      session,
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
export async function uidIndex(
  session: DavSession,
  calendarUrl: string,
  signal?: AbortSignal,
): Promise<{ href: string; uid: string }[]> {
  let partial: { multistatus: Multistatus; url: string } | undefined;
  try {
    partial = await dav(session, 'REPORT', calendarUrl, uidQueryBody(true), '1', signal);
  } catch (error) {
    if (!isCalgateError(error) || error.code === 'needs_reauth' || error.code === 'not_found') {
      throw error;
    }
  }
  if (partial === undefined) {
    const { multistatus, url } = await dav(session, 'REPORT', calendarUrl, uidQueryBody(false), '1', signal);
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
    out.push(...uidsOf(await multiget(session, calendarUrl, unread, signal)));
  }
  return out;
}

/** The named objects (hrefs as the server gave them); missing ones are left out. */
export async function multiget(
  session: DavSession,
  calendarUrl: string,
  hrefs: readonly string[],
  signal?: AbortSignal,
): Promise<CaldavObject[]> {
  if (hrefs.length === 0) {
    return [];
  }
  const { multistatus, url } = await dav(session, 'REPORT', calendarUrl, multigetBody(hrefs), '1', signal);
  return objectsOf(multistatus.responses, url);
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
