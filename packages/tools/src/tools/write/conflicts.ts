/** Overlap and near-duplicate checks for a new event against what the calendar already holds. */
import type { CalendarEvent } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import type { Warning } from '../../write-schemas.ts';
import { describeEvent, emailKey, instantOf } from './common.ts';

const HOUR = 3_600_000;

function words(title: string): string[] {
  return title
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

/**
 * Whether two titles likely name the same meeting: equal up to case, punctuation and spacing
 * ("Stand-up" / "standup"), nearly the same words, or one holding all of the other's words when
 * that is at least two ("Design review" / "Design review – API").
 */
export function similarTitles(a: string, b: string): boolean {
  const x = words(a);
  const y = words(b);
  if (x.length === 0 || y.length === 0) {
    return false;
  }
  if (x.join('') === y.join('')) {
    return true;
  }
  const [shorter, longer] = x.length <= y.length ? [x, new Set(y)] : [y, new Set(x)];
  const shared = shorter.filter((word) => longer.has(word)).length;
  const union = new Set([...x, ...y]).size;
  return shared / union >= 0.75 || (shorter.length >= 2 && shared === shorter.length);
}

/** Whether an event makes its calendar busy: not cancelled, opaque, not declined by the calendar itself. */
export function isBusy(event: CalendarEvent, accountEmail: string): boolean {
  if (event.status === 'cancelled' || event.transparency === 'transparent') {
    return false;
  }
  const self = event.attendees?.find(
    (attendee) => attendee.self === true || emailKey(attendee.email) === emailKey(accountEmail),
  );
  return self?.responseStatus !== 'declined';
}

export interface Neighbourhood {
  conflicts: CalendarEvent[];
  duplicates: CalendarEvent[];
}

/**
 * Events overlapping [start, end) that make the time busy, and events with a similar title
 * starting within an hour of `start`.
 */
export async function inspectNeighbourhood(
  handle: CalendarHandle,
  candidate: { summary: string; start: number; end: number },
  signal?: AbortSignal,
): Promise<Neighbourhood> {
  const { provider, ref, calendar } = handle;
  const page = await provider.listEvents(
    ref,
    {
      timeMin: new Date(candidate.start - HOUR).toISOString(),
      timeMax: new Date(Math.max(candidate.end, candidate.start + HOUR)).toISOString(),
      singleEvents: true,
      orderBy: 'startTime',
      maxResults: 250,
    },
    signal,
  );
  const conflicts: CalendarEvent[] = [];
  const duplicates: CalendarEvent[] = [];
  for (const event of page.items) {
    if (event.status === 'cancelled') {
      continue;
    }
    const start = instantOf(event.start, ref.timeZone);
    const end = instantOf(event.end, ref.timeZone);
    if (Math.abs(start - candidate.start) <= HOUR && similarTitles(event.summary ?? '', candidate.summary)) {
      duplicates.push(event);
    } else if (start < candidate.end && end > candidate.start && isBusy(event, calendar.accountEmail)) {
      conflicts.push(event);
    }
  }
  return { conflicts, duplicates };
}

export function conflictWarnings(conflicts: readonly CalendarEvent[]): Warning[] {
  return conflicts.map((event) => ({
    kind: 'conflict' as const,
    message: `Overlaps busy event ${describeEvent(event)}.`,
    eventId: event.id,
  }));
}
