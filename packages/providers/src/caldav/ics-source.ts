/**
 * The mirror's sync source for a subscribed iCalendar feed (provider `ics`): a feed has no change
 * log, so each sync asks the feed with its validators (If-None-Match / If-Modified-Since). A 304
 * changes nothing; a new body is a full sync of the whole feed (rows the feed no longer has are
 * swept). The cursor keeps the validators and when the feed may next be asked: the refresh
 * interval, which the feed's REFRESH-INTERVAL or X-PUBLISHED-TTL may lengthen (never below the
 * floor).
 */
import { createHash } from 'node:crypto';
import { CalgateError, isCalgateError } from '@calgate/core';
import type { TargetUrlPolicy } from '@calgate/scheduler';
import ICAL from 'ical.js';
import { CALENDAR_EVENT_FORMAT } from '../mirror/format.ts';
import type { SyncCalendar, SyncSource, SyncStep } from '../mirror/source.ts';
import type { CalendarEvent } from '../types.ts';
import { fetchFeed } from './feed.ts';
import { expandResource, instanceKey, resourceMaster } from './ical/expand.ts';
import { instantOf, parseCalendarText, readTime, statusOf } from './ical/read.ts';

export interface IcsSourceOptions {
  url: string;
  policy: TargetUrlPolicy;
  /** The calendar's zone: floating times and dates are read there. */
  timeZone: string;
  /** The shortest interval between two asks of the feed (ms). */
  floorMs: number;
  /** The interval when the feed names none longer (ms). */
  intervalMs: number;
  now?: () => number;
}

/** What a feed's cursor keeps between syncs. */
export interface IcsCursor {
  etag?: string | undefined;
  lastModified?: string | undefined;
  /** Epoch ms before which the feed is not asked again. */
  refreshAfter: number;
}

export function readIcsCursor(cursor: string): IcsCursor | undefined {
  try {
    const parsed = JSON.parse(cursor) as IcsCursor;
    return typeof parsed.refreshAfter === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A Calgate event id (base32hex) for a UID: UIDs hold characters event ids may not. */
export function icsEventId(uid: string): string {
  const digest = createHash('sha256').update(uid, 'utf8').digest();
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  let out = '';
  for (let i = 0; i < 26; i++) {
    out += alphabet[(digest[i] as number) % 32];
  }
  return out;
}

/** REFRESH-INTERVAL (RFC 7986) or X-PUBLISHED-TTL, in ms, when the feed names one. */
function declaredInterval(calendar: ICAL.Component): number | undefined {
  for (const name of ['refresh-interval', 'x-published-ttl']) {
    const value = calendar.getFirstPropertyValue(name);
    const duration =
      value instanceof ICAL.Duration
        ? value
        : typeof value === 'string'
          ? (() => {
              try {
                return ICAL.Duration.fromString(value);
              } catch {
                return undefined;
              }
            })()
          : undefined;
    if (duration !== undefined && !duration.isNegative) {
      return duration.toSeconds() * 1000;
    }
  }
  return undefined;
}

/** Every event of a feed as the mirror keeps it: masters and singles, and overrides as exceptions. */
export function feedEvents(text: string, timeZone: string): { events: CalendarEvent[]; interval?: number } {
  const parsed = parseCalendarText(text, timeZone);
  const events: CalendarEvent[] = [];
  for (const resource of parsed.resources) {
    if (resource.uid === '') {
      continue;
    }
    const id = icsEventId(resource.uid);
    try {
      const master = resourceMaster(resource, id);
      if (master === undefined || master.status === 'cancelled') {
        continue;
      }
      events.push(master);
      for (const override of resource.overrides) {
        const rid = readTime(override, 'recurrence-id', resource.zones);
        if (rid === undefined) {
          continue;
        }
        const instance = `${id}_${instanceKey(rid, rid.allDay ? rid.naive : instantOf(rid))}`;
        if (statusOf(override) === 'cancelled') {
          events.push({
            id: instance,
            status: 'cancelled',
            recurringEventId: id,
            start: master.start,
            end: master.end,
          });
          continue;
        }
        const [placed] = expandResource(
          { ...resource, master: undefined, overrides: [override] },
          { eventId: id },
        );
        if (placed !== undefined) {
          events.push({ ...placed, id: instance, recurringEventId: id });
        }
      }
    } catch (error) {
      // One event a feed wrote wrongly does not stop the others from being read.
      if (!isCalgateError(error)) {
        throw error;
      }
    }
  }
  const interval = declaredInterval(parsed.calendar);
  return interval === undefined ? { events } : { events, interval };
}

/** A sync source over one feed; see the module comment. */
export function icsSyncSource(options: IcsSourceOptions): SyncSource {
  const now = options.now ?? Date.now;
  /** A body a `changes` call fetched, which the full sync it asks for then reads. */
  let pending: { text: string; etag?: string | undefined; lastModified?: string | undefined } | undefined;
  const cursorFor = (etag: string | undefined, lastModified: string | undefined, interval?: number) =>
    JSON.stringify({
      etag,
      lastModified,
      refreshAfter: now() + Math.max(options.floorMs, interval ?? 0, options.intervalMs),
    } satisfies IcsCursor);
  return {
    provider: 'ics',
    format: CALENDAR_EVENT_FORMAT,
    async full(_calendar: SyncCalendar, _page, signal): Promise<SyncStep> {
      let body = pending;
      pending = undefined;
      if (body === undefined) {
        const fetched = await fetchFeed(options.url, { policy: options.policy, signal });
        if (fetched.status !== 'fetched') {
          throw new CalgateError(
            'upstream_unavailable',
            'The feed answered 304 to a request without validators.',
          );
        }
        body = fetched;
      }
      const { events, interval } = feedEvents(body.text, options.timeZone);
      return {
        kind: 'batch',
        upserts: events.map((event) => CALENDAR_EVENT_FORMAT.toMirrorEvent(event)),
        removals: [],
        received: events.length,
        next: { cursor: cursorFor(body.etag, body.lastModified, interval) },
      };
    },
    async changes(_calendar: SyncCalendar, page, signal): Promise<SyncStep> {
      const cursor = readIcsCursor(page.cursor);
      if (cursor === undefined) {
        return { kind: 'expired' };
      }
      const unchanged = (next: string): SyncStep => ({
        kind: 'batch',
        upserts: [],
        removals: [],
        received: 0,
        next: { cursor: next },
      });
      if (now() < cursor.refreshAfter) {
        return unchanged(page.cursor);
      }
      const fetched = await fetchFeed(options.url, {
        policy: options.policy,
        etag: cursor.etag,
        lastModified: cursor.lastModified,
        signal,
      });
      if (fetched.status === 'unchanged') {
        return unchanged(cursorFor(cursor.etag, cursor.lastModified));
      }
      // A new body: the engine starts a full sync, which reads this body rather than asking again.
      pending = fetched;
      return { kind: 'expired' };
    },
    failure(error) {
      if (isCalgateError(error)) {
        return { message: error.message, error };
      }
      return null;
    },
  };
}
