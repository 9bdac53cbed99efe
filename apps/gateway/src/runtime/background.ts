/**
 * A worker's background loops: mirror syncs and the change feed, planning of event-relative
 * prompts, prompt delivery and audit retention; stopped in reverse order.
 */
import { Scheduling } from '@calgate/scheduler';
import type { Database, SchedulerRepository } from '@calgate/store';
import type { ProviderResolver } from '@calgate/tools';
import { startWorker, type Worker } from '@calgate/worker';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { type CalendarChangePublisher, calendarChangeFeed } from '../calendar-changes.ts';
import type { Config } from '../config.ts';
import { startFeedConsumer } from '../mirror/feed.ts';
import { type MirrorWorkDeps, startMirrorWork } from '../mirror/worker.ts';
import { eventCheck, startEventPlanning } from '../scheduler-events.ts';

/**
 * The background work of a worker process (or of the gateway in `calgate start`): audit
 * retention, prompt delivery and the re-planning of event-relative prompts.
 */
export async function startBackgroundWork(input: {
  config: Config;
  db: Database;
  log: Logger;
  boss: PgBoss;
  repository: SchedulerRepository;
  providers: ProviderResolver;
  health?: { host: string; port: number };
  /** Keeps calendars' mirrors in sync (pg-boss jobs and their planner) when given. */
  mirror?: Omit<MirrorWorkDeps, 'db' | 'log'>;
  /** Where calendars the mirror saw change are published for listen streams; nowhere when absent. */
  calendarChanges?: CalendarChangePublisher | undefined;
}): Promise<Worker> {
  const { config, db, log, boss, repository, providers } = input;
  const stopSync =
    input.mirror === undefined ? async () => {} : await startMirrorWork(boss, { ...input.mirror, db, log });
  const changes =
    input.calendarChanges === undefined
      ? undefined
      : await startFeedConsumer(calendarChangeFeed(input.calendarChanges), { db, log }).catch(
          async (error: unknown) => {
            await stopSync();
            throw error;
          },
        );
  const stopMirror = async () => {
    await changes?.stop();
    await stopSync();
  };
  const stopPlanning = await startEventPlanning(boss, {
    db,
    repository,
    scheduling: new Scheduling(boss, repository),
    providers,
    log,
  }).catch(async (error: unknown) => {
    await stopMirror();
    throw error;
  });
  try {
    const worker = await startWorker({
      db,
      log,
      auditRetentionDays: config.auditRetentionDays,
      ...(input.health === undefined ? {} : { health: input.health }),
      delivery: {
        boss,
        repository,
        allowPrivate: config.scheduler.allowPrivateTargets,
        graceMs: config.scheduler.misfireGraceMs,
        concurrency: config.scheduler.concurrency,
        eventCheck: eventCheck({ db, repository, providers }),
      },
    });
    return {
      ...worker,
      async stop() {
        await stopMirror();
        await stopPlanning();
        await worker.stop();
      },
    };
  } catch (error) {
    await stopMirror();
    await stopPlanning();
    throw error;
  }
}
