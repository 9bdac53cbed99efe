/**
 * What connecting and disconnecting an account (Google, Microsoft) means for the mirror, gateway side.
 * Gateways only enqueue: a calendar found on a connection gets its sync job ('initial' when it is
 * new, 'reconnect' when a reconnect may have ended a needs_reauth pause), and a worker syncs it.
 * Disconnecting stops the connection's push channels upstream while its token still works, then
 * deletes its mirror (the calendars' foreign keys would cascade too; this keeps the order
 * explicit and the delete independent of how the connection row goes).
 */
import type { MirrorChannelRepository, MirrorRepository } from '@calgate/store';
import type { Logger } from 'pino';
import { stopConnectionChannels } from './channel-upkeep.ts';
import type { MirrorChannels } from './channels.ts';
import type { MirrorJobs } from './jobs.ts';

export interface ConnectionMirror {
  /** Calendars recorded on a connection (`created`: new to Calgate); their syncs are queued. */
  calendarsFound(tenantId: string, calendars: readonly { id: string; created: boolean }[]): Promise<void>;
  /** Before a connection is removed: stops its channels, deletes its mirror. */
  disconnecting(tenantId: string, connectionId: string): Promise<void>;
}

export interface ConnectionMirrorDeps {
  jobs: Pick<MirrorJobs, 'enqueue'>;
  mirror: Pick<MirrorRepository, 'deleteConnection'>;
  store: MirrorChannelRepository;
  /** Only `stop` is used here; opening channels is the worker's. */
  channels: Pick<MirrorChannels, 'stop'>;
  log: Logger;
}

export function connectionMirror(deps: ConnectionMirrorDeps): ConnectionMirror {
  return {
    async calendarsFound(tenantId, calendars) {
      for (const calendar of calendars) {
        await deps.jobs.enqueue(tenantId, calendar.id, calendar.created ? 'initial' : 'reconnect');
      }
    },
    async disconnecting(tenantId, connectionId) {
      const stopped = await stopConnectionChannels(deps, tenantId, connectionId);
      const removed = await deps.mirror.deleteConnection(tenantId, connectionId);
      deps.log.info(
        { tenantId, connectionId, channels: stopped, events: removed },
        'mirror of the account deleted',
      );
    },
  };
}
