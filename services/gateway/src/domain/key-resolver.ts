import { hashApiKey, hashesEqual } from './api-keys.js';
import type { KeyGrant } from './model.js';
import type { GatewayStore } from './ports.js';

interface CacheEntry {
  grant: KeyGrant | undefined;
  expiresAt: number;
}

/**
 * Resolves a plain API key to its grant (key + org settings) through a short-lived cache.
 * The TTL bounds how stale a replica can be: a revocation or a settings change made on any
 * replica is seen by every replica within the TTL (≤ 1 s by configuration). Unknown and
 * revoked keys are cached too, so a flood of bad keys costs one lookup per TTL per key.
 *
 * Refresh-ahead: a key used in the second half of its entry's life is looked up again in
 * the background while the cached grant keeps being served (never past its expiry), so a
 * busy key is not waited for on the request path every TTL (that wait, a store round trip
 * every 500 ms, was the gateway's p99 at moderate load). The staleness bound is unchanged.
 */
/**
 * When the store does not answer a key lookup within STORE_WAIT_MS (MySQL down, silent behind
 * a blackhole, or slow), a key seen within STALE_MAX_MS keeps its last known grant: requests of
 * known keys go on (searches, FAQ, answers need no MySQL of the gateway's) instead of waiting
 * for the store. A revocation cannot be read from a store that does not answer anyway; it
 * applies within the TTL of the first lookup that succeeds again.
 */
export const STORE_WAIT_MS = 300;
export const STALE_MAX_MS = 10 * 60_000;

export class KeyResolver {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<KeyGrant | undefined>>();

  constructor(
    private readonly store: GatewayStore,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
    private readonly storeWaitMs = STORE_WAIT_MS,
  ) {}

  /**
   * A fresh positive cache entry for this key, without waiting for any I/O (an entry past
   * half its life starts a background refresh).
   */
  cachedGrant(key: string): KeyGrant | undefined {
    const hash = hashApiKey(key);
    const entry = this.cache.get(hash);
    const now = this.now();
    if (!entry || entry.expiresAt <= now) return undefined;
    if (entry.expiresAt - now < this.ttlMs / 2 && !this.inFlight.has(hash)) {
      // Failures are left to the next request: the entry expires and resolve() looks up.
      this.lookupOnce(hash).catch(() => undefined);
    }
    return entry.grant;
  }

  /** The key's grant, or undefined when the key is unknown or revoked. */
  async resolve(key: string): Promise<KeyGrant | undefined> {
    const hash = hashApiKey(key);
    const entry = this.cache.get(hash);
    const now = this.now();
    if (entry && entry.expiresAt > now) return entry.grant;
    const fresh = this.lookupOnce(hash);
    if (!entry?.grant || entry.expiresAt + STALE_MAX_MS <= now) return fresh;
    // A known key: its last grant if the store is silent or failing.
    const stale = entry.grant;
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<KeyGrant>((resolve) => {
      timer = setTimeout(() => resolve(stale), this.storeWaitMs);
    });
    try {
      return await Promise.race([fresh.catch(() => stale), silent]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One store lookup per key at a time, however many requests arrive together. */
  private lookupOnce(hash: string): Promise<KeyGrant | undefined> {
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.lookup(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    return pending;
  }

  private async lookup(hash: string): Promise<KeyGrant | undefined> {
    const found = await this.store.findKeyByHash(hash);
    const grant =
      found && found.key.revokedAt === null && hashesEqual(found.key.keyHash, hash)
        ? found
        : undefined;
    if (this.ttlMs > 0) {
      this.cache.delete(hash);
      this.cache.set(hash, { grant, expiresAt: this.now() + this.ttlMs });
      this.evict();
    }
    return grant;
  }

  private evict(): void {
    const now = this.now();
    for (const [hash, entry] of this.cache) {
      if (this.cache.size <= this.maxEntries && entry.expiresAt + STALE_MAX_MS > now) break;
      this.cache.delete(hash);
    }
  }
}
