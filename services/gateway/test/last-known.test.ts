// LastKnown: an upstream that is silent or failing answers with its last known value for a key
// seen before, within the wait; a key never seen waits for (and fails with) the upstream.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LastKnown } from '../src/domain/last-known.js';

const never = () => new Promise<string>(() => undefined);

test('when the upstream is silent or failing, then a key answered before gets its last value within the wait', async () => {
  const cache = new LastKnown<string>(20);
  assert.equal(await cache.get('acme', async () => 'week 1'), 'week 1');
  const t0 = Date.now();
  assert.equal(await cache.get('acme', never), 'week 1');
  assert.ok(Date.now() - t0 < 1_000);
  assert.equal(
    await cache.get('acme', async () => {
      throw new Error('unavailable');
    }),
    'week 1',
  );
  assert.equal(await cache.get('acme', async () => 'week 2'), 'week 2', 'a fresh answer wins');
  await assert.rejects(
    cache.get('other', async () => {
      throw new Error('unavailable');
    }),
    /unavailable/,
  );
});
