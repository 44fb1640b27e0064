import { failFastRedisOptions, redactUrl, type Logger } from '@support-agent/shared';
import { Redis } from 'ioredis';

/**
 * The Redis connection of the rate limiters, fail-fast (failFastRedisOptions): while Redis is
 * unreachable, silent or slower than `commandTimeoutMs`, commands fail and the limiters fall
 * back to their in-memory insurance, so requests are never held up waiting for Redis. State
 * changes are logged once each, not per attempt.
 */
export function connectRedis(url: string, logger: Logger, commandTimeoutMs?: number): Redis {
  const redis = new Redis(url, {
    ...failFastRedisOptions(commandTimeoutMs),
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
