import { randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { Redis } from 'ioredis';

/**
 * Turns per key shared by every gateway process: at most `limit` holders of a key at once, the
 * next `queued` callers waiting first come, first served (across processes), anyone beyond that
 * refused at once. With `pace`, a holder that kept its turn for d ms makes the key's next turn
 * wait min(d, maxPauseMs): the key's CPU-bound calls then get at most about half of one process,
 * however many gateways they are spread over.
 *
 * A holder's turn is a lease renewed while it is held, so a gateway killed mid-call frees its
 * turns within `leaseMs`; a waiter that stops asking (its process died) leaves the queue within
 * `waiterTtlMs`. Waiters poll (10 ms, growing to 100 ms). A turn ending passes straight to the
 * longest-waiting caller of the same process, if there is one (without pacing): calls queued on a
 * busy gateway then follow each other without a round trip to Redis, and may go before callers
 * queued earlier on another gateway; otherwise the turn goes back to Redis, where the queue's
 * order holds.
 */
export interface KeyTurnsPolicy {
  limit: number;
  queued: number;
  /** What a refusal says about the limits (which settings to change). */
  describe: (running: number, waiting: number) => string;
  pace?: { maxPauseMs: number };
  leaseMs?: number;
  waiterTtlMs?: number;
}

/**
 * Waits for one of the key's turns and returns its release; throws when the queue is full, or
 * with the signal's reason when the caller gives up while waiting (its place in the queue goes).
 */
export interface KeyTurns {
  acquire(key: string, signal?: AbortSignal): Promise<() => void>;
}

/**
 * Tokens of this process's turns and places in queues: a random prefix (unique across processes)
 * and a count, instead of random bytes per call.
 */
const TOKEN_PREFIX = randomBytes(12).toString('base64url');
let tokens = 0;

/**
 * How long a turn that no caller of this process waits for stays with the process when it ends,
 * for the key's next call here (calls that follow each other then ask Redis for no turn and give
 * none back, one round trip each fewer) before it goes back to Redis.
 */
const PARK_MS = 5;

const DEFAULT_LEASE_MS = 15_000;
const DEFAULT_WAITER_TTL_MS = 2_000;
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 100;

// KEYS: holders (zset token → lease expiry), waiters (zset token → arrival), waiter expiries
// (zset token → expiry), arrival counter, not-before (pacing). ARGV: token, limit, queued,
// leaseMs, waiterTtlMs. Answers {1} granted, {0, waitMs} wait, {-1, running, waiting} refused.
const ACQUIRE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local token, limit, queued = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local lease, waiterTtl = tonumber(ARGV[4]), tonumber(ARGV[5])
local keep = math.max(lease, waiterTtl) + 60000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, member in ipairs(gone) do redis.call('ZREM', KEYS[2], member) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local running = redis.call('ZCARD', KEYS[1])
local waiting = redis.call('ZCARD', KEYS[2])
local rank = redis.call('ZRANK', KEYS[2], token)
local notBefore = tonumber(redis.call('GET', KEYS[5]) or '0')
local free = limit - running
local mayRun
if rank then mayRun = rank < free else mayRun = free > 0 and waiting == 0 end
if mayRun and now >= notBefore then
  if rank then
    redis.call('ZREM', KEYS[2], token)
    redis.call('ZREM', KEYS[3], token)
  end
  redis.call('ZADD', KEYS[1], now + lease, token)
  redis.call('PEXPIRE', KEYS[1], keep)
  return {1}
end
if not rank then
  if waiting >= queued then
    return {-1, running, waiting}
  end
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), token)
  for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], keep) end
end
redis.call('ZADD', KEYS[3], now + waiterTtl, token)
redis.call('PEXPIRE', KEYS[3], keep)
if mayRun then return {0, notBefore - now} end
return {0, 0}`;

// KEYS: holders, not-before. ARGV: token, pauseMs.
const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
local pause = tonumber(ARGV[2])
if pause > 0 then
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  redis.call('SET', KEYS[2], tostring(now + pause), 'PX', pause + 1000)
end
return 0`;

// KEYS: holders. ARGV: token, leaseMs. Extends the lease only while it is still held.
const RENEW = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
return redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])`;

interface TurnScripts {
  calgateTurnAcquire(
    holders: string,
    waiters: string,
    expiries: string,
    counter: string,
    notBefore: string,
    token: string,
    limit: number,
    queued: number,
    leaseMs: number,
    waiterTtlMs: number,
  ): Promise<number[]>;
  calgateTurnRelease(holders: string, notBefore: string, token: string, pauseMs: number): Promise<number>;
  calgateTurnRenew(holders: string, token: string, leaseMs: number): Promise<number>;
}

interface TurnKeys {
  holders: string;
  waiters: string;
  expiries: string;
  counter: string;
  notBefore: string;
}

/** A caller of this process waiting for one of a key's turns. */
interface Waiter {
  /** Its place in the key's queue in Redis. */
  token: string;
  /** A turn passed on by a caller of this process that finished (its lease, still held in Redis). */
  handed?: string;
  wake?: () => void;
  /** The caller's, when it may give up while waiting. */
  signal?: AbortSignal | undefined;
}

/** Key turns kept in Redis, so they hold across every gateway process that shares it. */
export class RedisKeyTurns implements KeyTurns {
  readonly #client: Redis;
  readonly #redis: TurnScripts;
  readonly #policy: KeyTurnsPolicy;
  readonly #prefix: string;
  readonly #leaseMs: number;
  readonly #waiterTtlMs: number;
  /** Callers of this process waiting for each key's turns, in arrival order. */
  readonly #waiters = new Map<string, Waiter[]>();
  /** Turns of each key this process holds (parked ones included). */
  readonly #held = new Map<string, number>();
  /** A turn of each key that ended with nobody here waiting, kept for PARK_MS. */
  readonly #parked = new Map<string, { token: string; timer: NodeJS.Timeout }>();

  constructor(redis: Redis, policy: KeyTurnsPolicy, prefix = 'calgate:turns:') {
    this.#client = redis;
    this.#policy = policy;
    this.#prefix = prefix;
    this.#leaseMs = policy.leaseMs ?? DEFAULT_LEASE_MS;
    this.#waiterTtlMs = policy.waiterTtlMs ?? DEFAULT_WAITER_TTL_MS;
    if (typeof (redis as Partial<TurnScripts>).calgateTurnAcquire !== 'function') {
      redis.defineCommand('calgateTurnAcquire', { numberOfKeys: 5, lua: ACQUIRE });
      redis.defineCommand('calgateTurnRelease', { numberOfKeys: 2, lua: RELEASE });
      redis.defineCommand('calgateTurnRenew', { numberOfKeys: 1, lua: RENEW });
    }
    this.#redis = redis as unknown as TurnScripts;
  }

  async acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const parked = this.#parked.get(key);
    if (parked !== undefined) {
      this.#parked.delete(key);
      clearTimeout(parked.timer);
      return this.#holding(key, parked.token, true);
    }
    tokens += 1;
    const me: Waiter = { token: `${TOKEN_PREFIX}${tokens.toString(36)}` };
    const queue = this.#waiters.get(key) ?? [];
    // Behind this process's own waiters while it holds every turn: the next turns can only be
    // ones it ends, passed on here in order, so such a caller waits for one without a place in
    // Redis (no script, no queue entry to take back). At most `queued` wait so; beyond that, and
    // whenever a turn may come from elsewhere, a caller asks Redis as ever.
    const passedOn =
      this.#policy.pace === undefined &&
      queue.length > 0 &&
      queue.length < this.#policy.queued &&
      (this.#held.get(key) ?? 0) >= this.#policy.limit;
    queue.push(me);
    this.#waiters.set(key, queue);
    try {
      me.signal = signal;
      const token = passedOn ? await this.#passedOn(me) : await this.#take(key, me);
      // A turn passed on stayed this process's (its count did not go down when it was passed).
      const release = this.#holding(key, token, token === me.handed);
      if (signal?.aborted) {
        // Granted as the caller gave up: it goes on at once.
        release();
        throw signal.reason;
      }
      return release;
    } finally {
      this.#leave(key, me);
    }
  }

  /** Waits until a turn ending in this process is passed to `me` (or `me` gives up). */
  #passedOn(me: Waiter): Promise<string> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (me.handed === undefined) {
          me.wake = undefined;
          reject(me.signal?.reason);
        }
      };
      me.signal?.addEventListener('abort', onAbort, { once: true });
      me.wake = () => {
        if (me.handed !== undefined) {
          me.signal?.removeEventListener('abort', onAbort);
          me.wake = undefined;
          resolve(me.handed);
        }
      };
    });
  }

  /** Keys of one key's turns; one hash slot per key ({…}), so the scripts also run on a Redis cluster. */
  #keys(key: string): TurnKeys {
    const base = `${this.#prefix}{${key}}:`;
    return {
      holders: `${base}h`,
      waiters: `${base}w`,
      expiries: `${base}we`,
      counter: `${base}n`,
      notBefore: `${base}nb`,
    };
  }

  /** Waits for a turn; resolves with the token of the lease held. */
  async #take(key: string, me: Waiter): Promise<string> {
    const keys = this.#keys(key);
    let poll = FIRST_POLL_MS;
    for (;;) {
      if (me.handed !== undefined) {
        return this.#handed(keys, me, 0);
      }
      let answer: number[];
      try {
        answer = await this.#redis.calgateTurnAcquire(
          keys.holders,
          keys.waiters,
          keys.expiries,
          keys.counter,
          keys.notBefore,
          me.token,
          this.#policy.limit,
          this.#policy.queued,
          this.#leaseMs,
          this.#waiterTtlMs,
        );
      } catch (error) {
        if (me.handed !== undefined) {
          return this.#handed(keys, me, 0);
        }
        throw error;
      }
      const [state = 0, first = 0, second = 0] = answer;
      if (me.handed !== undefined) {
        return this.#handed(keys, me, state);
      }
      if (state === 1) {
        return me.token;
      }
      if (state === -1) {
        throw new CalgateError('rate_limited', this.#policy.describe(first, second), {
          retry: true,
          retryAfterMs: 1000,
        });
      }
      if (me.signal?.aborted) {
        // Given up while waiting: its place in the queue goes now rather than after waiterTtlMs.
        this.#client.zrem(keys.waiters, me.token).catch(() => {});
        this.#client.zrem(keys.expiries, me.token).catch(() => {});
        throw me.signal.reason;
      }
      await this.#sleep(me, first > 0 ? first : poll);
      poll = Math.min(MAX_POLL_MS, poll * 2);
    }
  }

  /** Takes a turn passed on in this process: its own place in Redis (a turn or the queue) goes. */
  #handed(keys: TurnKeys, me: Waiter, state: number): string {
    if (state === 1) {
      this.#redis.calgateTurnRelease(keys.holders, keys.notBefore, me.token, 0).catch(() => {});
    } else {
      this.#client.zrem(keys.waiters, me.token).catch(() => {});
      this.#client.zrem(keys.expiries, me.token).catch(() => {});
    }
    return me.handed as string;
  }

  #leave(key: string, me: Waiter): void {
    const queue = this.#waiters.get(key);
    const at = queue?.indexOf(me) ?? -1;
    if (queue !== undefined && at >= 0) {
      queue.splice(at, 1);
      if (queue.length === 0) {
        this.#waiters.delete(key);
      }
    }
  }

  #holding(key: string, token: string, passed: boolean): () => void {
    const keys = this.#keys(key);
    const started = performance.now();
    if (!passed) {
      this.#held.set(key, (this.#held.get(key) ?? 0) + 1);
    }
    // Calls normally end long before the lease would lapse; a long one keeps it.
    const renew = setInterval(
      () => {
        this.#redis.calgateTurnRenew(keys.holders, token, this.#leaseMs).catch(() => {});
      },
      Math.max(100, Math.floor(this.#leaseMs / 3)),
    );
    renew.unref();
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      clearInterval(renew);
      const pace = this.#policy.pace;
      if (pace === undefined) {
        // Straight to this process's longest-waiting caller, as the lease it is (as on one
        // gateway): no round trip to Redis between one call and the next.
        const next = this.#waiters.get(key)?.[0];
        if (next !== undefined) {
          next.handed = token;
          this.#leave(key, next);
          next.wake?.();
          return;
        }
        // Kept a moment for the key's next call here (one turn parked per key), then given back.
        if (!this.#parked.has(key)) {
          const timer = setTimeout(() => {
            if (this.#parked.get(key)?.token === token) {
              this.#parked.delete(key);
              this.#giveBack(key, token, 0);
            }
          }, PARK_MS);
          timer.unref();
          this.#parked.set(key, { token, timer });
          return;
        }
      }
      const pause =
        pace === undefined ? 0 : Math.min(pace.maxPauseMs, Math.ceil(performance.now() - started));
      this.#giveBack(key, token, pause);
    };
  }

  /** Gives a turn of this process back to Redis. */
  #giveBack(key: string, token: string, pause: number): void {
    const keys = this.#keys(key);
    const held = (this.#held.get(key) ?? 1) - 1;
    if (held > 0) {
      this.#held.set(key, held);
    } else {
      this.#held.delete(key);
    }
    // A release that does not reach Redis lapses with its lease.
    this.#redis
      .calgateTurnRelease(keys.holders, keys.notBefore, token, pause)
      .catch(() => {})
      .finally(() => {
        // The longest-waiting caller of this process asks at once (the queue's order is kept
        // in Redis: when another process's caller is ahead, that one takes the turn instead).
        this.#waiters.get(key)?.[0]?.wake?.();
      });
  }

  #sleep(me: Waiter, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        me.signal?.removeEventListener('abort', done);
        me.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      me.signal?.addEventListener('abort', done, { once: true });
      me.wake = done;
    });
  }
}
