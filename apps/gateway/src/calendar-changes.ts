/**
 * Calendar changes seen by the mirror, carried from the worker to every gateway process so that
 * `subscriptions/listen` streams hear `notifications/resources/updated` for the calendars their
 * key may read. A worker consumes the mirror's change feed (a sync's pages and write-throughs
 * alike append to it) and publishes each batch's changed calendars, once each, on a Redis
 * channel; each gateway receives them and hands them to its listen streams, which decide per key
 * (see ToolListStreams.calendarsChanged). Without Redis the worker must run in the gateway's own
 * process, and the changes go straight to it.
 */
import type { FeedConsumer } from './mirror/feed.ts';

export const CALENDAR_CHANGES_CHANNEL = 'calgate:calendar-changes';
/** The change feed cursor of the publisher: one per deployment, shared by its workers. */
export const CALENDAR_CHANGES_FEED = 'calendar-resource-updates';

/** A calendar whose events changed; ids as in the `calendars` table. */
export interface CalendarChange {
  tenantId: string;
  calendarId: string;
}

/** Where a worker sends changed calendars: a Redis channel, or the gateway in the same process. */
export type CalendarChangePublisher = (changes: readonly CalendarChange[]) => Promise<void>;

/**
 * The feed consumer that publishes changed calendars. Delivery is at least once (a failed turn is
 * consumed again); a listener told twice reads the calendar twice, which is harmless.
 */
export function calendarChangeFeed(publish: CalendarChangePublisher): FeedConsumer {
  return {
    name: CALENDAR_CHANGES_FEED,
    // Listeners care about changes from now on; older ones were in what they read when they began.
    start: 'now',
    handle: async (changes) => {
      const seen = new Map<string, CalendarChange>();
      for (const change of changes) {
        seen.set(change.calendarId, { tenantId: change.tenantId, calendarId: change.calendarId });
      }
      if (seen.size > 0) {
        await publish([...seen.values()]);
      }
    },
  };
}

export function encodeCalendarChanges(changes: readonly CalendarChange[]): string {
  return JSON.stringify({ calendars: changes.map((change) => [change.tenantId, change.calendarId]) });
}

/** The changes in a channel message, or none for a message this version cannot read. */
export function decodeCalendarChanges(payload: string): CalendarChange[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return [];
  }
  const calendars = (parsed as { calendars?: unknown } | null)?.calendars;
  if (!Array.isArray(calendars)) {
    return [];
  }
  return calendars.flatMap((entry: unknown) =>
    Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string'
      ? [{ tenantId: entry[0], calendarId: entry[1] }]
      : [],
  );
}

/** The calendar changes this gateway process hears, handed to whoever listens (the MCP routes). */
export class CalendarChanges {
  readonly #listeners = new Set<(changes: readonly CalendarChange[]) => void>();

  /** Registers a listener; returns what removes it. */
  subscribe(listener: (changes: readonly CalendarChange[]) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Changes published by a worker (a channel message, or a worker in this process). */
  emit(changes: readonly CalendarChange[]): void {
    for (const listener of this.#listeners) {
      listener(changes);
    }
  }

  /** A message from the Redis channel. */
  receive(payload: string): void {
    const changes = decodeCalendarChanges(payload);
    if (changes.length > 0) {
      this.emit(changes);
    }
  }
}
