import type { Redis } from 'ioredis';

/**
 * Both counters of a request in one round trip. KEYS: `rl:key:<keyId>`, `rl:org:<orgId>`;
 * ARGV: window seconds, key quota, cost (requests this call stands for: an MCP batch of N
 * messages costs N; 1 when absent). Each counter is a fixed window exactly as
 * rate-limiter-flexible keeps it (created at 0 with the window as TTL, INCRBY, PTTL), so both
 * agree on the data. The key is counted first; the organization only when the key is within
 * its quota. Returns {key count, key TTL ms[, org count, org TTL ms]}.
 */
const CONSUME_KEY_AND_ORG = `local cost = tonumber(ARGV[3] or '1')
local function hit(k, w)
  redis.call('set', k, 0, 'EX', w, 'NX')
  local n = redis.call('incrby', k, cost)
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

/** A Redis client that has the script defined as a command. */
export type LimitsRedis = Redis & {
  rlConsumeKeyAndOrg(
    keyCounter: string,
    orgCounter: string,
    windowSeconds: number,
    keyQuota: number,
    cost: number,
  ): Promise<number[]>;
};

/** Defines the script on the client: EVALSHA, falling back to EVAL when Redis lacks it. */
export function defineKeyAndOrgScript(redis: Redis): LimitsRedis {
  redis.defineCommand('rlConsumeKeyAndOrg', { numberOfKeys: 2, lua: CONSUME_KEY_AND_ORG });
  return redis as LimitsRedis;
}
