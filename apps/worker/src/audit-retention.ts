import { type Database, OAuthRepository, pruneAuditLog } from '@calgate/store';
import type { Logger } from 'pino';
import type { PeriodicJob } from './periodic.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface AuditRetentionOptions {
  db: Database;
  log: Logger;
  retentionDays: number;
  intervalMs: number;
  batchSize: number;
  now: () => Date;
}

/** Deletes audit entries older than the retention period; returns how many were deleted. */
export function auditRetentionJob(options: AuditRetentionOptions): PeriodicJob<number> {
  return {
    name: 'audit-retention',
    intervalMs: options.intervalMs,
    async run(signal) {
      const before = new Date(options.now().getTime() - options.retentionDays * DAY_MS);
      const deleted = await pruneAuditLog(options.db, { before, batchSize: options.batchSize, signal });
      if (deleted > 0) {
        options.log.info({ deleted, before: before.toISOString() }, 'pruned old audit entries');
      }
      return deleted;
    },
  };
}

/**
 * Deletes OAuth codes and refresh tokens a day after they expired, and connections no app can
 * use any more (see OAuthRepository.pruneExpired); returns how many rows went.
 */
export function oauthUpkeepJob(
  options: Omit<AuditRetentionOptions, 'retentionDays' | 'batchSize'>,
): PeriodicJob<number> {
  const oauth = new OAuthRepository(options.db);
  return {
    name: 'oauth-upkeep',
    intervalMs: options.intervalMs,
    async run() {
      const { codes, refreshTokens, connections } = await oauth.pruneExpired(options.now());
      if (codes + refreshTokens + connections > 0) {
        options.log.info(
          { codes, refreshTokens, connections },
          'pruned expired OAuth codes and refresh tokens, and unused connections',
        );
      }
      return codes + refreshTokens + connections;
    },
  };
}
