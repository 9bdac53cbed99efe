/** The mirror's share of a worker process: the sync jobs and the planner that queues them. */
import { type ConnectionRepository, type Database, MirrorRepository } from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { GoogleSetup } from '../google/providers.ts';
import { calendarClients } from './google-client.ts';
import { MirrorJobs, startMirrorSyncWorker } from './jobs.ts';
import { startMirrorPlanner } from './planner.ts';

export interface MirrorWorkDeps {
  db: Database;
  log: Logger;
  google: GoogleSetup;
  connections: ConnectionRepository;
  /** MIRROR_POLL_INTERVAL, MIRROR_SYNC_PAGE_SIZE and MIRROR_SYNC_CONCURRENCY, from the config. */
  settings: Config['mirror'];
  /** Called when a sync finds the account's authorization gone (to drop cached providers). */
  onNeedsReauth?: (connectionId: string) => void;
}

/** Starts syncing and planning; returns a stop function. */
export async function startMirrorWork(boss: PgBoss, deps: MirrorWorkDeps): Promise<() => Promise<void>> {
  const { db, log, settings } = deps;
  const clients = calendarClients(deps.google, deps.connections, (connectionId, reason) => {
    log.warn({ connectionId, reason }, 'Google account needs to be reconnected');
    deps.onNeedsReauth?.(connectionId);
  });
  const stopSync = await startMirrorSyncWorker(boss, {
    db,
    mirror: new MirrorRepository(db),
    clients,
    log,
    pageSize: settings.pageSize,
    concurrency: settings.concurrency,
  });
  try {
    const stopPlanner = await startMirrorPlanner(boss, {
      db,
      jobs: new MirrorJobs(boss),
      log,
      pollIntervalMs: settings.pollIntervalMs,
    });
    return async () => {
      await stopPlanner();
      await stopSync();
    };
  } catch (error) {
    await stopSync();
    throw error;
  }
}
