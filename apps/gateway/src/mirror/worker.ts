/**
 * The mirror's share of a worker process: the sync jobs, the planner that queues them and, when
 * Google can reach PUBLIC_URL, the push channels (opened after a calendar's sync, kept by the
 * planner's pass).
 */
import {
  type ConnectionRepository,
  type Database,
  MirrorChannelRepository,
  MirrorRepository,
} from '@calgate/store';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { GoogleSetup } from '../google/providers.ts';
import { ChannelUpkeep } from './channel-upkeep.ts';
import { type ChannelTokens, MirrorChannels, reachable } from './channels.ts';
import { calendarClients } from './google-client.ts';
import { MirrorJobs, startMirrorSyncWorker } from './jobs.ts';
import { startMirrorPlanner } from './planner.ts';

/** What push channels need from the configuration: where Google sends, and whether it can. */
export interface MirrorPushSettings {
  /** PUBLIC_URL: channels point at its /api/google/push. */
  publicUrl: string;
  /** MIRROR_PUSH: unset decides from PUBLIC_URL (see reachable). */
  setting: boolean | undefined;
  /** The same channel-token key as the gateways' receiver (SecretBox.deriveKey('mirror-channel')). */
  tokens: ChannelTokens;
}

export interface MirrorWorkDeps {
  db: Database;
  log: Logger;
  google: GoogleSetup;
  connections: ConnectionRepository;
  /** MIRROR_POLL_INTERVAL, MIRROR_SYNC_PAGE_SIZE and MIRROR_SYNC_CONCURRENCY, from the config. */
  settings: Config['mirror'];
  /** Push channels; without it (or when Google cannot reach PUBLIC_URL) polling alone keeps the mirror. */
  push?: MirrorPushSettings;
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
  const push = deps.push;
  const upkeep =
    push !== undefined && reachable(push.publicUrl, push.setting)
      ? new ChannelUpkeep({
          db,
          log,
          store: new MirrorChannelRepository(db),
          channels: new MirrorChannels({
            publicUrl: push.publicUrl,
            store: new MirrorChannelRepository(db),
            tokens: push.tokens,
            clientFor: (calendar) => clients.forConnection(calendar),
          }),
        })
      : undefined;
  log.info({ push: upkeep !== undefined }, 'calendar mirror work started');
  const stopSync = await startMirrorSyncWorker(boss, {
    db,
    mirror: new MirrorRepository(db),
    clients,
    log,
    pageSize: settings.pageSize,
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
