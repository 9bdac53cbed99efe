import { Redis } from 'ioredis';

/**
 * A Redis client that fails fast instead of queueing while Redis is unreachable, so callers can
 * decide (rate limits fail open, booking locks fail closed) rather than hang.
 */
export function connectRedis(url: string, options: { name?: string } = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    connectionName: options.name ?? 'calgate',
    // Commands issued in the same turn of the event loop go out in one write: under load a
    // call's rate-limit check and log-level look-up share a round trip with other calls'.
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // Errors surface on the commands that fail; the connection itself retries quietly.
  redis.on('error', () => {});
  return redis;
}

/** Resolves once the client is connected (or rejects after the timeout). */
export async function redisReady(redis: Redis, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') {
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Redis did not become ready in time')), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
