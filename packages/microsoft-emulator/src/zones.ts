/**
 * Time zones as Graph takes them: every Windows zone name ("W. Europe Standard Time") and a
 * fixed list of IANA names (Graph's documented "additional time zones"); any other IANA name,
 * such as Europe/Amsterdam, is refused. Windows names map to IANA through CLDR's windowsZones
 * table (the zone of territory 001), which is also how answers name a zone.
 */
import { createRequire } from 'node:module';

interface WindowsZonesFile {
  supplemental: {
    windowsZones: { mapTimezones: { mapZone: { _other: string; _type: string; _territory: string } }[] };
  };
}

const table = createRequire(import.meta.url)('cldr-core/supplemental/windowsZones.json') as WindowsZonesFile;

/** Windows name → the IANA zone CLDR gives for territory 001. */
const WINDOWS_TO_IANA = new Map<string, string>();
/** IANA zone (any listed for any territory) → Windows name. */
const IANA_TO_WINDOWS = new Map<string, string>();
for (const { mapZone } of table.supplemental.windowsZones.mapTimezones) {
  if (mapZone._territory === '001') {
    WINDOWS_TO_IANA.set(mapZone._other, mapZone._type);
  }
  for (const zone of mapZone._type.split(' ')) {
    if (!IANA_TO_WINDOWS.has(zone)) {
      IANA_TO_WINDOWS.set(zone, mapZone._other);
    }
  }
}

/** The IANA names Graph accepts besides Windows names (its dateTimeTimeZone reference). */
export const GRAPH_IANA_ZONES: ReadonlySet<string> = new Set(
  `Etc/GMT+12 Etc/GMT+11 Pacific/Honolulu America/Anchorage America/Santa_Isabel America/Los_Angeles
  America/Phoenix America/Chihuahua America/Denver America/Guatemala America/Chicago America/Mexico_City
  America/Regina America/Bogota America/New_York America/Indiana/Indianapolis America/Caracas
  America/Asuncion America/Halifax America/Cuiaba America/La_Paz America/Santiago America/St_Johns
  America/Sao_Paulo America/Argentina/Buenos_Aires America/Cayenne America/Godthab America/Montevideo
  America/Bahia Etc/GMT+2 Atlantic/Azores Atlantic/Cape_Verde Africa/Casablanca Etc/GMT Europe/London
  Atlantic/Reykjavik Europe/Berlin Europe/Budapest Europe/Paris Europe/Warsaw Africa/Lagos
  Africa/Windhoek Europe/Bucharest Asia/Beirut Africa/Cairo Asia/Damascus Africa/Johannesburg
  Europe/Kyiv Europe/Kiev Europe/Istanbul Asia/Jerusalem Asia/Amman Asia/Baghdad Europe/Kaliningrad
  Asia/Riyadh Africa/Nairobi Asia/Tehran Asia/Dubai Asia/Baku Europe/Moscow Indian/Mauritius
  Asia/Tbilisi Asia/Yerevan Asia/Kabul Asia/Karachi Asia/Tashkent Asia/Kolkata Asia/Colombo
  Asia/Kathmandu Asia/Almaty Asia/Dhaka Asia/Yekaterinburg Asia/Yangon Asia/Rangoon Asia/Bangkok
  Asia/Novosibirsk Asia/Shanghai Asia/Krasnoyarsk Asia/Singapore Australia/Perth Asia/Taipei
  Asia/Ulaanbaatar Asia/Irkutsk Asia/Tokyo Asia/Seoul Australia/Adelaide Australia/Darwin
  Australia/Brisbane Australia/Sydney Pacific/Port_Moresby Australia/Hobart Asia/Yakutsk
  Pacific/Guadalcanal Asia/Vladivostok Pacific/Auckland Etc/GMT-12 Pacific/Fiji Asia/Magadan
  Pacific/Tongatapu Pacific/Apia Pacific/Kiritimati`.split(/\s+/),
);

/** A zone Graph accepts, resolved for computing: `{name as given, iana}`; undefined when refused. */
export function acceptZone(name: string): { name: string; iana: string } | undefined {
  const windows = WINDOWS_TO_IANA.get(name);
  if (windows !== undefined) {
    return { name, iana: windows === 'Etc/UTC' || windows === 'Etc/GMT' ? 'UTC' : windows };
  }
  if (GRAPH_IANA_ZONES.has(name)) {
    return { name, iana: name };
  }
  return undefined;
}

/** CLDR's canonical id for an IANA name (Asia/Kolkata → Asia/Calcutta), as ICU resolves it. */
function canonical(iana: string): string {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: iana }).resolvedOptions().timeZone;
  } catch {
    return iana;
  }
}

/** The Windows name for an IANA zone (how mailboxSettings names it); the IANA name when CLDR has none. */
export function windowsName(iana: string): string {
  if (iana === 'UTC' || iana === 'Etc/UTC') {
    return 'UTC';
  }
  return IANA_TO_WINDOWS.get(iana) ?? IANA_TO_WINDOWS.get(canonical(iana)) ?? iana;
}

export function isWindowsZone(name: string): boolean {
  return WINDOWS_TO_IANA.has(name);
}
