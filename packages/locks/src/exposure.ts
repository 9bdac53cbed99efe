import type { Redis } from 'ioredis';

/**
 * Something a principal's agent was shown that may carry instructions it should not follow: a
 * field the screening withheld, or an event organised outside the person's domains. Recorded so
 * that a later action that destroys or sends data out can name what preceded it.
 */
export interface Exposure {
  /** When the answer carrying it was returned (epoch ms). */
  at: number;
  kind: 'flagged' | 'outside_organizer';
  /** The tool whose answer carried it. */
  tool: string;
  calendarId: string;
  eventId: string;
  /** For people and audit: "description addresses an AI assistant", "organised by a@b.example". Never the text itself. */
  detail: string;
}

/** What each principal was recently exposed to, shared by every gateway process. */
export interface ExposureLog {
  /** Adds exposures for a principal (`<tenantId>:<keyId>`); nothing happens for an empty list. */
  record(principal: string, exposures: readonly Exposure[]): Promise<void>;
  /** The principal's exposures within the log's lifetime, newest first, at most `MAX_KEPT`. */
  recent(principal: string): Promise<Exposure[]>;
  /** Forgets a principal's exposures (a person confirmed, or the policy was switched off). */
  clear(principal: string): Promise<void>;
}

/** How many exposures a principal keeps; the newest matter, older ones add nothing to a question. */
export const MAX_KEPT = 20;

/** How long an exposure counts: an agent that read an invitation half an hour ago still has it in context. */
export const EXPOSURE_TTL_MS = 60 * 60_000;

function fresh(exposures: readonly Exposure[], now: number, ttlMs: number): Exposure[] {
  return exposures.filter((exposure) => now - exposure.at < ttlMs);
}

/** In-process log: exact for one gateway process (embedded mode, tests). */
export class MemoryExposureLog implements ExposureLog {
  readonly #entries = new Map<string, Exposure[]>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(ttlMs = EXPOSURE_TTL_MS, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  async record(principal: string, exposures: readonly Exposure[]): Promise<void> {
    if (exposures.length === 0) {
      return;
    }
    const now = this.#now();
    const kept = fresh(this.#entries.get(principal) ?? [], now, this.#ttlMs);
    const newestFirst = [...exposures].reverse();
    this.#entries.set(principal, [...newestFirst, ...kept].slice(0, MAX_KEPT));
    if (this.#entries.size > 10_000) {
      this.#sweep(now);
    }
  }

  async recent(principal: string): Promise<Exposure[]> {
    return fresh(this.#entries.get(principal) ?? [], this.#now(), this.#ttlMs);
  }

  async clear(principal: string): Promise<void> {
    this.#entries.delete(principal);
  }

  #sweep(now: number): void {
    for (const [principal, exposures] of this.#entries) {
      if (fresh(exposures, now, this.#ttlMs).length === 0) {
        this.#entries.delete(principal);
      }
    }
  }
}

function parse(text: string): Exposure | undefined {
  try {
    return JSON.parse(text) as Exposure;
  } catch {
    return undefined;
  }
}

/** Redis-backed log: one list per principal, newest first, trimmed and expiring with its newest entry. */
export class RedisExposureLog implements ExposureLog {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(
    redis: Redis,
    prefix = 'calgate:exposure:',
    ttlMs = EXPOSURE_TTL_MS,
    now: () => number = Date.now,
  ) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  async record(principal: string, exposures: readonly Exposure[]): Promise<void> {
    if (exposures.length === 0) {
      return;
    }
    const key = this.#prefix + principal;
    await this.#redis
      .multi()
      .lpush(key, ...exposures.map((exposure) => JSON.stringify(exposure)))
      .ltrim(key, 0, MAX_KEPT - 1)
      .pexpire(key, this.#ttlMs)
      .exec();
  }

  async recent(principal: string): Promise<Exposure[]> {
    const texts = await this.#redis.lrange(this.#prefix + principal, 0, MAX_KEPT - 1);
    const exposures = texts.map(parse).filter((exposure) => exposure !== undefined);
    return fresh(exposures, this.#now(), this.#ttlMs);
  }

  async clear(principal: string): Promise<void> {
    await this.#redis.del(this.#prefix + principal);
  }
}
