// End-to-end: exact per-key rate limits across two gateway processes sharing Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Stack, api } from '../support/stack.js';

let stack: Stack;

before(async () => {
  stack = await Stack.onTestBackends('e2e-rl', {
    nats: 'shared',
    services: ['tickets'],
    gateways: 2,
  });
});

after(() => stack?.stop());

test('when N+k requests race across two gateways with a per-key limit of N, then exactly N pass and k get 429 with Retry-After', async () => {
  const N = 40;
  const k = 25;
  const key = await stack.orgWithKey('rl-exact', undefined, { rate_limit_per_key_per_min: N });
  const results = await Promise.all(
    Array.from({ length: N + k }, (_, i) =>
      api(stack.baseUrl(i % 2), 'GET', '/api/v1/agent/tickets?limit=1', { key }),
    ),
  );
  const passed = results.filter((r) => r.status === 200);
  const limited = results.filter((r) => r.status === 429);
  assert.equal(passed.length, N);
  assert.equal(limited.length, k);
  for (const r of limited) {
    assert.equal(r.json.error.code, 'rate_limited');
    const retryAfter = Number(r.headers.get('retry-after'));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
      `Retry-After ${retryAfter}`,
    );
  }
  const sample = passed[0]!;
  assert.equal(sample.headers.get('ratelimit-policy'), `"key";q=${N};w=60, "org";q=3000;w=60`);
  assert.match(sample.headers.get('ratelimit') ?? '', /^"key";r=\d+;t=\d+$/);
});

test('when the per-organization limit is lower, then it applies across all keys of the organization', async () => {
  const key1 = await stack.orgWithKey('rl-org', undefined, { rate_limit_per_org_per_min: 10 });
  const key2 = await stack.keyFor('rl-org');
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      api(stack.baseUrl(i % 2), 'GET', '/api/v1/agent/tickets?limit=1', {
        key: i % 3 ? key1 : key2,
      }),
    ),
  );
  assert.equal(results.filter((r) => r.status === 200).length, 10);
  assert.equal(results.filter((r) => r.status === 429).length, 6);
  const limited = results.find((r) => r.status === 429)!;
  assert.match(limited.headers.get('ratelimit') ?? '', /^"org";r=0;t=\d+$/);
});

test('when requests fail validation, then they still count against the limit', async () => {
  const key = await stack.orgWithKey('rl-invalid', undefined, { rate_limit_per_key_per_min: 3 });
  for (let i = 0; i < 3; i++)
    assert.equal(
      (await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?limit=abc', { key })).status,
      400,
    );
  assert.equal((await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key })).status, 429);
});

test('when a setting changes, then every gateway applies it within a second', async () => {
  const key = await stack.orgWithKey('rl-settings', undefined, { rate_limit_per_key_per_min: 2 });
  await api(stack.baseUrl(1), 'GET', '/api/v1/agent/tickets', { key });
  await stack.admin('PATCH', '/admin/v1/orgs/rl-settings/settings', {
    rate_limit_per_key_per_min: 500,
  });
  await new Promise((r) => setTimeout(r, 1_000));
  const res = await api(stack.baseUrl(1), 'GET', '/api/v1/agent/tickets', { key });
  assert.equal(res.headers.get('ratelimit-policy'), '"key";q=500;w=60, "org";q=3000;w=60');
});
