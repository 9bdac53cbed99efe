import type { Redis } from 'ioredis';
import type { OutageLog } from './outage-log.ts';

/**
 * Whether the MCP client of each key declared form elicitation when it last initialised. MCP is
 * served without sessions, so, like the log level, it belongs to the key: the latest client to
 * initialise decides for later requests on any gateway process. Forgotten after a day.
 */
export interface ClientCapabilityStore {
  elicits(keyId: string): Promise<boolean>;
  setElicits(keyId: string, elicits: boolean): Promise<void>;
}

export const CLIENT_CAPABILITY_TTL_MS = 24 * 60 * 60 * 1000;

/** Whether an initialize request's capabilities offer form elicitation (an empty object means form). */
export function declaresFormElicitation(params: unknown): boolean {
  const elicitation = (params as { capabilities?: { elicitation?: unknown } } | null)?.capabilities
    ?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) {
    return false;
  }
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}

export class RedisClientCapabilityStore implements ClientCapabilityStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = 'calgate:elicits:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async elicits(keyId: string): Promise<boolean> {
    return (await this.#redis.get(this.#prefix + keyId)) === '1';
  }

  async setElicits(keyId: string, elicits: boolean): Promise<void> {
    await this.#redis.set(this.#prefix + keyId, elicits ? '1' : '0', 'PX', CLIENT_CAPABILITY_TTL_MS);
  }
}

export class MemoryClientCapabilityStore implements ClientCapabilityStore {
  readonly #keys = new Map<string, { elicits: boolean; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async elicits(keyId: string): Promise<boolean> {
    const entry = this.#keys.get(keyId);
    return entry !== undefined && entry.until > this.#now() && entry.elicits;
  }

  async setElicits(keyId: string, elicits: boolean): Promise<void> {
    const now = this.#now();
    for (const [id, entry] of this.#keys) {
      if (entry.until <= now) {
        this.#keys.delete(id);
      }
    }
    this.#keys.set(keyId, { elicits, until: now + CLIENT_CAPABILITY_TTL_MS });
  }
}

/** While Redis is away a key reads as not eliciting: its risky calls go to the dashboard, never through unchecked. */
export function failSafeCapabilities(store: ClientCapabilityStore, outage: OutageLog): ClientCapabilityStore {
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
    elicits: (keyId) => watched(() => store.elicits(keyId)).catch(() => false),
    setElicits: (keyId, elicits) => watched(() => store.setElicits(keyId, elicits)).catch(() => {}),
  };
}
