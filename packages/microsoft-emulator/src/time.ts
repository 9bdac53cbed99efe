/**
 * Wall-clock arithmetic in IANA zones, written here (not borrowed from Calgate) so the emulator
 * stays an independent double. Local date-times are `YYYY-MM-DDTHH:mm:ss[.fffffff]`.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall clock of `zone` at epoch `ms` (whole seconds). */
export function localPartsAt(ms: number, zone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') {
      parts[p.type] = Number(p.value);
    }
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

function asUtc(p: LocalParts): number {
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

/** Offset of `zone` from UTC at epoch `ms`, in ms. */
export function offsetAt(ms: number, zone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return asUtc(localPartsAt(whole, zone)) - whole;
}

/**
 * The instant a wall clock reading names in `zone`. A reading in a spring-forward gap moves
 * forward by the gap (as Exchange does); a repeated reading is its first (earlier) instant.
 */
export function instantOf(p: LocalParts, zone: string): number {
  const naive = asUtc(p);
  const before = naive - offsetAt(naive - 86_400_000, zone);
  const after = naive - offsetAt(naive + 86_400_000, zone);
  const exact = [before, after].filter((c) => asUtc(localPartsAt(c, zone)) === naive).sort((a, b) => a - b);
  // In a gap neither reading exists: the offset before the gap moves it forward by the gap.
  return exact[0] ?? before;
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?)?$/;

/** Parses a Graph local date-time (no offset); undefined when malformed. */
export function parseLocal(text: string): (LocalParts & { fractionMs: number }) | undefined {
  const m = LOCAL_RE.exec(text);
  if (!m) {
    return undefined;
  }
  const parts = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    fractionMs: m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000),
  };
  const check = new Date(Date.UTC(parts.year, parts.month - 1, parts.day));
  if (
    check.getUTCMonth() !== parts.month - 1 ||
    check.getUTCDate() !== parts.day ||
    parts.hour > 23 ||
    parts.minute > 59 ||
    parts.second > 59
  ) {
    return undefined;
  }
  return parts;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `2026-03-29T09:00:00.0000000`: how Graph writes a wall clock (7 fractional digits, no offset). */
export function formatLocal(p: LocalParts): string {
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}.0000000`;
}

/** The wall clock of `zone` at `ms`, as Graph writes it. */
export function localAt(ms: number, zone: string): string {
  return formatLocal(localPartsAt(ms, zone));
}

/** A calendar date (no time) as days since 1970-01-01. */
export function dayNumber(year: number, month: number, day: number): number {
  return Math.floor(Date.UTC(year, month - 1, day) / 86_400_000);
}

export function dateOfDay(n: number): { year: number; month: number; day: number } {
  const d = new Date(n * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

export function isoDate(n: number): string {
  const { year, month, day } = dateOfDay(n);
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** `YYYY-MM-DD` → day number; undefined when malformed. */
export function parseDate(text: string): number | undefined {
  const p = parseLocal(text);
  return p === undefined || text.length !== 10 ? undefined : dayNumber(p.year, p.month, p.day);
}

/**
 * An instant from a query parameter (`startDateTime`): with an offset or `Z` it is exact; without,
 * it is read in `zone` (Graph reads offset-less values in the Prefer zone, else UTC).
 */
export function parseQueryInstant(text: string, zone: string): number | undefined {
  const offset = /(Z|[+-]\d{2}:?\d{2})$/i.exec(text);
  if (offset) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  }
  const p = parseLocal(text);
  return p === undefined ? undefined : instantOf(p, zone) + p.fractionMs;
}
