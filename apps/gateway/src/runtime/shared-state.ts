/**
 * What gateways share through Redis: rate limits, slot leases, exposures, client capabilities,
 * per-key concurrency and CPU turns, and the channels for elicitation answers, calendar changes
 * and key changes. Without REDIS_URL each process keeps its own.
 */
import { randomBytes } from 'node:crypto';
import {
  connectRedis,
  type ExposureLog,
  type KeyTurns,
  MemoryExposureLog,
  MemoryOnceLedger,
  MemoryRateLimiter,
  MemorySlotLock,
  type OnceLedger,
  type RateLimiter,
  RedisExposureLog,
  RedisKeyTurns,
  RedisOnceLedger,
  RedisRateLimiter,
  RedisSlotLock,
  redisReady,
  type SlotLock,
} from '@calgate/locks';
import type { Redis } from 'ioredis';
import {
  CALENDAR_CHANGES_CHANNEL,
  type CalendarChangePublisher,
  CalendarChanges,
  LISTENERS_KEY,
  LISTENERS_TTL_MS,
  publishWhileListened,
} from '../calendar-changes.ts';
import {
  type ClientCapabilityStore,
  failSafeCapabilities,
  MemoryClientCapabilityStore,
  RedisClientCapabilityStore,
} from '../client-capabilities.ts';
import type { Config } from '../config.ts';
import { ElicitationRelay } from '../http/elicitation-relay.ts';
import { KeySlots } from '../http/key-slots.ts';
import {
  failOpenLogLevels,
  type LogLevelStore,
  MemoryLogLevelStore,
  RedisLogLevelStore,
} from '../log-levels.ts';
import {
  failOpen,
  failOpenExposures,
  failToLocal,
  type OutageLog,
  watchedOnceLedger,
  watchedSlotLock,
} from '../outage-log.ts';

/** Where gateway processes pass clients' answers to elicitation forms. */
const ELICITATION_CHANNEL = 'calgate:elicitations';
/** Told whenever a gateway drops its key cache (grants changed, a key revoked). */
const KEY_CHANGES_CHANNEL = 'calgate:key-changes';

export interface SharedState {
  redis: Redis | undefined;
  rateLimiter: RateLimiter;
  logLevels: LogLevelStore;
  slotLock: SlotLock;
  exposures: ExposureLog;
  /** One use per input_required state; a Redis that does not answer refuses every use (fails closed). */
  inputStates: OnceLedger;
  clientCapabilities: ClientCapabilityStore;
  keySlots: KeyTurns | undefined;
  keyCpuTurns: KeyTurns | undefined;
  elicitations: ElicitationRelay;
  calendarChanges: CalendarChanges;
  publishChanges: CalendarChangePublisher;
  /**
   * `publish` tells the other gateways this one dropped its key cache (of one tenant, or all);
   * `received` is set by the caller. Messages carry ids only, never key material.
   */
  keyChanges: { publish: (tenantId?: string) => void; received: (tenantId?: string) => void };
  /** Disconnects from Redis; undefined without it. */
  close: (() => Promise<void>) | undefined;
}

/** Connects to Redis when configured (starting anyway when it does not answer); `redisOutage` logs its outages. */
export async function sharedState(config: Config, redisOutage: OutageLog): Promise<SharedState> {
  let redis: Redis | undefined;
  let rateLimiter: RateLimiter = new MemoryRateLimiter(config.rateLimit);
  let logLevels: LogLevelStore = new MemoryLogLevelStore();
  // Without Redis, leases are exact only within this one process.
  let slotLock: SlotLock = new MemorySlotLock();
  // What each key's agent was shown that may carry instructions, across gateways with Redis.
  let exposures: ExposureLog = new MemoryExposureLog();
  let clientCapabilities: ClientCapabilityStore = new MemoryClientCapabilityStore();
  let inputStates: OnceLedger = new MemoryOnceLedger();
  // Per-key concurrency and CPU pacing across gateways; without Redis, each process's own.
  let keySlots: KeyTurns | undefined;
  let keyCpuTurns: KeyTurns | undefined;
  let elicitations = new ElicitationRelay();
  // Calendars the mirror saw change, from whichever worker saw them, for listen streams.
  let calendarChanges = new CalendarChanges();
  let publishChanges: CalendarChangePublisher = async (changes) => calendarChanges.emit(changes);
  // Key changes made on any gateway reach every other at once: each drops its key cache.
  const keyChanges: SharedState['keyChanges'] = { publish: () => {}, received: () => {} };
  const runtimeId = randomBytes(8).toString('hex');
  let close: (() => Promise<void>) | undefined;
  if (config.redisUrl !== undefined) {
    const client = connectRedis(config.redisUrl, { name: 'calgate-gateway' });
    // Start with a connected client when Redis is up; when it is not, start anyway: /readyz
    // reports it, rate limits fail open and bookings fail closed until it answers.
    await redisReady(client, 5_000).catch((error: unknown) => redisOutage.failed(error));
    client.on('ready', () => redisOutage.succeeded());
    redis = client;
    rateLimiter = failOpen(new RedisRateLimiter(client, config.rateLimit), redisOutage);
    logLevels = failOpenLogLevels(new RedisLogLevelStore(client), redisOutage);
    slotLock = watchedSlotLock(new RedisSlotLock(client), redisOutage);
    exposures = failOpenExposures(new RedisExposureLog(client), redisOutage);
    inputStates = watchedOnceLedger(new RedisOnceLedger(client), redisOutage);
    clientCapabilities = failSafeCapabilities(new RedisClientCapabilityStore(client), redisOutage);
    const { concurrentPerKey, queuedPerKey } = config.mcpLimits;
    keySlots = failToLocal(
      new RedisKeyTurns(client, {
        limit: concurrentPerKey,
        queued: queuedPerKey,
        describe: (running, waiting) =>
          `This API key already has ${running} calls running and ${waiting} waiting (MCP_MAX_CONCURRENT_PER_KEY ${concurrentPerKey}, MCP_MAX_QUEUED_PER_KEY ${queuedPerKey}); nothing was done. Wait for answers before sending more.`,
      }),
      new KeySlots(config.mcpLimits),
      redisOutage,
    );
    // A key's CPU-bound calls one at a time across gateways, paced; the process's own turns
    // (in the MCP route) still apply, and alone while Redis is away.
    keyCpuTurns = failToLocal(
      new RedisKeyTurns(
        client,
        {
          limit: 1,
          queued: concurrentPerKey + queuedPerKey,
          pace: { maxPauseMs: 250 },
          describe: (running, waiting) =>
            `This API key already has ${running} CPU-bound call running and ${waiting} waiting across the gateways; nothing was done. Wait for answers before sending more.`,
        },
        'calgate:cputurns:',
      ),
      { acquire: async () => () => {} },
      redisOutage,
    );
    // A form's answer may reach another gateway process than the call waiting for it.
    const subscriber = client.duplicate({ connectionName: 'calgate-elicitations', autoResubscribe: false });
    subscriber.on('error', () => {});
    elicitations = new ElicitationRelay({
      publish: (payload) => {
        client.publish(ELICITATION_CHANNEL, payload).catch(() => {});
      },
    });
    const relay = elicitations;
    // Workers publish changes only while some gateway's listen streams keep this key alive.
    calendarChanges = new CalendarChanges(async () => {
      await client.set(LISTENERS_KEY, runtimeId, 'PX', LISTENERS_TTL_MS);
    });
    subscriber.on('message', (channel: string, payload: string) => {
      if (channel === CALENDAR_CHANGES_CHANNEL) {
        calendarChanges.receive(payload);
      } else if (channel === KEY_CHANGES_CHANNEL) {
        // This runtime's own message comes back too; it has dropped its cache already.
        const heard = decodeKeyChange(payload);
        if (heard.from !== runtimeId) {
          keyChanges.received(heard.tenantId);
        }
      } else {
        relay.receive(payload);
      }
    });
    // On every (re)connection: a gateway starts while Redis is away and subscribes once it answers.
    subscriber.on('ready', () => {
      calendarChanges.reannounce();
      subscriber
        .subscribe(ELICITATION_CHANNEL, CALENDAR_CHANGES_CHANNEL, KEY_CHANGES_CHANNEL)
        .catch(() => {});
    });
    // A worker in this process publishes as any other does, so every gateway hears it.
    keyChanges.publish = (tenantId) => publishKeyChange(client, runtimeId, tenantId);
    publishChanges = publishWhileListened(client);
    close = async () => {
      subscriber.disconnect();
      client.disconnect();
    };
  }
  return {
    redis,
    rateLimiter,
    logLevels,
    slotLock,
    exposures,
    inputStates,
    clientCapabilities,
    keySlots,
    keyCpuTurns,
    elicitations,
    calendarChanges,
    publishChanges,
    keyChanges,
    close,
  };
}

/**
 * Tells every gateway that `from` dropped the cached key lookups of `tenantId` (of every tenant
 * without one); a process that keeps no cache of its own (a worker) publishes the same way.
 */
export function publishKeyChange(client: Redis, from: string, tenantId: string | undefined): void {
  client.publish(KEY_CHANGES_CHANNEL, encodeKeyChange(from, tenantId)).catch(() => {});
}

/** `{"from":<runtime>,"tenantId":<tnt_…>}`; without a tenant every key is concerned. */
export function encodeKeyChange(from: string, tenantId: string | undefined): string {
  return JSON.stringify(tenantId === undefined ? { from } : { from, tenantId });
}

/** A key-change message; one this version cannot read concerns every key (the safe reading). */
export function decodeKeyChange(payload: string): { from: string | undefined; tenantId: string | undefined } {
  try {
    const parsed = JSON.parse(payload) as { from?: unknown; tenantId?: unknown } | null;
    return {
      from: typeof parsed?.from === 'string' ? parsed.from : undefined,
      tenantId: typeof parsed?.tenantId === 'string' ? parsed.tenantId : undefined,
    };
  } catch {
    // An earlier version's message: its runtime id alone.
    return { from: payload, tenantId: undefined };
  }
}
