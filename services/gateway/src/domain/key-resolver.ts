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
export class KeyResolver {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<KeyGrant | undefined>>();

  constructor(
    private readonly store: GatewayStore,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
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
    if (entry && entry.expiresAt > this.now()) return entry.grant;

    return this.lookupOnce(hash);
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
      if (this.cache.size <= this.maxEntries && entry.expiresAt > now) break;
      this.cache.delete(hash);
    }
  }
}
