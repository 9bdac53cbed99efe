/**
 * Calendar changes seen by the mirror, carried from the worker to every gateway process so that
 * `subscriptions/listen` streams hear `notifications/resources/updated` for the calendars their
 * key may read. A worker consumes the mirror's change feed (a sync's pages and write-throughs
 * alike append to it) and publishes each batch's changed calendars, once each, on a Redis
 * channel; each gateway receives them and hands them to its listen streams, which decide per key
 * (see ToolListStreams.calendarsChanged). Without Redis the worker must run in the gateway's own
 * process, and the changes go straight to it.
 *
 * Only while some gateway has a listen stream open is anything published: such a gateway keeps
 * `LISTENERS_KEY` in Redis (a short TTL, refreshed while it has streams), and the publisher skips
 * a batch when the key is absent. A gateway sets the key before it answers a listen request, so a
 * stream hears every change the publisher handles after the stream opened; a gateway that dies
 * with streams open keeps the publisher going for at most `LISTENERS_TTL_MS`.
 */
import type { Redis } from 'ioredis';
import type { FeedConsumer } from './mirror/feed.ts';

export const CALENDAR_CHANGES_CHANNEL = 'calgate:calendar-changes';
/** Present while some gateway has a listen stream open. */
export const LISTENERS_KEY = 'calgate:calendar-listeners';
/** How long the key outlives its last refresh; a gateway with streams refreshes it every third of it. */
export const LISTENERS_TTL_MS = 30_000;
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

/** Publishes on Redis, and only while `LISTENERS_KEY` says some gateway listens. */
export function publishWhileListened(redis: Redis): CalendarChangePublisher {
  return async (changes) => {
    if ((await redis.exists(LISTENERS_KEY)) === 0) {
      return;
    }
    await redis.publish(CALENDAR_CHANGES_CHANNEL, encodeCalendarChanges(changes));
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
  readonly #announce: (() => Promise<void>) | undefined;
  #streams = 0;
  #timer: NodeJS.Timeout | undefined;

  /** `announce` sets `LISTENERS_KEY` with its TTL (Redis); without it changes come from this process. */
  constructor(announce?: () => Promise<void>) {
    this.#announce = announce;
  }

  /**
   * Says this gateway listens before a listen stream opens: resolves once workers will publish
   * (a Redis that does not answer is not waited for; nothing is published through it either).
   */
  async willListen(): Promise<void> {
    await this.#announce?.().catch(() => {});
  }

  /** Announces again at once when streams are open (Redis answers again after an outage). */
  reannounce(): void {
    if (this.#streams > 0) {
      void this.willListen();
    }
  }

  /** Counts an open listen stream, keeping the announcement fresh while any is open; returns its end. */
  listening(): () => void {
    this.#streams++;
    if (this.#timer === undefined && this.#announce !== undefined) {
      const announce = this.#announce;
      this.#timer = setInterval(() => void announce().catch(() => {}), LISTENERS_TTL_MS / 3);
      this.#timer.unref();
    }
    let ended = false;
    return () => {
      if (ended) {
        return;
      }
      ended = true;
      this.#streams--;
      if (this.#streams === 0 && this.#timer !== undefined) {
        // The key is left to expire: other gateways may still listen.
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

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
