/**
 * Windows time-zone names ↔ IANA zones, from CLDR's windowsZones table (the `cldr-core`
 * package, Unicode's own data). Graph answers Windows names ("W. Europe Standard Time") and
 * accepts Windows names plus only a fixed handful of IANA names (Europe/Amsterdam is refused),
 * so Calgate always writes the Windows name and reads either kind.
 */
import {
  CalgateError,
  canonicalTimeZone,
  err,
  isValidTimeZone,
  ok,
  type Result,
  validateTimeZone,
} from '@calgate/core';
import windowsZones from 'cldr-core/supplemental/windowsZones.json' with { type: 'json' };

/** What Graph says for UTC besides the Windows name `UTC`. */
const UTC_NAMES = new Set([
  'UTC',
  'Etc/UTC',
  'Etc/GMT',
  'GMT',
  'tzone://Microsoft/Utc',
  'Coordinated Universal Time',
]);

/** The name of Outlook's zones that have no Windows id (a user's own DST rules). */
const CUSTOM_NAMES = new Set(['tzone://Microsoft/Custom', 'Customized Time Zone']);

interface Tables {
  /** Windows name → its IANA zone for territory 001 (the zone CLDR names for the whole Windows zone). */
  toIana: Map<string, string>;
  /** IANA zone as CLDR writes it → Windows name; the 001 entry wins over a territory's. */
  toWindows: Map<string, string>;
  /** Windows names in lower case → as written, for reading case-insensitively. */
  windowsByLower: Map<string, string>;
}

/** The zone's canonical name as this runtime's ICU knows it (Europe/Kyiv ↔ Europe/Kiev …), or undefined. */
function canonical(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

let tables: Tables | undefined;

function load(): Tables {
  if (tables !== undefined) {
    return tables;
  }
  const toIana = new Map<string, string>();
  const toWindows = new Map<string, string>();
  const windowsByLower = new Map<string, string>();
  const entries = windowsZones.supplemental.windowsZones.mapTimezones;
  // 001 first, so a zone's own Windows name is the one CLDR gives for the whole zone.
  const ordered = [
    ...entries.filter((entry) => entry.mapZone._territory === '001'),
    ...entries.filter((entry) => entry.mapZone._territory !== '001'),
  ];
  for (const { mapZone } of ordered) {
    const windows = mapZone._other;
    const zones = mapZone._type.split(' ').filter(Boolean);
    windowsByLower.set(windows.toLowerCase(), windows);
    if (mapZone._territory === '001' && zones[0] !== undefined && !toIana.has(windows)) {
      toIana.set(windows, zones[0]);
    }
    for (const zone of zones) {
      if (!toWindows.has(zone)) {
        toWindows.set(zone, windows);
      }
    }
  }
  tables = { toIana, toWindows, windowsByLower };
  return tables;
}

let byCanonical: Map<string, string> | undefined;

/**
 * The table keyed by ICU's canonical names, built on the first zone that neither its own name
 * nor its canonical name finds (an ICU name CLDR's table spells differently). Building it asks
 * ICU about every zone of the table, so it is left out of the common path.
 */
function canonicalTable(): Map<string, string> {
  if (byCanonical === undefined) {
    byCanonical = new Map();
    for (const [zone, windows] of load().toWindows) {
      const name = canonical(zone);
      if (name !== undefined && !byCanonical.has(name)) {
        byCanonical.set(name, windows);
      }
    }
  }
  return byCanonical;
}

/** Every Windows zone name CLDR knows, as written. */
export function windowsZoneNames(): string[] {
  return [...load().toIana.keys()];
}

/**
 * The Windows name Graph is sent for an IANA zone. A zone Windows has no equivalent for
 * (Antarctica/Troll) is an `invalid_argument` that says so.
 */
export function windowsZoneFor(zone: string): Result<string, CalgateError> {
  if (UTC_NAMES.has(zone)) {
    return ok('UTC');
  }
  const valid = validateTimeZone(zone);
  if (!valid.ok) {
    return valid;
  }
  const { toWindows } = load();
  const name = valid.value;
  const icu = toWindows.has(name) ? name : (canonical(name) ?? name);
  const windows = toWindows.get(name) ?? toWindows.get(icu) ?? canonicalTable().get(icu);
  if (windows === undefined) {
    return err(
      new CalgateError(
        'invalid_argument',
        `Time zone '${zone}' has no Windows equivalent, so Outlook cannot store times in it; use another IANA zone with the same local time (Outlook knows ${load().toIana.size} Windows zones).`,
        { context: { timeZone: zone } },
      ),
    );
  }
  return ok(windows);
}

/**
 * The IANA zone of a zone name Graph answered: a Windows name (any case), one of the IANA names
 * Graph uses, or UTC's spellings. Outlook's custom zones and unknown names are `invalid_argument`.
 */
export function ianaZoneFor(name: string): Result<string, CalgateError> {
  const text = typeof name === 'string' ? name.trim() : '';
  if (UTC_NAMES.has(text)) {
    return ok('UTC');
  }
  const { toIana, windowsByLower } = load();
  const windows = windowsByLower.get(text.toLowerCase());
  const iana = windows === undefined ? undefined : toIana.get(windows);
  if (iana !== undefined) {
    return ok(iana === 'Etc/UTC' ? 'UTC' : iana);
  }
  if (CUSTOM_NAMES.has(text)) {
    return err(
      new CalgateError(
        'invalid_argument',
        `Outlook answered a custom time zone ('${text}'), which has no IANA name; set the event's or mailbox's time zone to a standard one in Outlook.`,
        { context: { timeZone: text } },
      ),
    );
  }
  if (text.includes('/') && isValidTimeZone(text)) {
    return canonicalTimeZone(text);
  }
  return err(
    new CalgateError(
      'invalid_argument',
      `Time zone '${text}' is neither a Windows time zone name (e.g. 'W. Europe Standard Time') nor an IANA zone (e.g. 'Europe/Berlin').`,
      { context: { timeZone: text } },
    ),
  );
}
