import { CalgateError } from '@calgate/core';
import type { ExposureLog, KeyTurns, OnceLedger, RateLimiter, SlotLock } from '@calgate/locks';
import type { Logger } from 'pino';

export interface OutageLogOptions {
  /** The dependency, as log lines name it: 'redis', 'postgres'. */
  dependency: string;
  /** The warning when an outage starts: what it means for callers. */
  down: string;
  /** The line when it answers again. */
  up: string;
  now?: () => number;
}

/**
 * One warning when a dependency stops answering and one info line when it answers again (with
 * how many operations failed meanwhile and for how long), instead of a line per failed request.
 * Callers report every outcome; `startedAt` lets an operation that began before the last change
 * (a request in flight when Redis went away or came back) leave the state alone.
 */
export class OutageLog {
  readonly #log: Pick<Logger, 'warn' | 'info'>;
  readonly #options: OutageLogOptions;
  readonly #now: () => number;
  #downSince: number | undefined;
  #upSince = Number.NEGATIVE_INFINITY;
  #failed = 0;

  constructor(log: Pick<Logger, 'warn' | 'info'>, options: OutageLogOptions) {
    this.#log = log;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** Epoch ms to pass back with the outcome of an operation starting now. */
  start(): number {
    return this.#now();
  }

  failed(error: unknown, startedAt = this.#now()): void {
    if (this.#downSince === undefined) {
      if (startedAt < this.#upSince) {
        return;
      }
      this.#downSince = this.#now();
      this.#failed = 0;
      this.#log.warn({ dependency: this.#options.dependency, err: error }, this.#options.down);
    }
    this.#failed += 1;
  }

  succeeded(startedAt = this.#now()): void {
    if (this.#downSince === undefined || startedAt < this.#downSince) {
      return;
    }
    const now = this.#now();
    this.#log.info(
      {
        dependency: this.#options.dependency,
        failedOperations: this.#failed,
        downForMs: now - this.#downSince,
      },
      this.#options.up,
    );
    this.#downSince = undefined;
    this.#upSince = now;
    this.#failed = 0;
  }
}

/** Runs `op`, reporting its outcome; errors for which `isOutage` holds are counted as the outage's. */
async function watched<T>(outage: OutageLog, isOutage: (error: unknown) => boolean, op: () => Promise<T>) {
  const startedAt = outage.start();
  try {
    const value = await op();
    outage.succeeded(startedAt);
    return value;
  } catch (error) {
    if (isOutage(error)) {
      outage.failed(
        error instanceof CalgateError && error.cause !== undefined ? error.cause : error,
        startedAt,
      );
    }
    throw error;
  }
}

/** Per-key limits that let requests through while Redis is away, noting the outage once. */
export function failOpen(limiter: RateLimiter, outage: OutageLog): RateLimiter {
  return {
    burst: limiter.burst,
    take: (key, cost) =>
      watched(
        outage,
        () => true,
        () => limiter.take(key, cost),
      ).catch(() => ({ allowed: true, retryAfterMs: 0 })),
  };
}

/**
 * Key turns across gateways (Redis) that fall back to this process's own turns while Redis is
 * away: each gateway then still applies the limit by itself (a key may run the limit once per
 * gateway, never without limit), and no call is refused because Redis is unreachable. A refusal
 * because the key's queue is full is passed on as it is.
 */
export function failToLocal(shared: KeyTurns, local: KeyTurns, outage: OutageLog): KeyTurns {
  const isOutage = (error: unknown) => !(error instanceof CalgateError);
  return {
    acquire: (key) =>
      watched(outage, isOutage, () => shared.acquire(key)).catch((error: unknown) => {
        if (isOutage(error)) {
          return local.acquire(key);
        }
        throw error;
      }),
  };
}

/**
 * An exposure log that lets answers through while Redis is away (an unrecorded exposure costs a
 * later question, an unanswered read would cost the call), noting the outage once.
 */
export function failOpenExposures(log: ExposureLog, outage: OutageLog): ExposureLog {
  const run = <T>(op: () => Promise<T>) => watched(outage, () => true, op);
  return {
    record: (principal, exposures) => run(() => log.record(principal, exposures)).catch(() => {}),
    recent: (principal) => run(() => log.recent(principal)).catch(() => []),
    clear: (principal) => run(() => log.clear(principal)),
  };
}

/** Limits that must hold (sign-in attempts): while Redis is away they answer 'unavailable' (503). */
export function failClosed(limiter: RateLimiter, outage: OutageLog, message: string): RateLimiter {
  return {
    burst: limiter.burst,
    take: (key, cost) =>
      watched(
        outage,
        () => true,
        () => limiter.take(key, cost),
      ).catch((error: unknown) => {
        throw new CalgateError('unavailable', message, { retry: true, retryAfterMs: 2_000, cause: error });
      }),
  };
}

/**
 * One-use ids whose failures (Redis away) count towards the outage. Claims still fail: a use that
 * cannot be recorded is refused (fails closed), since a second use could not be ruled out.
 */
export function watchedOnceLedger(ledger: OnceLedger, outage: OutageLog): OnceLedger {
  return {
    claim: (id, ttlMs) =>
      watched(
        outage,
        () => true,
        () => ledger.claim(id, ttlMs),
      ),
  };
}

/** Booking leases whose 'unavailable' failures (Redis away) count towards the outage. */
export function watchedSlotLock(lock: SlotLock, outage: OutageLog): SlotLock {
  const isOutage = (error: unknown) => error instanceof CalgateError && error.code === 'unavailable';
  return {
    acquire: (calendarId, range, ttlMs) =>
      watched(outage, isOutage, () => lock.acquire(calendarId, range, ttlMs)),
    release: (lease) => watched(outage, isOutage, () => lock.release(lease)),
    held: (calendarId, range) => watched(outage, isOutage, () => lock.held(calendarId, range)),
  };
}
