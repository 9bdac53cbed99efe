/**
 * Parameter spellings of the previous release, still accepted so that agents written against it
 * keep working. They are not advertised in any schema; an answer to a call that used one carries
 * a short `deprecated: use …` note. The current vocabulary is in DEVELOPERS.md ("Tool vocabulary").
 */
import { CalgateError, formatInstant, parseDateTime } from '@calgate/core';

interface Spelling {
  /** The old parameter name. */
  name: string;
  /** The current one; the old name applies only to tools that take this and not the old name. */
  use: string;
  map?(value: unknown): unknown;
}

const SPELLINGS: readonly Spelling[] = [
  { name: 'timezone', use: 'timeZone' },
  { name: 'start', use: 'timeMin' },
  { name: 'end', use: 'timeMax' },
  { name: 'minFreeSlotMinutes', use: 'minDurationMinutes' },
  { name: 'calendarId', use: 'calendarIds', map: (value) => (typeof value === 'string' ? [value] : value) },
];

const RANGE_BOUNDS = ['timeMin', 'timeMax'] as const;

/** `{dateTime, timeZone?}` or `{date}`, the shape of an event's start, as a range bound string. */
function boundFromObject(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return undefined;
  }
  const { dateTime, date, timeZone } = value as Record<string, unknown>;
  if (typeof date === 'string' && dateTime === undefined) {
    return date;
  }
  if (typeof dateTime !== 'string') {
    return undefined;
  }
  if (typeof timeZone === 'string') {
    const read = parseDateTime(dateTime, timeZone);
    if (read.ok) {
      return formatInstant(read.value, timeZone);
    }
  }
  return dateTime;
}

export interface Modernized {
  args: unknown;
  /** One `deprecated: …` note per old spelling used. */
  notes: string[];
}

/** The arguments in the current vocabulary; a call that passes both spellings of one parameter is refused. */
export function modernize(parameters: ReadonlySet<string>, raw: unknown): Modernized {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { args: raw, notes: [] };
  }
  const args: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  const notes: string[] = [];
  for (const { name, use, map } of SPELLINGS) {
    if (!(name in args) || parameters.has(name) || !parameters.has(use)) {
      continue;
    }
    if (use in args) {
      throw new CalgateError(
        'invalid_argument',
        `Pass ${use} only: ${name} is its deprecated spelling, and both were given.`,
      );
    }
    args[use] = map === undefined ? args[name] : map(args[name]);
    delete args[name];
    notes.push(`deprecated: use ${use} instead of ${name}.`);
  }
  for (const bound of RANGE_BOUNDS) {
    const text = parameters.has(bound) ? boundFromObject(args[bound]) : undefined;
    if (text !== undefined) {
      args[bound] = text;
      notes.push(`deprecated: pass ${bound} as a string, e.g. '${text}'.`);
    }
  }
  return { args, notes };
}
