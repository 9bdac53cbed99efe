/**
 * Sends one push notification the way Google does: an empty-bodied POST to the channel's
 * address with the X-Goog-* headers, retried with exponential backoff when the receiver
 * answers 500/502/503/504 or cannot be reached, and then dropped. Any other status is a
 * failure that is not retried (Google's documented behaviour).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export type ResourceState = 'sync' | 'exists' | 'not_exists';

export interface Notification {
  channelId: string;
  calendarId: string;
  address: string;
  token?: string;
  expiration: number;
  resourceId: string;
  resourceUri: string;
  state: ResourceState;
  messageNumber: number;
}

export interface RetryPolicy {
  /** Attempts after the first one (default 3). */
  retries: number;
  /** Delay before the first retry; doubles each time (default 100 ms). */
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 100 };

/** What became of one notification; kept for assertions (never holds the channel token). */
export interface DeliveryRecord {
  channelId: string;
  calendarId: string;
  messageNumber: number;
  state: ResourceState;
  outcome: 'delivered' | 'failed' | 'dropped' | 'cancelled';
  attempts: number;
  /** The receiver's last HTTP status, when it answered. */
  status?: number;
}

const SUCCESS = new Set([102, 200, 201, 202, 204]);
const RETRYABLE = new Set([500, 502, 503, 504]);
const ATTEMPT_TIMEOUT_MS = 5_000;

export function notificationHeaders(n: Notification): Record<string, string> {
  return {
    'x-goog-channel-id': n.channelId,
    ...(n.token === undefined ? {} : { 'x-goog-channel-token': n.token }),
    'x-goog-channel-expiration': new Date(n.expiration).toUTCString(),
    'x-goog-resource-id': n.resourceId,
    'x-goog-resource-uri': n.resourceUri,
    'x-goog-resource-state': n.state,
    'x-goog-message-number': String(n.messageNumber),
    'user-agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)',
  };
}

/** One POST; the status, or null when the receiver could not be reached in time. */
async function attempt(n: Notification): Promise<number | null> {
  try {
    const response = await fetch(n.address, {
      method: 'POST',
      headers: notificationHeaders(n),
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      redirect: 'manual',
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return null;
  }
}

/**
 * Delivers with retries. `live` is asked before every attempt so a stopped, expired or reset
 * channel stops retrying; backoff timers do not keep the process alive.
 */
export async function deliver(
  n: Notification,
  policy: RetryPolicy,
  live: () => boolean,
): Promise<Omit<DeliveryRecord, 'channelId' | 'calendarId' | 'messageNumber' | 'state'>> {
  let status: number | null = null;
  for (let i = 0; i <= policy.retries; i += 1) {
    if (i > 0) {
      await sleep(policy.baseDelayMs * 2 ** (i - 1), undefined, { ref: false });
    }
    if (!live()) {
      return { outcome: 'cancelled', attempts: i, ...(status === null ? {} : { status }) };
    }
    status = await attempt(n);
    if (status !== null && SUCCESS.has(status)) {
      return { outcome: 'delivered', attempts: i + 1, status };
    }
    if (status !== null && !RETRYABLE.has(status)) {
      return { outcome: 'failed', attempts: i + 1, status };
    }
  }
  return { outcome: 'failed', attempts: policy.retries + 1, ...(status === null ? {} : { status }) };
}
