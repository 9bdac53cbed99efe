import { CalgateError } from '@calgate/core';
import {
  API_KEY_PATTERN,
  type ApiKeyRepository,
  type Database,
  hashApiKey,
  type KeyAccess,
  loadKeyAccess,
  loadKeyAccessById,
} from '@calgate/store';
import { type AccessTokens, looksLikeJwt } from './oauth/tokens.ts';

export type AuthFailure =
  | 'missing'
  | 'malformed'
  | 'unknown'
  | 'revoked'
  | 'expired'
  | 'token_invalid'
  | 'token_expired';

export type AuthResult = { ok: true; access: KeyAccess } | { ok: false; reason: AuthFailure };

export const AUTH_FAILURE_MESSAGES: Record<AuthFailure, string> = {
  missing: 'An API key is required: send Authorization: Bearer <key>.',
  malformed:
    'The Authorization header holds neither a Calgate API key (Bearer cg_live_...) nor a Calgate access token.',
  unknown: 'This API key is not valid.',
  revoked: 'This API key or connected app has been revoked.',
  expired: 'This API key has expired.',
  token_invalid:
    'This access token was not issued by this Calgate for this MCP URL (wrong signature, issuer or audience); authorize again.',
  token_expired: 'This access token has expired; use the refresh token for a new one.',
};

interface CacheEntry {
  access: KeyAccess | null;
  fetchedAt: number;
}

export interface KeyAuthenticatorOptions {
  db: Database;
  keys: ApiKeyRepository;
  /** How long a lookup is reused; bounds how late a revocation takes effect. */
  ttlMs: number;
  now?: () => number;
  /** How often last-used times are written, batched. */
  touchIntervalMs?: number;
  maxEntries?: number;
  /** OAuth access tokens, accepted beside API keys when given. */
  tokens?: AccessTokens;
  /** Told whether each lookup reached the database, e.g. to log an outage once. */
  health?: { failed(error: unknown, startedAt?: number): void; succeeded(startedAt?: number): void };
}

/** A lookup that did not reach the database: the key may be fine, so the caller should retry. */
function lookupUnavailable(cause: unknown): CalgateError {
  return new CalgateError(
    'unavailable',
    'Calgate is briefly unavailable: it cannot check API keys while its database does not answer. Try again in a few seconds.',
    { retry: true, retryAfterMs: 2_000, cause },
  );
}

/**
 * Bearer API key → key, tenant and grants. Lookups are cached for `ttlMs` (≤ 5 s) with one
 * in-flight query per key, so a revoked key stops working within that time on every process.
 * Expiry is checked on every call against the clock. A lookup the database does not answer
 * throws CalgateError 'unavailable' (HTTP 503 with Retry-After).
 */
export class KeyAuthenticator {
  readonly #db: Database;
  readonly #keys: ApiKeyRepository;
  readonly #ttl: number;
  readonly #now: () => number;
  readonly #max: number;
  readonly #health: KeyAuthenticatorOptions['health'];
  readonly #tokens: AccessTokens | undefined;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, { fetching: Promise<CacheEntry>; generation: number }>();
  /**
   * Moved on by every invalidate(): a lookup begun before it may have read what the change
   * replaced, so it is neither shared with later callers nor kept in the cache.
   */
  #generation = 0;
  readonly #used = new Set<string>();
  readonly #listeners = new Set<(from: 'here' | 'peer', tenantId?: string) => void>();
  readonly #timer: NodeJS.Timeout;

  constructor(options: KeyAuthenticatorOptions) {
    this.#db = options.db;
    this.#keys = options.keys;
    this.#ttl = options.ttlMs;
    this.#now = options.now ?? Date.now;
    this.#max = options.maxEntries ?? 10_000;
    this.#health = options.health;
    this.#tokens = options.tokens;
    this.#timer = setInterval(() => void this.flushUsage(), options.touchIntervalMs ?? 30_000);
    this.#timer.unref();
  }

  async authenticate(header: string | undefined): Promise<AuthResult> {
    if (header === undefined || header.trim() === '') {
      return { ok: false, reason: 'missing' };
    }
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    const secret = match?.[1];
    if (secret !== undefined && this.#tokens !== undefined && looksLikeJwt(secret)) {
      return this.#authenticateToken(this.#tokens, secret);
    }
    if (secret === undefined || !API_KEY_PATTERN.test(secret)) {
      return { ok: false, reason: 'malformed' };
    }
    const hash = hashApiKey(secret);
    const { access } = await this.#lookup(Buffer.from(hash).toString('hex'), () =>
      loadKeyAccess(this.#db, hash),
    );
    return this.#admit(access);
  }

  /**
   * An OAuth access token: its signature, issuer, audience and expiry say who it is for; the
   * connection it names is then loaded (and cached) like a key, so revoking it takes effect as fast.
   */
  async #authenticateToken(tokens: AccessTokens, token: string): Promise<AuthResult> {
    const checked = await tokens.verify(token);
    if (!checked.ok) {
      return { ok: false, reason: checked.reason };
    }
    const { tenantId, keyId } = checked.claims;
    const { access } = await this.#lookup(`oauth:${tenantId}:${keyId}`, () =>
      loadKeyAccessById(this.#db, tenantId, keyId),
    );
    return this.#admit(access);
  }

  #admit(access: KeyAccess | null): AuthResult {
    if (access === null) {
      return { ok: false, reason: 'unknown' };
    }
    if (access.revokedAt !== null) {
      return { ok: false, reason: 'revoked' };
    }
    if (access.expiresAt !== null && access.expiresAt.getTime() <= this.#now()) {
      return { ok: false, reason: 'expired' };
    }
    this.#used.add(access.keyId);
    return { ok: true, access };
  }

  /**
   * Forgets cached lookups, e.g. after this process changed grants or revoked a key (`here`), or
   * after another gateway process did and said so (`peer`, see runtime.ts). With `tenantId`, only
   * that tenant's keys (and keys found unknown) are forgotten, and a change another gateway made
   * to a tenant this one holds nothing of is no work at all: its listeners are not told.
   */
  invalidate(from: 'here' | 'peer' = 'here', tenantId?: string): void {
    this.#generation++;
    if (tenantId === undefined) {
      this.#cache.clear();
    } else {
      let held = false;
      for (const [id, entry] of this.#cache) {
        if (entry.access === null || entry.access.tenantId === tenantId) {
          held ||= entry.access !== null;
          this.#cache.delete(id);
        }
      }
      if (from === 'peer' && !held) {
        return;
      }
    }
    for (const listener of this.#listeners) {
      listener(from, tenantId);
    }
  }

  /** Calls `listener` after every invalidate() (with its tenant, when scoped); returns the unsubscribe function. */
  onInvalidate(listener: (from: 'here' | 'peer', tenantId?: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async flushUsage(): Promise<void> {
    if (this.#used.size === 0) {
      return;
    }
    const ids = [...this.#used];
    this.#used.clear();
    try {
      await this.#keys.touch(ids, new Date(this.#now()));
    } catch {
      // Last-used times are informational; the next flush retries with newer ones.
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flushUsage();
  }

  async #lookup(id: string, load: () => Promise<KeyAccess | null>): Promise<CacheEntry> {
    const cached = this.#cache.get(id);
    if (cached !== undefined && this.#now() - cached.fetchedAt < this.#ttl) {
      return cached;
    }
    const generation = this.#generation;
    const pending = this.#inFlight.get(id);
    if (pending !== undefined && pending.generation === generation) {
      return pending.fetching;
    }
    const startedAt = Date.now();
    const fetching = load()
      .catch((error: unknown) => {
        this.#health?.failed(error, startedAt);
        throw lookupUnavailable(error);
      })
      .then((access) => {
        this.#health?.succeeded(startedAt);
        const entry = { access, fetchedAt: this.#now() };
        if (generation !== this.#generation) {
          return entry;
        }
        this.#cache.delete(id);
        this.#cache.set(id, entry);
        if (this.#cache.size > this.#max) {
          const oldest = this.#cache.keys().next().value;
          if (oldest !== undefined) {
            this.#cache.delete(oldest);
          }
        }
        return entry;
      })
      .finally(() => {
        if (this.#inFlight.get(id)?.fetching === fetching) {
          this.#inFlight.delete(id);
        }
      });
    this.#inFlight.set(id, { fetching, generation });
    return fetching;
  }
}
