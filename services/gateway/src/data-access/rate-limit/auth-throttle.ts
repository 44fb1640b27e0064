import type { Logger } from '@support-agent/shared';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AuthFailureThrottle } from '../../domain/ports.js';
import type { LimiterFactory } from './limiter-factory.js';

/**
 * Failed authentications per client IP (`<prefix>:<ip>`; `authfail` for API keys,
 * `adminauthfail` for the admin token) in a fixed window. After `limit` failures in a minute,
 * further requests from that IP without a valid key get 429 instead of 401.
 */
export class FixedWindowAuthThrottle implements AuthFailureThrottle {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    create: LimiterFactory,
    private readonly limit: number,
    private readonly logger: Logger,
    prefix = 'authfail',
  ) {
    this.limiter = create(prefix, limit);
  }

  async blockedFor(ip: string): Promise<number | undefined> {
    try {
      const res = await this.limiter.get(ip);
      if (res && res.consumedPoints >= this.limit)
        return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    } catch (err) {
      this.logger.error({ err }, 'auth failure throttle unavailable');
    }
    return undefined;
  }

  async recordFailure(ip: string): Promise<number | undefined> {
    try {
      await this.limiter.consume(ip);
      return undefined;
    } catch (err) {
      if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      this.logger.error({ err }, 'auth failure throttle unavailable');
      return undefined;
    }
  }
}
