import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';

/**
 * Sliding-window logs: a request is allowed when fewer than `quota` requests were allowed in
 * the `windowMs` before it, so no key or organization ever gets more than its quota in ANY
 * window of that length (fixed windows let up to twice the quota through across a window's
 * edge). Refused requests are not logged: a client that keeps retrying is not locked out
 * beyond the window. rate-limiter-flexible has no exact sliding window, hence these two.
 */
export interface WindowHit {
  allowed: boolean;
  /** Requests in the window, this one included when allowed. */
  count: number;
  /** Milliseconds until the oldest logged request leaves the window (a slot frees). */
  resetMs: number;
}

interface Log {
  /** Times (performance.now()) of the allowed requests, oldest first, from index `head`. */
  times: number[];
  head: number;
}

/**
 * In memory, on the monotonic clock (performance.now()), so a wall-clock step neither ends a
 * window early nor stretches it. Used in embedded mode and, per replica, while Redis is
 * unreachable. Idle logs are dropped by an unref'd sweep once per window.
 */
export class MemorySlidingWindow {
  private readonly logs = new Map<string, Log>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly windowMs: number) {
    this.sweeper = setInterval(() => this.sweep(), windowMs).unref();
  }

  /** Logs `cost` requests (an MCP batch of N costs N) when all fit, none otherwise. */
  hit(id: string, quota: number, cost = 1): WindowHit {
    const now = performance.now();
    let log = this.logs.get(id);
    if (!log) {
      log = { times: [], head: 0 };
      this.logs.set(id, log);
    }
    trim(log, now - this.windowMs);
    const inWindow = log.times.length - log.head;
    const allowed = inWindow + cost <= quota;
    if (allowed) for (let i = 0; i < cost; i++) log.times.push(now);
    const oldest = log.times[log.head];
    return {
      allowed,
      count: allowed ? inWindow + cost : inWindow,
      resetMs: oldest === undefined ? this.windowMs : Math.max(0, oldest + this.windowMs - now),
    };
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const since = performance.now() - this.windowMs;
    for (const [id, log] of this.logs) {
      trim(log, since);
      if (log.head === log.times.length) this.logs.delete(id);
    }
  }
}

/** Drops the times at or before `since`; compacts the array once half of it is dropped. */
function trim(log: Log, since: number): void {
  while (log.head < log.times.length && log.times[log.head]! <= since) log.head++;
  if (log.head > 32 && log.head * 2 > log.times.length) {
    log.times = log.times.slice(log.head);
    log.head = 0;
  }
}

/**
 * The key's and the organization's logs in Redis, both in one atomic script (exact across
 * replicas, one round trip), on Redis's own clock (TIME), so no service's clock matters.
 * Each log is a sorted set of request times (ms); members are `<time>:<count>`, unique because
 * a set's count only grows within one millisecond. A call costing N (an MCP batch of N
 * messages) logs N when all N fit and none otherwise. The organization is counted only when the
 * key is within its quota. KEYS: the key's log, the organization's log; ARGV: window ms, key
 * quota, organization quota, cost. Returns {key allowed 1/0, key count, key reset ms[, org
 * allowed, org count, org reset ms]}.
 */
const HIT_KEY_AND_ORG = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local w = tonumber(ARGV[1])
local cost = tonumber(ARGV[4] or '1')
local function hit(k, quota)
  redis.call('zremrangebyscore', k, '-inf', now - w)
  local n = redis.call('zcard', k)
  local allowed = 0
  if n + cost <= quota then
    allowed = 1
    for i = 1, cost do
      n = n + 1
      redis.call('zadd', k, now, now .. ':' .. n)
    end
    redis.call('pexpire', k, w)
  end
  local oldest = redis.call('zrange', k, 0, 0, 'withscores')
  local reset = w
  if oldest[2] then reset = tonumber(oldest[2]) + w - now end
  return allowed, n, reset
end
local ka, kn, kr = hit(KEYS[1], tonumber(ARGV[2]))
if ka == 0 then return {ka, kn, kr} end
local oa, on, orr = hit(KEYS[2], tonumber(ARGV[3]))
return {ka, kn, kr, oa, on, orr}`;

/** A Redis client that has the script defined as a command. */
export type SlidingWindowRedis = Redis & {
  rlSlidingKeyAndOrg(
    keyLog: string,
    orgLog: string,
    windowMs: number,
    keyQuota: number,
    orgQuota: number,
    cost: number,
  ): Promise<number[]>;
};

/** Defines the script on the client: EVALSHA, falling back to EVAL when Redis lacks it. */
export function defineSlidingWindowScript(redis: Redis): SlidingWindowRedis {
  redis.defineCommand('rlSlidingKeyAndOrg', { numberOfKeys: 2, lua: HIT_KEY_AND_ORG });
  return redis as SlidingWindowRedis;
}
