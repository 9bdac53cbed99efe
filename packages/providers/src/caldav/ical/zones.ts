/**
 * Time zones of iCalendar objects: a TZID names an IANA zone (directly, behind a vendor prefix
 * such as `/mozilla.org/20050126_1/Europe/Berlin`, or through the VTIMEZONE's X-LIC-LOCATION), a
 * Windows zone (`W. Europe Standard Time`, mapped with the CLDR table Outlook's zones use, `microsoft/zones.ts`), or only
 * the VTIMEZONE in the object, whose own rules ical.js applies. Times without a zone (floating)
 * and TZIDs that name nothing known are read in the calendar's zone.
 */
import {
  canonicalTimeZone,
  formatInstant,
  formatNaiveMs,
  fromNaiveMs,
  isValidTimeZone,
  offsetMsAt,
} from '@calgate/core';
import ICAL from 'ical.js';
import { ianaZoneFor } from '../../microsoft/zones.ts';

/** How wall-clock readings of one zone become instants and back. */
export interface Zone {
  /** The IANA name, or undefined for a VTIMEZONE that matches no IANA zone. */
  readonly iana: string | undefined;
  /** The TZID as the object wrote it (the IANA name for floating and `Z` times). */
  readonly tzid: string;
  /** Naive milliseconds (wall-clock read as if UTC) → epoch ms. */
  toInstant(naive: number): number;
  /** Epoch ms → naive milliseconds. */
  toNaive(instant: number): number;
}

const ianaZones = new Map<string, Zone>();

/** The zone of an IANA name (validated by the caller). */
export function ianaZone(name: string): Zone {
  let zone = ianaZones.get(name);
  if (zone === undefined) {
    zone = {
      iana: name,
      tzid: name,
      toInstant: (naive) => fromNaiveMs(naive, name),
      toNaive: (instant) => instant + offsetMsAt(instant, name),
    };
    ianaZones.set(name, zone);
  }
  return zone;
}

export const UTC_ZONE = ianaZone('UTC');

const namesByTzid = new Map<string, string | undefined>();
const NAME_CACHE_MAX = 2000;

/** An IANA name for a TZID as calendar software writes them, or undefined. */
export function ianaNameFor(tzid: string): string | undefined {
  if (namesByTzid.has(tzid)) {
    return namesByTzid.get(tzid);
  }
  const name = resolveIanaName(tzid);
  if (namesByTzid.size >= NAME_CACHE_MAX) {
    namesByTzid.clear();
  }
  namesByTzid.set(tzid, name);
  return name;
}

function resolveIanaName(tzid: string): string | undefined {
  const trimmed = tzid.trim().replace(/^"|"$/g, '');
  if (trimmed === '') {
    return undefined;
  }
  const direct = canonical(trimmed);
  if (direct !== undefined) {
    return direct;
  }
  // Vendor prefixes: `/mozilla.org/20050126_1/America/New_York`, `/freeassociation.sourceforge.net/Tzfile/Europe/Paris`.
  const parts = trimmed.split('/').filter((part) => part !== '');
  for (let i = 1; i < parts.length; i += 1) {
    const tail = canonical(parts.slice(i).join('/'));
    if (tail?.includes('/')) {
      return tail;
    }
  }
  const windows = ianaZoneFor(trimmed);
  return windows.ok ? canonical(windows.value) : undefined;
}

function canonical(name: string): string | undefined {
  if (!isValidTimeZone(name)) {
    return undefined;
  }
  const checked = canonicalTimeZone(name);
  return checked.ok ? checked.value : undefined;
}

function naiveOf(time: ICAL.Time): number {
  return Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
}

/** A VTIMEZONE's own rules, applied by ical.js. */
function customZone(tzid: string, component: ICAL.Component): Zone {
  const timezone = new ICAL.Timezone(component);
  return {
    iana: undefined,
    tzid,
    toInstant(naive) {
      const d = new Date(naive);
      const time = ICAL.Time.fromData(
        {
          year: d.getUTCFullYear(),
          month: d.getUTCMonth() + 1,
          day: d.getUTCDate(),
          hour: d.getUTCHours(),
          minute: d.getUTCMinutes(),
          second: d.getUTCSeconds(),
          isDate: false,
        },
        timezone,
      );
      return time.toUnixTime() * 1000;
    },
    toNaive(instant) {
      const utc = ICAL.Time.fromJSDate(new Date(Math.floor(instant / 1000) * 1000), true);
      return naiveOf(utc.convertToZone(timezone)) + (instant - Math.floor(instant / 1000) * 1000);
    },
  };
}

/** The zones one VCALENDAR refers to, resolved once. */
export class ZoneTable {
  readonly calendarZone: Zone;
  readonly #vtimezones = new Map<string, ICAL.Component>();
  readonly #resolved = new Map<string, Zone>();

  constructor(calendar: ICAL.Component | undefined, calendarZone: string) {
    this.calendarZone = ianaZone(calendarZone);
    for (const vtimezone of calendar?.getAllSubcomponents('vtimezone') ?? []) {
      const tzid = vtimezone.getFirstPropertyValue('tzid');
      if (typeof tzid === 'string') {
        this.#vtimezones.set(tzid, vtimezone);
      }
    }
  }

  /** The zone a TZID parameter names; floating times pass undefined. */
  zoneOf(tzid: string | undefined): Zone {
    if (tzid === undefined) {
      return this.calendarZone;
    }
    let zone = this.#resolved.get(tzid);
    if (zone === undefined) {
      zone = this.#resolve(tzid);
      this.#resolved.set(tzid, zone);
    }
    return zone;
  }

  /** Whether the TZID is known to the object or to the IANA database. */
  knows(tzid: string): boolean {
    return this.#vtimezones.has(tzid) || ianaNameFor(tzid) !== undefined;
  }

  #resolve(tzid: string): Zone {
    const iana = ianaNameFor(tzid);
    if (iana !== undefined) {
      return ianaZone(iana);
    }
    const vtimezone = this.#vtimezones.get(tzid);
    if (vtimezone !== undefined) {
      const location = vtimezone.getFirstPropertyValue('x-lic-location');
      const named = typeof location === 'string' ? ianaNameFor(location) : undefined;
      if (named !== undefined) {
        return ianaZone(named);
      }
      return customZone(tzid, vtimezone);
    }
    return this.calendarZone;
  }
}

/** `YYYY-MM-DDTHH:MM:SS±HH:MM` of an instant in a zone (the zone's own offset for custom zones). */
export function formatInZone(instant: number, zone: Zone): string {
  if (zone.iana !== undefined) {
    return formatInstant(instant, zone.iana);
  }
  const naive = zone.toNaive(instant);
  const offsetMinutes = Math.round((naive - instant) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${formatNaiveMs(naive).slice(0, 19)}${sign}${hh}:${mm}`;
}
