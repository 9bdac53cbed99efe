/**
 * Mirror syncs as pg-boss jobs. The queue's 'stately' policy with the calendar id as singleton
 * key allows, per calendar, one job queued and one active across every worker: a sync never runs
 * twice at once for a calendar, and an enqueue while one runs leaves exactly one follow-up (which
 * starts after the running one, so it sees what changed meanwhile). Enqueues that find a job
 * already queued coalesce into it.
 *
 * Transient failures (the upstream or the database unreachable, rate limits) throw, so pg-boss
 * retries with backoff; permanent ones (the account needs reconnecting, the calendar is gone) are
 * already recorded on the calendar's sync state by syncMirror, and the job ends. Each calendar is
 * synced with its provider's sync source (sources.ts).
 */
import { isCalgateError } from '@calgate/core';
import { type MirrorConnection, type SyncResult, syncMirror } from '@calgate/providers';
import type { Database, MirrorRepository } from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { SyncSources } from './sources.ts';

/** The pg-boss queue of calendar syncs. */
export const MIRROR_SYNC_QUEUE = 'calgate-mirror-sync';

/** Without a heartbeat for this long, a sync's job goes to another worker (pg-boss's minimum). */
const HEARTBEAT_SECONDS = 10;

/**
 * Why a sync was asked for (logged): a calendar new to Calgate, the planner's polling, an upstream
 * push, a read that found the mirror stale, an account connected again, or by hand.
 */
export type MirrorSyncReason = 'initial' | 'poll' | 'push' | 'stale_read' | 'reconnect' | 'manual';

export interface MirrorSyncJob {
  tenantId: string;
  calendarId: string;
  reason: MirrorSyncReason;
}

/** Creates (or keeps) the sync queue; idempotent, so every process may call it at start. */
export async function createMirrorQueue(boss: PgBoss): Promise<void> {
  await boss.createQueue(MIRROR_SYNC_QUEUE, {
    policy: 'stately',
    heartbeatSeconds: HEARTBEAT_SECONDS,
    expireInSeconds: 30 * 60,
    retryLimit: 8,
    retryDelay: 5,
    retryBackoff: true,
    retryDelayMax: 600,
    deleteAfterSeconds: 86_400,
  });
}

/** What other parts of Calgate call to have a calendar's mirror brought up to date. */
export class MirrorJobs {
  readonly #boss: PgBoss;

  constructor(boss: PgBoss) {
    this.#boss = boss;
  }

  /**
   * Asks for a sync of the calendar. Returns whether a new job was queued; false means one was
   * already waiting, and it will run after anything in flight, so the request is covered.
   */
  async enqueue(tenantId: string, calendarId: string, reason: MirrorSyncReason): Promise<boolean> {
    const data: MirrorSyncJob = { tenantId, calendarId, reason };
    const id = await this.#boss.send(MIRROR_SYNC_QUEUE, { ...data }, { singletonKey: calendarId });
    return id !== null;
  }
}

/** One calendar the mirror may sync: enabled, of an active connection of a provider with a source. */
interface SyncTarget {
  externalId: string;
  connectionId: string;
  provider: string;
  auth: 'oauth' | 'service_account' | 'password';
}

async function syncTarget(
  db: Database,
  job: MirrorSyncJob,
  providers: readonly string[],
): Promise<SyncTarget | null> {
  const { rows } = await db.pool.query<{
    external_id: string;
    connection_id: string;
    provider: string;
    auth: 'oauth' | 'service_account' | 'password';
  }>(
    `SELECT c.external_id, c.connection_id, n.provider::text AS provider, n.auth::text AS auth
     FROM calendars c JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
     WHERE c.id = $1 AND c.tenant_id = $2 AND c.enabled AND n.provider::text = ANY($3)
       AND n.status = 'active' AND n.auth IN ('oauth', 'service_account', 'password')`,
    [job.calendarId, job.tenantId, [...providers]],
  );
  const row = rows[0];
  return row === undefined
    ? null
    : {
        externalId: row.external_id,
        connectionId: row.connection_id,
        provider: row.provider,
        auth: row.auth,
      };
}

export interface MirrorSyncDeps {
  db: Database;
  mirror: MirrorRepository;
  sources: SyncSources;
  log: Logger;
  /** Syncs one worker runs at once (of different calendars). */
  concurrency?: number;
  /**
   * Called after a sync that completed (the worker opens the calendar's push channel here). Its
   * failure is logged and does not fail the sync: polling still covers the calendar.
   */
  afterSync?: (calendar: SyncedCalendar) => Promise<void>;
}

/** A calendar that has just synced, as the push channels need it. */
export interface SyncedCalendar extends SyncTarget {
  tenantId: string;
  calendarId: string;
}

/** Whether pg-boss should try the job again: only for failures that waiting can fix. */
export function isTransient(error: unknown): boolean {
  return isCalgateError(error) ? error.retry : true;
}

/**
 * One sync of a connection's calendar to its end, with a source authorised for the connection.
 * The upstream refusing a stored token (401) is worth one refresh, as the provider does: only a
 * refused refresh means the account must be reconnected. Used by the worker's jobs and by reads
 * that find the mirror stale.
 */
export async function syncConnectionCalendar(
  sources: SyncSources,
  target: {
    provider: string;
    connection: MirrorConnection;
    calendarId: string;
    externalId: string;
    store: MirrorRepository;
    signal?: AbortSignal;
  },
): Promise<SyncResult> {
  const { connection, provider, ...rest } = target;
  const sync = async (refresh: boolean) =>
    syncMirror({
      source: await sources.forConnection(provider, connection, refresh),
      tenantId: connection.tenantId,
      ...rest,
    });
  return sync(false).catch((error: unknown) => {
    if (isCalgateError(error) && error.code === 'needs_reauth' && connection.auth === 'oauth') {
      return sync(true);
    }
    throw error;
  });
}

/** Runs one job: the calendar's sync to its end, or a recorded reason why not. */
export async function runMirrorSync(
  deps: MirrorSyncDeps,
  job: MirrorSyncJob,
  signal?: AbortSignal,
): Promise<void> {
  const { log } = deps;
  const target = await syncTarget(deps.db, job, deps.sources.providers);
  if (target === null) {
    // Disabled, disconnected or needing reconnection: nothing to sync (a disconnect deletes the rows).
    log.debug({ calendarId: job.calendarId }, 'mirror sync skipped: calendar not syncable');
    return;
  }
  const startedAt = Date.now();
  try {
    const result = await syncConnectionCalendar(deps.sources, {
      provider: target.provider,
      connection: { tenantId: job.tenantId, connectionId: target.connectionId, auth: target.auth },
      calendarId: job.calendarId,
      externalId: target.externalId,
      store: deps.mirror,
      ...(signal === undefined ? {} : { signal }),
    });
    log.info(
      {
        calendarId: job.calendarId,
        reason: job.reason,
        mode: result.mode,
        resumed: result.resumed,
        restarted: result.restarted,
        pages: result.pages,
        upserted: result.upserted,
        deleted: result.deleted + result.swept,
        startedAt,
        finishedAt: Date.now(),
      },
      'calendar mirror synced',
    );
  } catch (error) {
    await failed(deps, job, error, startedAt);
    return;
  }
  if (deps.afterSync !== undefined) {
    await deps
      .afterSync({ ...target, tenantId: job.tenantId, calendarId: job.calendarId })
      .catch((error: unknown) =>
        log.warn(
          { err: error, calendarId: job.calendarId },
          'after the mirror sync: push channel not opened',
        ),
      );
  }
}

/** Records and logs a failed sync; throws again when pg-boss should retry it. */
async function failed(
  deps: MirrorSyncDeps,
  job: MirrorSyncJob,
  error: unknown,
  startedAt: number,
): Promise<void> {
  const transient = isTransient(error);
  if (!transient && isCalgateError(error) && error.code !== 'not_found') {
    // Failures before any upstream call (the token refresh) are not recorded by syncMirror.
    await deps.mirror.recordFailure(job.calendarId, job.tenantId, error.message).catch(() => undefined);
  }
  deps.log.warn(
    {
      err: error,
      calendarId: job.calendarId,
      reason: job.reason,
      transient,
      startedAt,
      finishedAt: Date.now(),
    },
    transient ? 'calendar mirror sync failed; it will be retried' : 'calendar mirror sync failed',
  );
  if (transient) {
    throw error;
  }
}

/** Registers this process as a sync worker. Returns a stop function. */
export async function startMirrorSyncWorker(
  boss: PgBoss,
  deps: MirrorSyncDeps,
): Promise<() => Promise<void>> {
  await createMirrorQueue(boss);
  // Stopping ends syncs in flight between pages rather than waiting for a long full sync: the
  // job is retried, and the next sync goes on from the stored page token.
  const stopping = new AbortController();
  // A push waits for the next poll before its sync starts: pg-boss's shortest interval (0.5 s,
  // one indexed query) keeps an upstream change within about a second of the mirror.
  const id = await boss.work<MirrorSyncJob>(
    MIRROR_SYNC_QUEUE,
    { batchSize: 1, localConcurrency: deps.concurrency ?? 2, pollingIntervalSeconds: 0.5 },
    async ([job]) => {
      if (job !== undefined) {
        await runMirrorSync(deps, job.data, AbortSignal.any([job.signal, stopping.signal]));
      }
    },
  );
  return async () => {
    stopping.abort(new Error('The worker is stopping.'));
    await boss.offWork(MIRROR_SYNC_QUEUE, { id, wait: true });
  };
}
