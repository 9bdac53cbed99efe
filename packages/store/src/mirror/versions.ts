/**
 * Changes of calendars' mirror state as Postgres announces them: every transaction that moves a
 * calendar's version on (its events changed), starts its full sync over or drops its mirror sends
 * `NOTIFY mirror_versions, '<calendarId>'`, delivered when it commits; so does every change of a
 * calendar's booking rows (a trigger on bookings, whichever process writes). A gateway that remembers
 * what it last read of a calendar's sync state forgets it when told, so while nothing changes it
 * need not read the state again. While the listening connection is down nothing is heard, so
 * nothing may be trusted: `live` is false and subscribers are told to forget everything (`reset`),
 * once when the connection is lost and again when it listens anew.
 */
import pg from 'pg';
import type { Database } from '../db.ts';

export const MIRROR_VERSIONS_CHANNEL = 'mirror_versions';

export interface MirrorVersionEvents {
  changed(calendarId: string): void;
  /** Changes may have been missed (the connection was lost): forget everything. */
  reset(): void;
}

const RETRY_MS = 1_000;

export class MirrorVersionListener {
  readonly #connectionString: string | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #subscribers = new Set<MirrorVersionEvents>();
  #client: pg.Client | undefined;
  #live = false;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(db: Pick<Database, 'pool'>, options: { onError?: (error: unknown) => void } = {}) {
    this.#connectionString = db.pool.options.connectionString;
    this.#onError = options.onError ?? (() => {});
  }

  /** Whether changes are being heard now. */
  get live(): boolean {
    return this.#live;
  }

  subscribe(events: MirrorVersionEvents): () => void {
    this.#subscribers.add(events);
    return () => this.#subscribers.delete(events);
  }

  /** Connects and listens; a failure is retried in the background (not live meanwhile). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    this.#retry = undefined;
    if (this.#closed) {
      return;
    }
    const client = new pg.Client({
      connectionString: this.#connectionString,
      connectionTimeoutMillis: 10_000,
    });
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) {
        return;
      }
      lost = true;
      if (error !== undefined) {
        this.#onError(error);
      }
      client.end().catch(() => {});
      if (this.#client === client) {
        this.#client = undefined;
      }
      this.#live = false;
      for (const subscriber of this.#subscribers) {
        subscriber.reset();
      }
      if (!this.#closed) {
        this.#retry = setTimeout(() => void this.#connect(), RETRY_MS);
        this.#retry.unref();
      }
    };
    client.on('notification', (message) => {
      if (message.channel === MIRROR_VERSIONS_CHANNEL && message.payload) {
        for (const subscriber of this.#subscribers) {
          subscriber.changed(message.payload);
        }
      }
    });
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      await client.query(`LISTEN ${MIRROR_VERSIONS_CHANNEL}`);
    } catch (error) {
      onLost(error);
      return;
    }
    if (this.#closed || lost) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#live = true;
    // Reads begun while nothing was heard may have missed a change: they must not be kept.
    for (const subscriber of this.#subscribers) {
      subscriber.reset();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#live = false;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }
}
