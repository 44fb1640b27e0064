import { redactUrl, type Logger } from '@support-agent/shared';
import { Redis } from 'ioredis';

/**
 * The Redis connection of the rate limiters. No offline queue: while Redis is unreachable
 * commands fail at once and the limiters fall back to their in-memory insurance, so requests
 * are never held up waiting for Redis. State changes are logged once each, not per attempt.
 */
export function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // Commands issued in the same tick (concurrent requests' rate-limit checks) go out in one
    // socket write: fewer syscalls under load, no extra wait when idle.
    enableAutoPipelining: true,
  });
  let state: 'connecting' | 'up' | 'down' = 'connecting';
  const down = (reason: string) => {
    if (state === 'down') return;
    state = 'down';
    logger.warn(
      { redis: redactUrl(url), reason },
      'Redis unreachable: rate limits fall back to per-replica in-memory limiters',
    );
  };
  redis.on('ready', () => {
    if (state === 'down')
      logger.info({ redis: redactUrl(url) }, 'Redis reachable again: shared rate limits resumed');
    state = 'up';
  });
  redis.on('error', (err: Error) => down(err.message));
  redis.on('close', () => down('connection closed'));
  return redis;
}

/** Resolves true once the client is ready, false after timeoutMs (the caller carries on). */
export function waitForRedis(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
