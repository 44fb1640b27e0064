import type { Logger } from '@support-agent/shared';
import type { Redis } from 'ioredis';
import {
  WINDOW_SECONDS,
  type RateDecision,
  type RatePolicy,
  type RequestRateLimiter,
} from '../../domain/ports.js';
import {
  defineSlidingWindowScript,
  MemorySlidingWindow,
  type SlidingWindowRedis,
  type WindowHit,
} from './sliding-window.js';

interface PolicyState {
  name: RatePolicy;
  quota: number;
  remaining: number;
  /** Seconds until a slot frees. */
  reset: number;
  exceeded: boolean;
}

/** refusedBy of an allowed request: one shared array, nothing allocated per request. */
const NONE: readonly RatePolicy[] = Object.freeze([]);
const WINDOW_MS = WINDOW_SECONDS * 1000;

/**
 * Per-key and per-organization request limits in sliding windows (sliding-window.ts): no key
 * and no organization gets more than its quota in any 60 s. With Redis both logs are taken in
 * one atomic script (`rlw:key:<keyId>`, `rlw:org:<orgId>`; exact across replicas); while Redis
 * is unreachable, per-replica in-memory logs (the insurance) count instead; without Redis
 * (embedded mode) only those.
 */
export class SlidingWindowRequestLimiter implements RequestRateLimiter {
  private readonly memory = new MemorySlidingWindow(WINDOW_MS);
  private readonly redis: SlidingWindowRedis | undefined;
  private lastPolicy = { keyQuota: NaN, orgQuota: NaN, header: '' };

  constructor(
    private readonly logger: Logger,
    redis?: Redis,
  ) {
    if (redis) this.redis = defineSlidingWindowScript(redis);
  }

  async consume(
    keyId: string,
    keyQuota: number,
    orgId: string,
    orgQuota: number,
    cost = 1,
  ): Promise<RateDecision> {
    // Key first: a request over its key's limit does not also spend the organization's budget,
    // so one runaway key cannot starve the organization's other keys.
    const counted =
      (await this.consumeInRedis(keyId, keyQuota, orgId, orgQuota, cost)) ??
      this.consumeInMemory(keyId, keyQuota, orgId, orgQuota, cost);
    const { key, org } = counted;
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

  close(): void {
    this.memory.close();
  }

  /** `RateLimit-Policy`: the same few quota pairs on every request, so the last one is kept. */
  private policyHeader(keyQuota: number, orgQuota: number): string {
    const last = this.lastPolicy;
    if (last.keyQuota === keyQuota && last.orgQuota === orgQuota) return last.header;
    const header = `"key";q=${keyQuota};w=${WINDOW_SECONDS}, "org";q=${orgQuota};w=${WINDOW_SECONDS}`;
    this.lastPolicy = { keyQuota, orgQuota, header };
    return header;
  }

  /** Both logs in Redis; undefined when Redis is not ready or failed (use the insurance). */
  private async consumeInRedis(
    keyId: string,
    keyQuota: number,
    orgId: string,
    orgQuota: number,
    cost: number,
  ): Promise<{ key: PolicyState; org: PolicyState | undefined } | undefined> {
    const redis = this.redis;
    if (!redis || redis.status !== 'ready') return undefined;
    try {
      const [ka, kn, kr, oa, on, orr] = await redis.rlSlidingKeyAndOrg(
        `rlw:key:${keyId}`,
        `rlw:org:${orgId}`,
        WINDOW_MS,
        keyQuota,
        orgQuota,
        cost,
      );
      return {
        key: toState('key', keyQuota, { allowed: ka === 1, count: kn!, resetMs: kr! }),
        org:
          oa === undefined
            ? undefined
            : toState('org', orgQuota, { allowed: oa === 1, count: on!, resetMs: orr! }),
      };
    } catch (err) {
      this.logger.debug({ err }, 'rate limit logs unavailable; in-memory limits used');
      return undefined;
    }
  }

  private consumeInMemory(
    keyId: string,
    keyQuota: number,
    orgId: string,
    orgQuota: number,
    cost: number,
  ): { key: PolicyState; org: PolicyState | undefined } {
    const key = toState('key', keyQuota, this.memory.hit(`key:${keyId}`, keyQuota, cost));
    if (key.exceeded) return { key, org: undefined };
    const org = this.memory.hit(`org:${orgId}`, orgQuota, cost);
    return { key, org: toState('org', orgQuota, org) };
  }
}

function toState(name: RatePolicy, quota: number, hit: WindowHit): PolicyState {
  const exceeded = !hit.allowed;
  return {
    name,
    quota,
    remaining: exceeded ? 0 : Math.max(0, quota - hit.count),
    reset: Math.max(exceeded ? 1 : 0, Math.ceil(hit.resetMs / 1000)),
    exceeded,
  };
}
