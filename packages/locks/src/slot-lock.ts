import { randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { Redis } from 'ioredis';

/** A held lock on [start, end) of one calendar. */
export interface SlotLease {
  calendarId: string;
  start: number;
  end: number;
  /** Random and secret to the holder: only it can release this lease. */
  token: string;
  /** Epoch ms after which the lease lapses on its own. */
  expiresAt: number;
}

export interface HeldRange {
  start: number;
  end: number;
  expiresAt: number;
}

/**
 * Mutual exclusion over time ranges of a calendar: a lease covers every overlapping range, not
 * only the identical slot. Leases expire after their TTL so a crashed holder cannot block a
 * calendar; release is compare-and-delete on the holder's token, so a holder whose lease lapsed
 * can never release the lease of whoever holds the range now.
 */
export interface SlotLock {
  /** A lease on the range, or null when an overlapping lease is held. */
  acquire(
    calendarId: string,
    range: { start: number; end: number },
    ttlMs: number,
  ): Promise<SlotLease | null>;
  /** Releases the lease; false when it had already lapsed (or was never held). */
  release(lease: SlotLease): Promise<boolean>;
  /** Live leases overlapping the range. */
  held(calendarId: string, range: { start: number; end: number }): Promise<HeldRange[]>;
}

function newToken(): string {
  return randomBytes(18).toString('base64url');
}

function validate(range: { start: number; end: number }, ttlMs: number): void {
  if (!(range.end > range.start) || !(ttlMs > 0)) {
    throw new CalgateError('invalid_argument', 'A slot lock needs end > start and a positive TTL.');
  }
}

/** In-process leases: exact within one process (embedded mode and tests). */
export class MemorySlotLock implements SlotLock {
  readonly #leases = new Map<string, Map<string, HeldRange>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async acquire(
    calendarId: string,
    range: { start: number; end: number },
    ttlMs: number,
  ): Promise<SlotLease | null> {
    validate(range, ttlMs);
    const now = this.#now();
    const leases = this.#live(calendarId, now);
    for (const held of leases.values()) {
      if (held.start < range.end && range.start < held.end) {
        return null;
      }
    }
    const token = newToken();
    const expiresAt = now + ttlMs;
    leases.set(token, { start: range.start, end: range.end, expiresAt });
    return { calendarId, start: range.start, end: range.end, token, expiresAt };
  }

  async release(lease: SlotLease): Promise<boolean> {
    const leases = this.#leases.get(lease.calendarId);
    const held = leases?.get(lease.token);
    if (leases === undefined || held === undefined) {
      return false;
    }
    leases.delete(lease.token);
    return held.expiresAt > this.#now();
  }

  async held(calendarId: string, range: { start: number; end: number }): Promise<HeldRange[]> {
    return [...this.#live(calendarId, this.#now()).values()].filter(
      (h) => h.start < range.end && range.start < h.end,
    );
  }

  #live(calendarId: string, now: number): Map<string, HeldRange> {
    let leases = this.#leases.get(calendarId);
    if (leases === undefined) {
      leases = new Map();
      this.#leases.set(calendarId, leases);
    }
    for (const [token, held] of leases) {
      if (held.expiresAt <= now) {
        leases.delete(token);
      }
    }
    return leases;
  }
}

// Set-if-absent with a TTL and a random token (SET NX PX), generalised from one key to ranges:
// one hash per calendar, field = token, value = "start:end:expiresAt", all on Redis's clock and
// checked and written atomically by one script.
const ACQUIRE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local start = tonumber(ARGV[1])
local stop = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local s, e, x = string.match(entries[i + 1], '^(%d+):(%d+):(%d+)$')
  if tonumber(x) <= now then
    redis.call('HDEL', KEYS[1], entries[i])
  elseif tonumber(s) < stop and start < tonumber(e) then
    return {0, 0}
  end
end
local expires = now + ttl
redis.call('HSET', KEYS[1], ARGV[4], string.format('%d:%d:%d', start, stop, expires))
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return {1, expires}`;

// Compare-and-delete: only the holder's own token is ever removed.
const RELEASE = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local _, _, x = string.match(value, '^(%d+):(%d+):(%d+)$')
if tonumber(x) > now then
  return 1
end
return 0`;

interface LockScripts {
  calgateSlotAcquire(
    key: string,
    start: number,
    end: number,
    ttl: number,
    token: string,
  ): Promise<[number, number]>;
  calgateSlotRelease(key: string, token: string): Promise<number>;
}

function unreachable(error: unknown): CalgateError {
  return new CalgateError(
    'unavailable',
    'Booking is unavailable right now: the lock service (Redis) cannot be reached. Nothing was booked; try again shortly.',
    { retry: true, cause: error },
  );
}

/** Leases shared by every gateway process through Redis. Fails closed when Redis is unreachable. */
export class RedisSlotLock implements SlotLock {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix = 'calgate:slot:') {
    this.#redis = redis;
    this.#prefix = prefix;
    if (typeof (redis as Partial<LockScripts>).calgateSlotAcquire !== 'function') {
      redis.defineCommand('calgateSlotAcquire', { numberOfKeys: 1, lua: ACQUIRE });
      redis.defineCommand('calgateSlotRelease', { numberOfKeys: 1, lua: RELEASE });
    }
  }

  async acquire(
    calendarId: string,
    range: { start: number; end: number },
    ttlMs: number,
  ): Promise<SlotLease | null> {
    validate(range, ttlMs);
    const token = newToken();
    let answer: [number, number];
    try {
      answer = await (this.#redis as unknown as LockScripts).calgateSlotAcquire(
        this.#prefix + calendarId,
        Math.floor(range.start),
        Math.ceil(range.end),
        Math.ceil(ttlMs),
        token,
      );
    } catch (error) {
      throw unreachable(error);
    }
    const [ok, expiresAt] = answer;
    return ok === 1 ? { calendarId, start: range.start, end: range.end, token, expiresAt } : null;
  }

  async release(lease: SlotLease): Promise<boolean> {
    try {
      return (
        (await (this.#redis as unknown as LockScripts).calgateSlotRelease(
          this.#prefix + lease.calendarId,
          lease.token,
        )) === 1
      );
    } catch (error) {
      throw unreachable(error);
    }
  }

  async held(calendarId: string, range: { start: number; end: number }): Promise<HeldRange[]> {
    let entries: Record<string, string>;
    let now: number;
    try {
      const [all, time] = await Promise.all([
        this.#redis.hgetall(this.#prefix + calendarId),
        this.#redis.time(),
      ]);
      entries = all;
      now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    } catch (error) {
      throw unreachable(error);
    }
    const out: HeldRange[] = [];
    for (const value of Object.values(entries)) {
      const [start, end, expiresAt] = value.split(':').map(Number) as [number, number, number];
      if (expiresAt > now && start < range.end && range.start < end) {
        out.push({ start, end, expiresAt });
      }
    }
    return out;
  }
}
