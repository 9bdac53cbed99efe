/** pg-boss as Calgate runs it: one schema, two queues, tuned for prompt deliveries. */
import { PgBoss } from 'pg-boss';
import { BOSS_SCHEMA, EVENTS_QUEUE, PROMPT_QUEUE } from './jobs.ts';

export interface BossOptions {
  databaseUrl: string;
  /** A producer (the gateway) only sends; a worker also supervises (expiry, lost heartbeats). */
  role: 'producer' | 'worker';
  /** Seconds between supervision passes of a worker; 5 by default. */
  superviseSeconds?: number;
  /** Connections pg-boss may hold. */
  poolSize?: number;
}

/**
 * How long a worker may hold an occurrence without a heartbeat before another worker takes it
 * over (a worker killed mid-delivery): pg-boss's minimum.
 */
export const HEARTBEAT_SECONDS = 10;

/** Starts pg-boss (installing or migrating its schema under its own advisory lock) with both queues. */
export async function startBoss(options: BossOptions): Promise<PgBoss> {
  const worker = options.role === 'worker';
  const supervise = options.superviseSeconds ?? 5;
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: BOSS_SCHEMA,
    max: options.poolSize ?? (worker ? 6 : 2),
    application_name: worker ? 'calgate-worker' : 'calgate-gateway',
    instanceName: worker ? 'calgate-worker' : 'calgate-gateway',
    supervise: worker,
    schedule: worker,
    superviseIntervalSeconds: supervise,
    monitorIntervalSeconds: supervise,
    migrate: true,
    openTelemetry: { enabled: false },
  });
  // Errors of background passes (a database restart, say) are retried by pg-boss; the caller
  // subscribes to log them. Without a listener an 'error' event would end the process.
  boss.on('error', () => undefined);
  await boss.start({ attempts: 3 });
  await boss.createQueue(PROMPT_QUEUE, {
    heartbeatSeconds: HEARTBEAT_SECONDS,
    expireInSeconds: 120,
    retryLimit: 50,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 60,
    deleteAfterSeconds: 7 * 86_400,
  });
  await boss.createQueue(EVENTS_QUEUE, {
    expireInSeconds: 300,
    retryLimit: 2,
    deleteAfterSeconds: 86_400,
  });
  return boss;
}
