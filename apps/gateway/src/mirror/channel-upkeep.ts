/**
 * The worker's side of push: one open channel on every mirrored calendar while Google can reach
 * PUBLIC_URL. A channel is opened after a calendar's sync (its first full sync, or the first
 * sync after push was turned on); the planner's pass renews channels a day before they end,
 * stops those of calendars no longer synced and opens any that are missing (an open that failed,
 * a channel Google dropped). Polling of recently read calendars goes on either way: a lost
 * notification costs freshness, never correctness.
 *
 * Opening and renewing hold a Postgres advisory lock per calendar, so two workers (a sync's
 * follow-up and a planner pass, say) never open two channels on one calendar.
 */
import type { Database, MirrorChannelRepository, MirrorChannelRow, WatchedChannel } from '@calgate/store';
import type { Logger } from 'pino';
import { type MirrorChannels, RENEW_AHEAD_MS, type WatchedCalendar } from './channels.ts';

/** The advisory-lock space of channel upkeep (the second key is the calendar id's hash). */
const LOCK_SPACE = 72707371;
/** A calendar whose channel could not be opened is tried again by the pass after this long. */
const REOPEN_AFTER_MS = 15 * 60_000;
/** Calendars and channels handled per pass; the next pass (a minute later) takes the rest. */
const PASS_LIMIT = 200;

export interface ChannelUpkeepDeps {
  db: Pick<Database, 'pool'>;
  channels: MirrorChannels;
  store: MirrorChannelRepository;
  log: Logger;
  now?: () => number;
}

/** What one pass did, for logs and tests. */
export interface UpkeepOutcome {
  renewed: number;
  stopped: number;
  opened: number;
  failed: number;
}

export class ChannelUpkeep {
  readonly #deps: ChannelUpkeepDeps;
  readonly #now: () => number;
  /** When opening a calendar's channel last failed in this process. */
  readonly #failedAt = new Map<string, number>();

  constructor(deps: ChannelUpkeepDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /**
   * Opens the calendar's channel unless it has one still open (or another worker is opening it
   * right now), or opening it failed here within REOPEN_AFTER_MS (an upstream that cannot reach
   * PUBLIC_URL is not asked again after every poll). Returns the new channel, or null when
   * nothing was done.
   */
  async ensure(calendar: WatchedCalendar): Promise<MirrorChannelRow | null> {
    if (this.#failedRecently(calendar.calendarId)) {
      return null;
    }
    return this.#locked(calendar.calendarId, async () => {
      const known = await this.#deps.store.forCalendar(calendar.calendarId);
      if (known.some((channel) => channel.expiration > this.#now())) {
        return null;
      }
      let channel: MirrorChannelRow;
      try {
        channel = await this.#deps.channels.open(calendar);
      } catch (error) {
        this.#failedAt.set(calendar.calendarId, this.#now());
        throw error;
      }
      this.#failedAt.delete(calendar.calendarId);
      this.#deps.log.info(
        { calendarId: calendar.calendarId, channelId: channel.channelId, expiration: channel.expiration },
        'mirror push channel opened',
      );
      // Lapsed ones are forgotten now, or the renewal pass would replace them with a second channel.
      for (const lapsed of known) {
        await this.#deps.channels.stop(calendar, lapsed).catch(() => undefined);
      }
      return channel;
    });
  }

  /** Renews, stops and opens what is due; failures of one calendar do not stop the others. */
  async pass(): Promise<UpkeepOutcome> {
    const outcome: UpkeepOutcome = { renewed: 0, stopped: 0, opened: 0, failed: 0 };
    const { store, channels, log } = this.#deps;
    const attempt = async (what: string, calendarId: string, work: () => Promise<boolean>) => {
      try {
        return await work();
      } catch (error) {
        outcome.failed += 1;
        log.warn({ err: error, calendarId }, `mirror push channel could not be ${what}`);
        return false;
      }
    };
    for (const { channel, calendar } of await store.expiringWatched(
      this.#now() + RENEW_AHEAD_MS,
      PASS_LIMIT,
    )) {
      if (await attempt('renewed', calendar.calendarId, () => this.#renew(calendar, channel))) {
        outcome.renewed += 1;
      }
    }
    for (const { channel, calendar } of await store.unwanted(PASS_LIMIT)) {
      // The row goes first (stop() drops it before asking Google), so a failure here is only a
      // channel Google keeps sending to until it ends; the receiver answers those 404.
      if (await attempt('stopped', calendar.calendarId, () => stopped(channels, calendar, channel))) {
        outcome.stopped += 1;
      }
    }
    for (const calendar of await store.unwatched(PASS_LIMIT)) {
      if (this.#failedRecently(calendar.calendarId)) {
        continue;
      }
      if (await attempt('opened', calendar.calendarId, async () => (await this.ensure(calendar)) !== null)) {
        outcome.opened += 1;
      }
    }
    if (outcome.renewed + outcome.stopped + outcome.opened + outcome.failed > 0) {
      log.info(outcome, 'mirror push channels kept up');
    }
    return outcome;
  }

  #failedRecently(calendarId: string): boolean {
    const failedAt = this.#failedAt.get(calendarId);
    return failedAt !== undefined && this.#now() - failedAt < REOPEN_AFTER_MS;
  }

  /** Replaces a channel that ends soon, unless another worker already did. */
  #renew(calendar: WatchedCalendar, channel: MirrorChannelRow): Promise<boolean> {
    return this.#locked(calendar.calendarId, async () => {
      const known = await this.#deps.store.forCalendar(calendar.calendarId);
      const current = known.find((row) => row.channelId === channel.channelId);
      if (current === undefined) {
        return false;
      }
      // Another channel already outlives the renewal window (a sync opened one): this one goes.
      const renewAt = this.#now() + RENEW_AHEAD_MS;
      if (known.some((row) => row.channelId !== current.channelId && row.expiration > renewAt)) {
        await this.#deps.channels.stop(calendar, current);
        return true;
      }
      const fresh = await this.#deps.channels.renew(calendar, current);
      this.#deps.log.info(
        { calendarId: calendar.calendarId, channelId: fresh.channelId, replaced: channel.channelId },
        'mirror push channel renewed',
      );
      return true;
    }).then((done) => done === true);
  }

  /** Runs `work` holding the calendar's channel lock; null when another process holds it. */
  async #locked<T>(calendarId: string, work: () => Promise<T>): Promise<T | null> {
    const client = await this.#deps.db.pool.connect();
    try {
      const { rows } = await client.query<{ got: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS got',
        [LOCK_SPACE, calendarId],
      );
      if (rows[0]?.got !== true) {
        return null;
      }
      try {
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, calendarId]);
      }
    } finally {
      client.release();
    }
  }
}

async function stopped(
  channels: MirrorChannels,
  calendar: WatchedCalendar,
  channel: MirrorChannelRow,
): Promise<boolean> {
  await channels.stop(calendar, channel);
  return true;
}

/**
 * Stops every channel of a connection at Google and forgets them: called before an account is
 * disconnected, while its token still works. Best effort per channel (a channel Google cannot be
 * told about ends by itself within a week, and its notifications find no channel here).
 */
export async function stopConnectionChannels(
  deps: { channels: Pick<MirrorChannels, 'stop'>; store: MirrorChannelRepository; log: Logger },
  tenantId: string,
  connectionId: string,
): Promise<number> {
  let stoppedCount = 0;
  const watched: WatchedChannel[] = await deps.store.forConnection(tenantId, connectionId);
  for (const { channel, calendar } of watched) {
    try {
      await deps.channels.stop(calendar, channel);
      stoppedCount += 1;
    } catch (error) {
      deps.log.warn(
        { err: error, calendarId: calendar.calendarId, channelId: channel.channelId },
        'mirror push channel could not be stopped at Google; it ends by itself',
      );
    }
  }
  return stoppedCount;
}
