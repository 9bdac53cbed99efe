/**
 * A consumer of the mirror's change feed, run in a worker process: every `pollMs` it probes the
 * feed past its cursor and, when something is new, takes turns (MirrorFeedCursors.consume) until
 * it has caught up. A sync's changes are thus handled about a second after they commit.
 *
 * Every worker runs the same loop: the cursor row's SKIP LOCKED lock gives one of them each turn
 * and the others skip, so nothing is handled twice at once. A turn that fails (the handler threw,
 * the database went away, the process died) leaves the cursor where it was, and the next turn,
 * here or in another worker, handles the same changes again: handlers must be idempotent.
 *
 * Probing is one indexed EXISTS per second per worker, cheaper than anything that would wake the
 * loop (LISTEN needs a connection of its own, kept and re-established by hand).
 */
import type { Database, FeedStart, MirrorChange } from '@calgate/store';
import { MirrorFeedCursors } from '@calgate/store';
import type { Logger } from 'pino';

export interface FeedConsumer {
  /** The cursor's name in mirror_feed_cursors; one cursor per kind of consumer, shared by workers. */
  name: string;
  /** Where the consumer begins the very first time it runs (later runs resume from the cursor). */
  start: FeedStart;
  /** Handles one batch of changes, oldest first; idempotent. Throwing retries the batch later. */
  handle(changes: readonly MirrorChange[], signal: AbortSignal): Promise<void>;
}

export interface FeedLoopOptions {
  db: Pick<Database, 'pool'>;
  log: Logger;
  /** How often the feed is probed for changes (default 1 s). */
  pollMs?: number;
  /** Changes per turn (default 500). */
  batchSize?: number;
}

export const DEFAULT_FEED_POLL_MS = 1000;
/** After failures, turns wait longer, doubling up to this. */
const MAX_BACKOFF_MS = 30_000;

/** What the loop has done so far: for logs and tests. */
export interface FeedLoopStats {
  /** Turns that handled changes. */
  turns: number;
  changes: number;
  /** Turns skipped because another worker held the cursor. */
  busy: number;
  failures: number;
}

export interface FeedLoop {
  readonly stats: FeedLoopStats;
  /** Runs a pass now (tests, and a caller that knows something was just committed). */
  poke(): Promise<void>;
  /** Ends the loop: a turn in flight is aborted (its batch stays for the next turn). */
  stop(): Promise<void>;
}

/** Registers the consumer's cursor and starts its loop. */
export async function startFeedConsumer(consumer: FeedConsumer, options: FeedLoopOptions): Promise<FeedLoop> {
  const { log } = options;
  const pollMs = options.pollMs ?? DEFAULT_FEED_POLL_MS;
  const cursors = new MirrorFeedCursors(options.db);
  await cursors.register(consumer.name, consumer.start);
  const stopping = new AbortController();
  const stats: FeedLoopStats = { turns: 0, changes: 0, busy: 0, failures: 0 };
  let failuresInRow = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  // Turn after turn until the feed is caught up or another worker holds the cursor.
  const pass = async () => {
    while (!stopping.signal.aborted && (await cursors.pending(consumer.name))) {
      const turn = await cursors.consume(
        consumer.name,
        (changes) => consumer.handle(changes, stopping.signal),
        options.batchSize,
      );
      if (turn.kind !== 'handled') {
        stats.busy += turn.kind === 'busy' ? 1 : 0;
        return;
      }
      stats.turns += 1;
      stats.changes += turn.count;
      log.debug(
        { consumer: consumer.name, changes: turn.count, from: String(turn.from), to: String(turn.to) },
        'mirror feed consumed',
      );
    }
  };

  const run = (): Promise<void> => {
    running ??= pass()
      .then(() => {
        failuresInRow = 0;
      })
      .catch((error: unknown) => {
        if (stopping.signal.aborted) {
          return;
        }
        stats.failures += 1;
        failuresInRow += 1;
        log.warn(
          { err: error, consumer: consumer.name, failures: failuresInRow },
          'mirror feed turn failed; its changes will be handled again',
        );
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const tick = () => {
    void run().then(() => {
      if (!stopping.signal.aborted) {
        const wait = failuresInRow === 0 ? pollMs : Math.min(pollMs * 2 ** failuresInRow, MAX_BACKOFF_MS);
        timer = setTimeout(tick, wait);
        timer.unref();
      }
    });
  };
  tick();

  return {
    stats,
    poke: run,
    async stop() {
      stopping.abort(new Error('The worker is stopping.'));
      clearTimeout(timer);
      await running;
    },
  };
}
