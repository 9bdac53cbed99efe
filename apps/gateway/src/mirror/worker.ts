/**
 * The mirror's share of a worker process: the sync jobs, the planner that queues them and, when
 * the upstreams can reach PUBLIC_URL, the push channels of providers that have them (opened
 * after a calendar's sync, kept by the planner's pass). What each provider does comes from its
 * sync sources (sources.ts).
 */
import { type Database, MirrorChannelRepository, MirrorRepository } from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ChannelUpkeep } from './channel-upkeep.ts';
import { type ChannelTokens, MirrorChannels, reachable } from './channels.ts';
import { MirrorJobs, startMirrorSyncWorker } from './jobs.ts';
import { startMirrorPlanner } from './planner.ts';
import type { SyncSources } from './sources.ts';

/** What push channels need from the configuration: where upstreams send, and whether they can. */
export interface MirrorPushSettings {
  /** PUBLIC_URL: channels point at its push path of each provider (/api/google/push). */
  publicUrl: string;
  /** MIRROR_PUSH: unset decides from PUBLIC_URL (see reachable). */
  setting: boolean | undefined;
  /** The same channel-token key as the gateways' receiver (SecretBox.deriveKey('mirror-channel')). */
  tokens: ChannelTokens;
}

export interface MirrorWorkDeps {
  db: Database;
  log: Logger;
  /** The sync sources of every provider the mirror keeps (built with MIRROR_SYNC_PAGE_SIZE). */
  sources: SyncSources;
  /** MIRROR_POLL_INTERVAL and MIRROR_SYNC_CONCURRENCY, from the config. */
  settings: Config['mirror'];
  /** Push channels; without it (or when upstreams cannot reach PUBLIC_URL) polling alone keeps the mirror. */
  push?: MirrorPushSettings;
}

/** Starts syncing and planning; returns a stop function. */
export async function startMirrorWork(boss: PgBoss, deps: MirrorWorkDeps): Promise<() => Promise<void>> {
  const { db, log, settings, sources } = deps;
  const push = deps.push;
  const channelStore = new MirrorChannelRepository(db, { providers: sources.pushProviders });
  const upkeep =
    push !== undefined && reachable(push.publicUrl, push.setting) && sources.pushProviders.length > 0
      ? new ChannelUpkeep({
          db,
          log,
          store: channelStore,
          channels: new MirrorChannels({
            publicUrl: push.publicUrl,
            store: channelStore,
            tokens: push.tokens,
            sources,
          }),
        })
      : undefined;
  log.info({ push: upkeep !== undefined }, 'calendar mirror work started');
  const stopSync = await startMirrorSyncWorker(boss, {
    db,
    mirror: new MirrorRepository(db),
    sources,
    log,
    concurrency: settings.concurrency,
    ...(upkeep === undefined
      ? {}
      : {
          afterSync: async (calendar) => {
            await upkeep.ensure(calendar);
          },
        }),
  });
  try {
    const stopPlanner = await startMirrorPlanner(boss, {
      db,
      jobs: new MirrorJobs(boss),
      providers: sources.providers,
      log,
      pollIntervalMs: settings.pollIntervalMs,
      ...(upkeep === undefined ? {} : { upkeep: () => upkeep.pass() }),
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
