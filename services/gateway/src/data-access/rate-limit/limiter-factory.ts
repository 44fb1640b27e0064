import type { Redis } from 'ioredis';
import { RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { WINDOW_SECONDS } from '../../domain/ports.js';
import { MonotonicRateLimiterMemory } from './monotonic-memory-limiter.js';

/**
 * Makes fixed-window limiters: on Redis (exact across replicas: one atomic INCR per request)
 * with an in-memory insurance limiter that takes over per replica while Redis is unreachable,
 * or in memory only when no Redis is configured (embedded mode). Windows come from one clock:
 * Redis's (its key TTLs), or this process's monotonic clock, never the wall clock.
 */
export type LimiterFactory = (keyPrefix: string, points: number) => RateLimiterAbstract;

export function limiterFactory(redis: Redis | undefined): LimiterFactory {
  return (keyPrefix, points) => {
    const memory = new MonotonicRateLimiterMemory({ keyPrefix, points, duration: WINDOW_SECONDS });
    if (!redis) return memory;
    return new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points,
      duration: WINDOW_SECONDS,
      insuranceLimiter: memory,
      rejectIfRedisNotReady: true,
    });
  };
}
