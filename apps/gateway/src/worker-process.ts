/**
 * `calgate worker`: delivers scheduled prompts and does the background upkeep, beside any number of
 * gateway processes and other workers sharing the database (pg-boss hands each due occurrence to
 * one of them). Needs the same DATABASE_URL and ENCRYPTION_KEY as the gateways.
 */
import { randomUUID } from 'node:crypto';
import { connectRedis } from '@calgate/locks';
import { startBoss } from '@calgate/scheduler';
import { ConnectionRepository, migrate, SchedulerRepository } from '@calgate/store';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type CalendarChangePublisher, publishWhileListened } from './calendar-changes.ts';
import type { Config } from './config.ts';
import { mailboxLimits } from './microsoft/mailbox-limits.ts';
import { ChannelTokens } from './mirror/channels.ts';
import { createMirrorQueue, MirrorJobs } from './mirror/jobs.ts';
import { OutageLog } from './outage-log.ts';
import { publishKeyChange } from './runtime/shared-state.ts';
import { calendarProviders, connectDatabase, loadSecretBox, startBackgroundWork } from './runtime.ts';

export interface RunningWorker {
  /** The health endpoint's base URL. */
  healthUrl: string | undefined;
  close(): Promise<void>;
}

export async function runWorker(config: Config, log: Logger): Promise<RunningWorker> {
  // A connection per delivery in flight at its claim and settlement, and a few for upkeep.
  const database = await connectDatabase(config, log, {
    poolSize: Math.min(50, config.scheduler.concurrency + 4),
  });
  const closers: (() => Promise<void>)[] = [() => database.close()];
  const close = async () => {
    for (const step of closers) {
      await step().catch((error: unknown) => log.error({ err: error }, 'shutdown step failed'));
    }
  };
  try {
    const { db } = database;
    if (config.migrateOnStart) {
      await migrate(db.pool);
    }
    const box = await loadSecretBox(config, database.embedded);
    const connections = new ConnectionRepository(db.prisma, box);
    const boss = await startBoss({ databaseUrl: database.url, role: 'worker' });
    boss.on('error', (error: unknown) => log.warn({ err: error }, 'job queue error (retried)'));
    closers.unshift(() => boss.stop({ graceful: true, timeout: 5_000 }));
    await createMirrorQueue(boss);
    // Calendars the mirror saw change go to every gateway's listen streams through Redis, and an
    // account a sync found needs_reauth drops its tenant's cached key lookups on every gateway.
    let calendarChanges: CalendarChangePublisher | undefined;
    let keysChanged = (_tenantId: string): void => {};
    // Outlook mailboxes' Graph limits are shared with the gateways (and other workers) through Redis.
    let redis: Redis | undefined;
    const redisOutage = new OutageLog(log, {
      dependency: 'redis',
      down: "Redis is unreachable: Outlook mailboxes' Graph limits are kept per process",
      up: 'Redis is reachable again',
    });
    if (config.redisUrl !== undefined) {
      const client = connectRedis(config.redisUrl, { name: 'calgate-worker' });
      redis = client;
      client.on('error', () => {});
      client.on('ready', () => redisOutage.succeeded());
      closers.unshift(async () => {
        client.disconnect();
      });
      calendarChanges = publishWhileListened(client);
      const workerId = `worker-${randomUUID()}`;
      keysChanged = (tenantId) => publishKeyChange(client, workerId, tenantId);
    }
    const { providers, sources } = await calendarProviders(
      config,
      db,
      connections,
      log,
      keysChanged,
      new MirrorJobs(boss),
      undefined,
      mailboxLimits(redis, redisOutage),
    );
    const worker = await startBackgroundWork({
      config,
      db,
      log,
      boss,
      repository: new SchedulerRepository(db, box),
      providers,
      health: config.workerHealth,
      mirror: {
        sources,
        settings: config.mirror,
        push: { publicUrl: config.publicUrl, setting: config.mirrorPush, tokens: new ChannelTokens(box) },
      },
      calendarChanges,
    });
    closers.unshift(() => worker.stop());
    return { healthUrl: worker.healthUrl, close };
  } catch (error) {
    await close();
    throw error;
  }
}
