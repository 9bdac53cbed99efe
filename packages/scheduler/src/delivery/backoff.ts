export interface BackoffOptions {
  /** Delay before the second attempt, before jitter. Default 2 s. */
  baseMs?: number;
  /** Ceiling of the delay. Default 15 min. */
  maxMs?: number;
  /** A number in [0, 1); defaults to `Math.random`. */
  random?: () => number;
}

export const DEFAULT_BACKOFF_BASE_MS = 2_000;
export const DEFAULT_BACKOFF_MAX_MS = 15 * 60_000;

/**
 * Delay before retrying after failed attempt number `attempt` (1-based): exponential, capped,
 * with "equal jitter" — half the step is fixed, half random — so that retries of many deliveries
 * that failed together spread out, yet none retries at once.
 */
export function backoff(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const max = options.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
  const random = options.random ?? Math.random;
  const exponent = Math.max(0, Math.min(Math.floor(attempt) - 1, 40));
  const step = Math.min(max, base * 2 ** exponent);
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * Milliseconds a `Retry-After` header asks to wait: delta-seconds or an HTTP date (RFC 9110
 * §10.2.3). A date in the past means 0. Anything else is `undefined`.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) {
    return undefined;
  }
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    return Number(text) * 1000;
  }
  if (!/[a-z]/i.test(text)) {
    return undefined;
  }
  const at = Date.parse(text);
  if (Number.isNaN(at)) {
    return undefined;
  }
  return Math.max(0, at - nowMs);
}
