/**
 * Durable cursors of the mirror's change feed (mirror_feed_cursors), one per consumer.
 *
 * A consumer reads the feed in commit order (feed ids become visible in id order, see
 * MirrorRepository) in turns: a turn locks the consumer's cursor row with SKIP LOCKED, hands the
 * changes after it to the consumer, and moves the cursor in the same transaction. So however many
 * workers run the consumer, one handles a batch at a time (the others find the row locked and
 * skip their turn), and a worker that dies or fails before the commit leaves the cursor where it
 * was: the next turn, anywhere, gets the same changes again. Delivery is at least once; consumers
 * make handling a change twice harmless.
 */
import { CalgateError } from '@calgate/core';
import type pg from 'pg';
import type { Database } from '../db.ts';
import { MirrorRepository } from './repository.ts';
import type { MirrorChange } from './types.ts';

/** Where a new consumer starts: the whole feed, or only changes committed from now on. */
export type FeedStart = 'beginning' | 'now';

/** What one turn did. */
export type FeedTurn =
  /** Changes after `from` up to and including `to` were handled and the cursor moved to `to`. */
  | { kind: 'handled'; count: number; from: bigint; to: bigint }
  /** Nothing after the cursor. */
  | { kind: 'idle'; at: bigint }
  /** Another process holds the cursor (its turn is in progress). */
  | { kind: 'busy' };

/** Handles one batch, oldest first. Throwing leaves the cursor where it was. */
export type FeedHandler = (changes: readonly MirrorChange[]) => Promise<void>;

const CONSUMER_MAX = 64;
const DEFAULT_BATCH = 500;
const BATCH_MAX = 5000;

function checkConsumer(consumer: string): string {
  if (!/^[a-z0-9][a-z0-9_.-]*$/.test(consumer) || consumer.length > CONSUMER_MAX) {
    throw new CalgateError(
      'invalid_argument',
      `A feed consumer's name is 1–${CONSUMER_MAX} lower-case letters, digits, '.', '_' or '-'; got '${consumer.slice(0, CONSUMER_MAX)}'.`,
    );
  }
  return consumer;
}

export class MirrorFeedCursors {
  readonly #pool: pg.Pool;
  readonly #feed: MirrorRepository;

  constructor(db: Pick<Database, 'pool'>) {
    this.#pool = db.pool;
    this.#feed = new MirrorRepository(db);
  }

  /**
   * Deletes feed rows every consumer has handled and that are older than `keepMs` (at most
   * `limit` per call, oldest first); with no consumer registered, only the age counts. Returns
   * how many went.
   */
  async prune(keepMs: number, limit = 10_000): Promise<number> {
    const { rowCount } = await this.#pool.query(
      `DELETE FROM mirror_changes WHERE id IN (
         SELECT id FROM mirror_changes
         WHERE at < now() - make_interval(secs => $1::float8 / 1000)
           AND id <= coalesce((SELECT min(last_id) FROM mirror_feed_cursors), 9223372036854775807)
         ORDER BY id LIMIT $2)`,
      [keepMs, limit],
    );
    return rowCount ?? 0;
  }

  /**
   * Creates the consumer's cursor if it has none, at the start of the feed or after its newest
   * change; an existing cursor is kept (a restart resumes where it stopped). Returns the cursor.
   *
   * 'now' loses nothing committed later: a change committing meanwhile gets an id above the
   * newest one visible here, because feed ids are taken under one lock in commit order.
   */
  async register(consumer: string, start: FeedStart): Promise<bigint> {
    const name = checkConsumer(consumer);
    await this.#pool.query(
      `INSERT INTO mirror_feed_cursors (consumer, last_id)
       SELECT $1, CASE WHEN $2 THEN coalesce(max(id), 0) ELSE 0 END FROM mirror_changes
       ON CONFLICT (consumer) DO NOTHING`,
      [name, start === 'now'],
    );
    const at = await this.position(name);
    if (at === null) {
      throw new CalgateError('internal', `The feed cursor of '${name}' could not be created.`);
    }
    return at;
  }

  /** The id of the last change the consumer handled; null when it was never registered. */
  async position(consumer: string): Promise<bigint | null> {
    const { rows } = await this.#pool.query<{ last_id: string }>(
      'SELECT last_id FROM mirror_feed_cursors WHERE consumer = $1',
      [checkConsumer(consumer)],
    );
    return rows[0] === undefined ? null : BigInt(rows[0].last_id);
  }

  /** Whether the feed holds changes the consumer has not handled: a cheap probe before a turn. */
  async pending(consumer: string): Promise<boolean> {
    const { rows } = await this.#pool.query<{ pending: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM mirror_changes
         WHERE id > coalesce((SELECT last_id FROM mirror_feed_cursors WHERE consumer = $1), 0)
       ) AS pending`,
      [checkConsumer(consumer)],
    );
    return rows[0]?.pending === true;
  }

  /**
   * One turn of the consumer: up to `limit` changes after its cursor handed to `handle`, and the
   * cursor moved past them when `handle` resolves, all under the cursor row's lock. `busy` when
   * another process is in its turn; a consumer never registered is `not_found`.
   */
  async consume(consumer: string, handle: FeedHandler, limit = DEFAULT_BATCH): Promise<FeedTurn> {
    const name = checkConsumer(consumer);
    const size = Math.max(1, Math.min(Math.trunc(limit), BATCH_MAX));
    const client = await this.#pool.connect();
    // A connection that failed under us (killed, reset) is dropped, not given back to the pool.
    let broken: Error | undefined;
    // Without a listener, a session ended by the server between statements would be an uncaught
    // 'error' event; the next statement fails instead and the turn is abandoned.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ last_id: string }>(
        'SELECT last_id FROM mirror_feed_cursors WHERE consumer = $1 FOR UPDATE SKIP LOCKED',
        [name],
      );
      const row = rows[0];
      if (row === undefined) {
        await client.query('ROLLBACK');
        if ((await this.position(name)) === null) {
          throw new CalgateError('not_found', `No feed cursor '${name}'; register the consumer first.`);
        }
        return { kind: 'busy' };
      }
      const from = BigInt(row.last_id);
      const { changes, cursor } = await this.#feed.changesSince(from, size);
      if (changes.length === 0) {
        await client.query('ROLLBACK');
        return { kind: 'idle', at: from };
      }
      await handle(changes);
      await client.query(
        'UPDATE mirror_feed_cursors SET last_id = $2, updated_at = now() WHERE consumer = $1',
        [name, cursor.toString()],
      );
      await client.query('COMMIT');
      return { kind: 'handled', count: changes.length, from, to: cursor };
    } catch (error) {
      await client.query('ROLLBACK').catch((failure: unknown) => {
        broken = failure instanceof Error ? failure : new Error(String(failure));
      });
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}
