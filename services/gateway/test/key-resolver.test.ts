// KeyResolver: the cache bounds staleness to its TTL, shares lookups, and refreshes a busy
// key ahead of expiry in the background instead of making a request wait for the store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashApiKey } from '../src/domain/api-keys.js';
import { KeyResolver } from '../src/domain/key-resolver.js';
import type { KeyGrant } from '../src/domain/model.js';
import type { GatewayStore } from '../src/domain/ports.js';

const KEY = 'sak_live_example_key_for_the_cache_test';

/** The one store method the resolver uses; lookups are counted and can be held open. */
function storeWith(grant: () => KeyGrant | undefined) {
  const calls: Array<() => void> = [];
  let hold = false;
  const store = {
    lookups: 0,
    findKeyByHash: async (hash: string) => {
      store.lookups++;
      if (hold) await new Promise<void>((release) => calls.push(release));
      const g = grant();
      return g && g.key.keyHash === hash ? g : undefined;
    },
    hold: () => (hold = true),
    releaseAll: () => {
      hold = false;
      for (const release of calls.splice(0)) release();
    },
  };
  return store;
}

function grantFor(revokedAt: Date | null = null): KeyGrant {
  return {
    key: {
      id: 'key-1',
      orgId: 'acme',
      name: null,
      keyHash: hashApiKey(KEY),
      prefix: KEY.slice(0, 12),
      scopes: ['kb:read'],
      createdAt: new Date(0),
      revokedAt,
    },
    settings: {} as KeyGrant['settings'],
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test('when a cached key is used in the first half of its TTL, then no lookup happens', async () => {
  let now = 0;
  const store = storeWith(() => grantFor());
  const resolver = new KeyResolver(store as unknown as GatewayStore, 1000, 100, () => now);
  assert.equal((await resolver.resolve(KEY))?.key.id, 'key-1');
  now = 499;
  assert.equal(resolver.cachedGrant(KEY)?.key.id, 'key-1');
  await tick();
  assert.equal(store.lookups, 1);
});

test('when a cached key is used in the second half of its TTL, then it is served at once and refreshed once in the background', async () => {
  let now = 0;
  const store = storeWith(() => grantFor());
  const resolver = new KeyResolver(store as unknown as GatewayStore, 1000, 100, () => now);
  await resolver.resolve(KEY);
  now = 600;
  store.hold();
  for (let i = 0; i < 5; i++) assert.equal(resolver.cachedGrant(KEY)?.key.id, 'key-1');
  assert.equal(store.lookups, 2, 'one background lookup for five uses');
  store.releaseAll();
  await tick();
  // The refreshed entry lives a full TTL from the refresh: still served at 1,500 ms.
  now = 1500;
  assert.equal(resolver.cachedGrant(KEY)?.key.id, 'key-1');
});

test('when the key was revoked, then the refresh drops it and it is never served past its TTL', async () => {
  let now = 0;
  let revoked = false;
  const store = storeWith(() => grantFor(revoked ? new Date(1) : null));
  const resolver = new KeyResolver(store as unknown as GatewayStore, 1000, 100, () => now);
  await resolver.resolve(KEY);
  revoked = true;
  now = 700;
  store.hold();
  assert.equal(
    resolver.cachedGrant(KEY)?.key.id,
    'key-1',
    'within the TTL: still the cached grant',
  );
  // The refresh has not answered yet (store slow): at the TTL the entry is no longer served.
  now = 1000;
  assert.equal(resolver.cachedGrant(KEY), undefined);
  store.releaseAll();
  await tick();
  assert.equal(resolver.cachedGrant(KEY), undefined);
  assert.equal(await resolver.resolve(KEY), undefined);
});

test('when the background refresh fails, then nothing is thrown and the next expired use looks up again', async () => {
  let now = 0;
  let failing = false;
  const store = storeWith(() => {
    if (failing) throw new Error('store down');
    return grantFor();
  });
  const resolver = new KeyResolver(store as unknown as GatewayStore, 1000, 100, () => now);
  await resolver.resolve(KEY);
  failing = true;
  now = 800;
  assert.equal(resolver.cachedGrant(KEY)?.key.id, 'key-1');
  await tick();
  failing = false;
  now = 1001;
  assert.equal(resolver.cachedGrant(KEY), undefined);
  assert.equal((await resolver.resolve(KEY))?.key.id, 'key-1');
  assert.equal(store.lookups, 3);
});

test('when the store is silent or failing, then a key seen before keeps its last grant and an unknown key still waits for the store', async () => {
  let now = 0;
  let failing = false;
  const store = storeWith(() => {
    if (failing) throw new Error('store down');
    return grantFor();
  });
  const resolver = new KeyResolver(store as unknown as GatewayStore, 1000, 100, () => now, 20);
  await resolver.resolve(KEY);
  now = 60_000;
  store.hold(); // silent: the lookup never answers
  assert.equal((await resolver.resolve(KEY))?.key.id, 'key-1', 'stale grant after the wait');
  let unknownDone = false;
  const unknown = resolver.resolve('sak_live_never_seen_key').then(() => (unknownDone = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(unknownDone, false, 'an unknown key is not granted without the store');
  store.releaseAll();
  await unknown;
  failing = true;
  now = 120_000;
  assert.equal((await resolver.resolve(KEY))?.key.id, 'key-1', 'stale grant on a store error');
  failing = false;
  now = 60 * 60_000;
  store.hold();
  const late = resolver.resolve(KEY);
  let lateDone = false;
  void late.then(() => (lateDone = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(lateDone, false, 'past the stale limit the store is waited for');
  store.releaseAll();
  assert.equal((await late)?.key.id, 'key-1');
});
