import { isLogLevel, type LogLevel } from '@calgate/tools';
import type { Redis } from 'ioredis';
import type { OutageLog } from './outage-log.ts';

/**
 * The MCP log level each API key last asked for (`logging/setLevel`). MCP is served without
 * sessions, so the level belongs to the key: every later request of that key, on any gateway
 * process, sends log messages at or above it. A level not set again within a day is forgotten.
 */
export interface LogLevelStore {
  get(keyId: string): Promise<LogLevel | undefined>;
  set(keyId: string, level: LogLevel): Promise<void>;
}

/** How long a key's level is kept after it was last set. */
export const LOG_LEVEL_TTL_MS = 24 * 60 * 60 * 1000;

/** Levels shared by every gateway process through Redis. */
export class RedisLogLevelStore implements LogLevelStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = 'calgate:loglevel:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async get(keyId: string): Promise<LogLevel | undefined> {
    const value = await this.#redis.get(this.#prefix + keyId);
    return isLogLevel(value) ? value : undefined;
  }

  async set(keyId: string, level: LogLevel): Promise<void> {
    await this.#redis.set(this.#prefix + keyId, level, 'PX', LOG_LEVEL_TTL_MS);
  }
}

/** Levels of this process only, for a gateway without Redis. */
export class MemoryLogLevelStore implements LogLevelStore {
  readonly #levels = new Map<string, { level: LogLevel; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async get(keyId: string): Promise<LogLevel | undefined> {
    const entry = this.#levels.get(keyId);
    if (entry === undefined) {
      return undefined;
    }
    if (entry.until <= this.#now()) {
      this.#levels.delete(keyId);
      return undefined;
    }
    return entry.level;
  }

  async set(keyId: string, level: LogLevel): Promise<void> {
    const now = this.#now();
    // Forgotten levels go when others are set, so keys that never come back do not pile up.
    for (const [id, entry] of this.#levels) {
      if (entry.until <= now) {
        this.#levels.delete(id);
      }
    }
    this.#levels.set(keyId, { level, until: now + LOG_LEVEL_TTL_MS });
  }
}

/**
 * Levels that never hold a call up while Redis is away: reading answers "no level" (no log
 * messages), setting fails (the client is told), and the outage is logged once, not per request.
 */
export function failOpenLogLevels(store: LogLevelStore, outage: OutageLog): LogLevelStore {
  async function watched<T>(op: () => Promise<T>): Promise<T> {
    const startedAt = outage.start();
    try {
      const value = await op();
      outage.succeeded(startedAt);
      return value;
    } catch (error) {
      outage.failed(error, startedAt);
      throw error;
    }
  }
  return {
    get: (keyId) => watched(() => store.get(keyId)).catch(() => undefined),
    set: (keyId, level) => watched(() => store.set(keyId, level)),
  };
}
