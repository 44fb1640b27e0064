import type { Logger } from '@support-agent/shared';
import type { Redis } from 'ioredis';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import {
  WINDOW_SECONDS,
  type RateDecision,
  type RatePolicy,
  type RequestRateLimiter,
} from '../../domain/ports.js';
import { defineKeyAndOrgScript, type LimitsRedis } from './key-and-org-script.js';
import type { LimiterFactory } from './limiter-factory.js';
import { MonotonicRateLimiterMemory } from './monotonic-memory-limiter.js';

interface PolicyState {
  name: RatePolicy;
  quota: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
  exceeded: boolean;
}

/** refusedBy of an allowed request: one shared array, nothing allocated per request. */
const NONE: readonly RatePolicy[] = Object.freeze([]);

/**
 * Per-key and per-organization request limits (`rl:key:<keyId>`, `rl:org:<orgId>`) in fixed
 * windows. With Redis both counters are taken in one atomic script (one round trip, exact
 * across replicas); while Redis is unreachable, per-replica in-memory limiters (the insurance)
 * count instead. Without Redis (embedded mode) the factory's limiters count.
 */
export class FixedWindowRequestLimiter implements RequestRateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly insurance = new Map<string, MonotonicRateLimiterMemory>();
  private readonly redis: LimitsRedis | undefined;
  private lastPolicy = { keyQuota: NaN, orgQuota: NaN, header: '' };

  constructor(
    private readonly create: LimiterFactory,
    private readonly logger: Logger,
    redis?: Redis,
  ) {
    if (redis) this.redis = defineKeyAndOrgScript(redis);
  }

  async consume(
    keyId: string,
    keyQuota: number,
    orgId: string,
    orgQuota: number,
  ): Promise<RateDecision> {
    // Key first: a request over its key's limit does not also spend the organization's budget,
    // so one runaway key cannot starve the organization's other keys.
    const counted = await this.consumeInRedis(keyId, keyQuota, orgId, orgQuota);
    const key = counted ? counted.key : await this.consumeOne('key', keyId, keyQuota);
    const org = counted
      ? counted.org
      : key.exceeded
        ? undefined
        : await this.consumeOne('org', orgId, orgQuota);
    const exceeded = [key, org].filter((p): p is PolicyState => p?.exceeded === true);
    let shown: PolicyState;
    if (exceeded.length > 0) {
      shown = exceeded.reduce((a, b) => (b.reset > a.reset ? b : a));
    } else {
      shown = org && org.remaining < key.remaining ? org : key;
    }
    return {
      allowed: exceeded.length === 0,
      policyHeader: this.policyHeader(keyQuota, orgQuota),
      limitHeader: `"${shown.name}";r=${shown.remaining};t=${shown.reset}`,
      retryAfter: Math.max(1, ...exceeded.map((p) => p.reset)),
      refusedBy: exceeded.length === 0 ? NONE : exceeded.map((p) => p.name),
    };
  }

  /** `RateLimit-Policy`: the same few quota pairs on every request, so the last one is kept. */
  private policyHeader(keyQuota: number, orgQuota: number): string {
    const last = this.lastPolicy;
    if (last.keyQuota === keyQuota && last.orgQuota === orgQuota) return last.header;
    const header = `"key";q=${keyQuota};w=${WINDOW_SECONDS}, "org";q=${orgQuota};w=${WINDOW_SECONDS}`;
    this.lastPolicy = { keyQuota, orgQuota, header };
    return header;
  }

  /** Both counters in Redis; undefined when Redis is not ready or failed (use the insurance). */
  private async consumeInRedis(
    keyId: string,
    keyQuota: number,
    orgId: string,
    orgQuota: number,
  ): Promise<{ key: PolicyState; org: PolicyState | undefined } | undefined> {
    const redis = this.redis;
    if (!redis || redis.status !== 'ready') return undefined;
    try {
      const [kn, kt, on, ot] = await redis.rlConsumeKeyAndOrg(
        `rl:key:${keyId}`,
        `rl:org:${orgId}`,
        WINDOW_SECONDS,
        keyQuota,
      );
      return {
        key: fromCounter('key', keyQuota, kn!, kt!),
        org: on === undefined ? undefined : fromCounter('org', orgQuota, on, ot!),
      };
    } catch (err) {
      this.logger.debug({ err }, 'rate limit counters unavailable; in-memory limits used');
      return undefined;
    }
  }

  private limiter(name: RatePolicy, quota: number): RateLimiterAbstract {
    const id = `${name}:${quota}`;
    if (this.redis) {
      // Redis is configured but unreachable: the per-replica insurance counts.
      let memory = this.insurance.get(id);
      if (!memory) {
        memory = new MonotonicRateLimiterMemory({
          keyPrefix: `rl:${name}`,
          points: quota,
          duration: WINDOW_SECONDS,
        });
        this.insurance.set(id, memory);
      }
      return memory;
    }
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = this.create(`rl:${name}`, quota);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  private async consumeOne(name: RatePolicy, id: string, quota: number): Promise<PolicyState> {
    try {
      const res = await this.limiter(name, quota).consume(id);
      return toState(name, quota, res, false);
    } catch (err) {
      if (err instanceof RateLimiterRes) return toState(name, quota, err, true);
      // Both Redis and the insurance failed: serve rather than fail closed.
      this.logger.error({ err, policy: name }, 'rate limiter failed; request let through');
      return { name, quota, remaining: quota, reset: WINDOW_SECONDS, exceeded: false };
    }
  }
}

/** A counter read from Redis: `count` requests in the window, `ttlMs` until it resets. */
function fromCounter(name: RatePolicy, quota: number, count: number, ttlMs: number): PolicyState {
  const exceeded = count > quota;
  return {
    name,
    quota,
    remaining: exceeded ? 0 : Math.max(0, quota - count),
    reset: Math.max(exceeded ? 1 : 0, Math.ceil(ttlMs / 1000)),
    exceeded,
  };
}

function toState(
  name: RatePolicy,
  quota: number,
  res: RateLimiterRes,
  exceeded: boolean,
): PolicyState {
  return {
    name,
    quota,
    remaining: exceeded ? 0 : Math.max(0, res.remainingPoints),
    reset: Math.max(exceeded ? 1 : 0, Math.ceil(res.msBeforeNext / 1000)),
    exceeded,
  };
}
