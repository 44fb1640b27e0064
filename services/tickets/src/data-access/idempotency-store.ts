import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { DAY_MS, failFastRedisOptions, redactUrl, type Logger } from '@support-agent/shared';
import type { IdempotencyClaim, IdempotencyStore } from '../domain/ports.js';

/** How long a key → ticket id answer is cached for fast replays. */
export const DEFAULT_CACHE_TTL_MS = DAY_MS;

const lockKey = (orgId: string, keyHash: string) => `idem:lock:${orgId}:${keyHash}`;
const cacheKey = (orgId: string, keyHash: string) => `idem:${orgId}:${keyHash}`;

/** Deletes the lock only if it is still ours (it may have expired and been taken by another caller). */
const UNLOCK_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * lookup + tryLock in one round trip: KEYS = cache, lock; ARGV = token, ttl ms.
 * Returns the cached ticket id (a string), 1 when the lock was taken, 0 when it is held.
 */
const CLAIM_SCRIPT = `local cached = redis.call('get', KEYS[1])
if cached then return cached end
if redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;

/** remember + unlock in one round trip: KEYS = cache, lock; ARGV = token, ticket id, cache ttl ms. */
const SETTLE_SCRIPT = `redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
if redis.call('get', KEYS[2]) == ARGV[1] then redis.call('del', KEYS[2]) end
return 1`;

type ScriptedRedis = Redis & {
  idemClaim(cache: string, lock: string, token: string, ttlMs: number): Promise<string | number>;
  idemSettle(
    cache: string,
    lock: string,
    token: string,
    ticketId: number,
    ttlMs: number,
  ): Promise<number>;
};

/** How often "Redis is unavailable" is logged at most while it stays down. */
const WARN_INTERVAL_MS = 10_000;

/**
 * Idempotency lock and cache in Redis, shared by every replica. Commands fail
 * fast while Redis is unreachable (no offline queue, short timeout), so a create
 * falls back to the database at once instead of hanging; Redis is never needed
 * for correctness.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private lastWarnAt = 0;

  private constructor(
    private readonly redis: ScriptedRedis,
    private readonly logger: Logger,
    private readonly cacheTtlMs: number,
  ) {}

  /** Connects; waits up to `readyTimeoutMs` for Redis but starts anyway if it is down. */
  static async connect(
    url: string,
    logger: Logger,
    options: { cacheTtlMs?: number; readyTimeoutMs?: number; commandTimeoutMs?: number } = {},
  ): Promise<RedisIdempotencyStore> {
    const redis = new Redis(url, {
      ...failFastRedisOptions(options.commandTimeoutMs),
      connectionName: 'tickets',
      // Concurrent creates' commands issued in the same tick share one socket write.
      enableAutoPipelining: true,
    });
    // EVALSHA, falling back to EVAL once per connection when the script is not cached yet.
    redis.defineCommand('idemClaim', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    redis.defineCommand('idemSettle', { numberOfKeys: 2, lua: SETTLE_SCRIPT });
    const store = new RedisIdempotencyStore(
      redis as ScriptedRedis,
      logger,
      options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
    );
    redis.on('error', (err: Error) => store.warn(err));
    redis.on('ready', () => {
      if (store.lastWarnAt !== 0)
        logger.info({ redis: redactUrl(url) }, 'Redis is back; idempotency lock in use');
      store.lastWarnAt = 0;
    });
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), options.readyTimeoutMs ?? 3_000);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!ready)
      logger.warn(
        { redis: redactUrl(url) },
        'Redis not reachable at start; creating tickets without the lock',
      );
    return store;
  }

  async lookup(orgId: string, keyHash: string): Promise<number | undefined> {
    const value = await this.run(() => this.redis.get(cacheKey(orgId, keyHash)));
    const id = value === null ? NaN : Number(value);
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
  }

  async remember(orgId: string, keyHash: string, ticketId: number): Promise<void> {
    await this.run(() =>
      this.redis.set(cacheKey(orgId, keyHash), String(ticketId), 'PX', this.cacheTtlMs),
    );
  }

  async tryLock(orgId: string, keyHash: string, ttlMs: number): Promise<string | undefined> {
    const token = randomUUID();
    const ok = await this.run(() =>
      this.redis.set(lockKey(orgId, keyHash), token, 'PX', ttlMs, 'NX'),
    );
    return ok === 'OK' ? token : undefined;
  }

  async unlock(orgId: string, keyHash: string, token: string): Promise<void> {
    await this.run(() => this.redis.eval(UNLOCK_SCRIPT, 1, lockKey(orgId, keyHash), token));
  }

  async claim(orgId: string, keyHash: string, ttlMs: number): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const reply = await this.run(() =>
      this.redis.idemClaim(cacheKey(orgId, keyHash), lockKey(orgId, keyHash), token, ttlMs),
    );
    if (typeof reply === 'string') {
      const id = Number(reply);
      // An unreadable cache entry counts as a miss: take the lock as if nothing was cached.
      if (Number.isSafeInteger(id) && id > 0) return { ticketId: id };
      const locked = await this.tryLock(orgId, keyHash, ttlMs);
      return locked === undefined ? 'busy' : { token: locked };
    }
    return reply === 1 ? { token } : 'busy';
  }

  async settle(orgId: string, keyHash: string, token: string, ticketId: number): Promise<void> {
    await this.run(() =>
      this.redis.idemSettle(
        cacheKey(orgId, keyHash),
        lockKey(orgId, keyHash),
        token,
        ticketId,
        this.cacheTtlMs,
      ),
    );
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      this.warn(err);
      throw err;
    }
  }

  private warn(err: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_INTERVAL_MS) return;
    this.lastWarnAt = now;
    this.logger.warn(
      { err },
      'Redis unavailable; idempotency falls back to the database unique key alone',
    );
  }
}

/** The same lock and cache in process memory: for the embedded mode (one process). */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  private readonly cache = new Map<string, { ticketId: number; expiresAt: number }>();
  private readonly locks = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly cacheTtlMs = DEFAULT_CACHE_TTL_MS,
    private readonly maxEntries = 100_000,
  ) {}

  async lookup(orgId: string, keyHash: string): Promise<number | undefined> {
    const key = cacheKey(orgId, keyHash);
    const entry = this.cache.get(key);
    if (entry && entry.expiresAt <= Date.now()) this.cache.delete(key);
    return entry && entry.expiresAt > Date.now() ? entry.ticketId : undefined;
  }

  async remember(orgId: string, keyHash: string, ticketId: number): Promise<void> {
    const key = cacheKey(orgId, keyHash);
    this.cache.delete(key);
    this.cache.set(key, { ticketId, expiresAt: Date.now() + this.cacheTtlMs });
    // Evict the oldest entries: a Map iterates in insertion order.
    for (const oldest of this.cache.keys()) {
      if (this.cache.size <= this.maxEntries) break;
      this.cache.delete(oldest);
    }
  }

  async tryLock(orgId: string, keyHash: string, ttlMs: number): Promise<string | undefined> {
    const key = lockKey(orgId, keyHash);
    const held = this.locks.get(key);
    if (held && held.expiresAt > Date.now()) return undefined;
    const token = randomUUID();
    this.locks.set(key, { token, expiresAt: Date.now() + ttlMs });
    return token;
  }

  async unlock(orgId: string, keyHash: string, token: string): Promise<void> {
    const key = lockKey(orgId, keyHash);
    if (this.locks.get(key)?.token === token) this.locks.delete(key);
  }

  async claim(orgId: string, keyHash: string, ttlMs: number): Promise<IdempotencyClaim> {
    const ticketId = await this.lookup(orgId, keyHash);
    if (ticketId !== undefined) return { ticketId };
    const token = await this.tryLock(orgId, keyHash, ttlMs);
    return token === undefined ? 'busy' : { token };
  }

  async settle(orgId: string, keyHash: string, token: string, ticketId: number): Promise<void> {
    await this.remember(orgId, keyHash, ticketId);
    await this.unlock(orgId, keyHash, token);
  }

  async close(): Promise<void> {
    this.cache.clear();
    this.locks.clear();
  }
}
