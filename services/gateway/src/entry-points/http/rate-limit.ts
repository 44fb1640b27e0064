import { AppError, type Logger } from '@support-agent/shared';
import type { RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { gatewayMetrics } from './http-metrics.js';
import { grantOf } from './request-context.js';

export const WINDOW_SECONDS = 60;

/**
 * Makes fixed-window limiters: on Redis (exact across replicas: one atomic INCR per request)
 * with an in-memory insurance limiter that takes over per replica while Redis is unreachable,
 * or in memory only when no Redis is configured (embedded mode).
 */
export type LimiterFactory = (keyPrefix: string, points: number) => RateLimiterAbstract;

export function limiterFactory(redis: Redis | undefined): LimiterFactory {
  return (keyPrefix, points) => {
    const memory = new RateLimiterMemory({ keyPrefix, points, duration: WINDOW_SECONDS });
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

type PolicyName = 'key' | 'org';

interface PolicyState {
  name: PolicyName;
  quota: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
  exceeded: boolean;
}

export interface RateDecision {
  allowed: boolean;
  /** `RateLimit-Policy` header value. */
  policyHeader: string;
  /** `RateLimit` header value (the policy nearest exhaustion). */
  limitHeader: string;
  /** Seconds to wait, when not allowed. */
  retryAfter: number;
}

/**
 * Both counters of a request in one round trip. KEYS: `rl:key:<keyId>`, `rl:org:<orgId>`;
 * ARGV: window seconds, key quota. Each counter is a fixed window exactly as
 * rate-limiter-flexible keeps it (created at 0 with the window as TTL, INCR, PTTL), so both
 * agree on the data. The key is counted first; the organization only when the key is within
 * its quota. Returns {key count, key TTL ms[, org count, org TTL ms]}.
 */
const CONSUME_KEY_AND_ORG = `local function hit(k, w)
  redis.call('set', k, 0, 'EX', w, 'NX')
  local n = redis.call('incr', k)
  local ttl = redis.call('pttl', k)
  if ttl == -1 then
    redis.call('expire', k, w)
    ttl = 1000 * w
  end
  return n, ttl
end
local kn, kt = hit(KEYS[1], ARGV[1])
if kn > tonumber(ARGV[2]) then return {kn, kt} end
local on, ot = hit(KEYS[2], ARGV[1])
return {kn, kt, on, ot}`;

type LimitsRedis = Redis & {
  rlConsumeKeyAndOrg(
    keyCounter: string,
    orgCounter: string,
    windowSeconds: number,
    keyQuota: number,
  ): Promise<number[]>;
};

/**
 * Per-key and per-organization request limits (`rl:key:<keyId>`, `rl:org:<orgId>`). Quotas
 * come from each organization's settings and travel with each call, so a settings change
 * applies at once. With Redis both counters are taken in one atomic script (one round trip,
 * exact across replicas); while Redis is unreachable, per-replica in-memory limiters (the
 * insurance) count instead. Without Redis (embedded mode) the factory's limiters count.
 */
export class RequestRateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly insurance = new Map<string, RateLimiterMemory>();
  private readonly redis: LimitsRedis | undefined;

  constructor(
    private readonly create: LimiterFactory,
    private readonly logger: Logger,
    redis?: Redis,
  ) {
    if (redis) {
      // EVALSHA, falling back to EVAL when Redis does not have the script cached.
      redis.defineCommand('rlConsumeKeyAndOrg', { numberOfKeys: 2, lua: CONSUME_KEY_AND_ORG });
      this.redis = redis as LimitsRedis;
    }
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
    for (const p of exceeded) gatewayMetrics.rateLimitRejections.inc({ policy: p.name });
    let shown: PolicyState;
    if (exceeded.length > 0) {
      shown = exceeded.reduce((a, b) => (b.reset > a.reset ? b : a));
    } else {
      shown = org && org.remaining < key.remaining ? org : key;
    }
    return {
      allowed: exceeded.length === 0,
      policyHeader: `"key";q=${keyQuota};w=${WINDOW_SECONDS}, "org";q=${orgQuota};w=${WINDOW_SECONDS}`,
      limitHeader: `"${shown.name}";r=${shown.remaining};t=${shown.reset}`,
      retryAfter: Math.max(1, ...exceeded.map((p) => p.reset)),
    };
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

  private limiter(name: PolicyName, quota: number): RateLimiterAbstract {
    const id = `${name}:${quota}`;
    if (this.redis) {
      // Redis is configured but unreachable: the per-replica insurance counts.
      let memory = this.insurance.get(id);
      if (!memory) {
        memory = new RateLimiterMemory({
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

  private async consumeOne(name: PolicyName, id: string, quota: number): Promise<PolicyState> {
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
function fromCounter(name: PolicyName, quota: number, count: number, ttlMs: number): PolicyState {
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
  name: PolicyName,
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

/**
 * Which keys may have a read started before its rate-limit decision is back. A GET (search,
 * FAQ, list) changes nothing, so the gateway sends it upstream while Redis counts it and
 * answers only once the count allowed it: the caller waits for the slower of the two round
 * trips instead of their sum. A key that was refused waits for its decisions again until its
 * window resets, so a client over its limit costs the services at most the reads it had in
 * flight when the limit ran out, never one per refused request.
 */
export class ReadAhead {
  /** Key id → epoch ms until which its reads wait for the decision. */
  private readonly refusedUntil = new Map<string, number>();

  constructor(
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  allows(keyId: string): boolean {
    const until = this.refusedUntil.get(keyId);
    if (until === undefined) return true;
    if (until > this.now()) return false;
    this.refusedUntil.delete(keyId);
    return true;
  }

  /** Notes a decision: a refusal holds the key's reads back for its Retry-After. */
  record(keyId: string, refused: AppError | undefined): void {
    if (!refused) return;
    this.refusedUntil.delete(keyId);
    if (this.refusedUntil.size >= this.maxKeys) {
      // Oldest refusal first (insertion order); forgetting one only allows a read ahead.
      this.refusedUntil.delete(this.refusedUntil.keys().next().value!);
    }
    this.refusedUntil.set(keyId, this.now() + (refused.retryAfter ?? WINDOW_SECONDS) * 1000);
  }
}

/**
 * Counts every authenticated request against its key and organization (also requests that
 * fail validation afterwards) and sets the RateLimit headers; 429 when either is exhausted.
 */
export function rateLimit(limiter: RequestRateLimiter): RequestHandler {
  return async (_req, res, next) => {
    const exceeded = await countRequest(limiter, res);
    if (exceeded) throw exceeded;
    next();
  };
}

/**
 * Counts the authenticated request against its key and organization and sets the RateLimit
 * headers; returns the 429 error when either is exhausted (the caller decides how to report it).
 */
export async function countRequest(
  limiter: RequestRateLimiter,
  res: Response,
): Promise<AppError | undefined> {
  const { key, settings } = grantOf(res);
  const decision = await limiter.consume(
    key.id,
    settings.rateLimitPerKeyPerMin,
    key.orgId,
    settings.rateLimitPerOrgPerMin,
  );
  res.set('RateLimit-Policy', decision.policyHeader);
  res.set('RateLimit', decision.limitHeader);
  if (decision.allowed) return undefined;
  return new AppError('rate_limited', 'rate limit exceeded; retry after the time in Retry-After', {
    retryAfter: decision.retryAfter,
  });
}

/**
 * Failed authentications per client IP (`authfail:<ip>`). After `limit` failures in a minute,
 * further requests from that IP without a valid key get 429 instead of 401.
 */
export class AuthFailureThrottle {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    create: LimiterFactory,
    private readonly limit: number,
    private readonly logger: Logger,
  ) {
    this.limiter = create('authfail', limit);
  }

  /** Seconds until the IP may try again, or undefined when it is not blocked. */
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

  /** Counts a failure; returns seconds to wait when this failure is over the limit. */
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
