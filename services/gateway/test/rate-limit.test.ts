// Rate limits, failed-auth throttling and cross-replica visibility, with TWO gateway
// instances sharing the test MariaDB and Redis (as replicas do in production).
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startRedis } from '../../../test/support/backends.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { eventually } from '../../../test/support/testing.js';
import { AppError } from '@support-agent/shared';
import { generateApiKey } from '../src/domain/api-keys.js';
import { ReadAhead } from '../src/entry-points/http/rate-limit.js';
import { startFakeUpstreams, type FakeUpstreams } from './support/fake-upstreams.js';
import {
  admin,
  orgWithKey,
  request,
  requireEnv,
  startGateway,
  type TestGateway,
} from './support/gateway.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let upstreams: FakeUpstreams;
let a: TestGateway;
let b: TestGateway;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const search = (gw: TestGateway, key: string | undefined, headers: Record<string, string> = {}) =>
  request(`${gw.base}/api/v1/agent/kb/search?query=x`, { ...(key ? { key } : {}), headers });

before(async () => {
  db = await createTestDatabase('gwrl');
  upstreams = await startFakeUpstreams();
  const env = {
    MYSQL_URL: db.url,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    UPSTREAM: upstreams.address,
  };
  [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await upstreams?.stop();
  await db?.drop();
});

describe('per-key and per-organization limits', () => {
  it('when N+k requests arrive at once on two replicas with a per-key limit N, then exactly N pass', async () => {
    const N = 5;
    const { key } = await orgWithKey(a, ['kb:read'], { rate_limit_per_key_per_min: N });
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => search(i % 2 ? a : b, key)),
    );
    const passed = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    assert.equal(passed.length, N);
    assert.equal(limited.length, 16 - N);
    for (const r of limited) {
      assert.equal(r.json.error.code, 'rate_limited');
      const retryAfter = Number(r.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(r.headers.get('ratelimit-policy'), `"key";q=${N};w=60, "org";q=3000;w=60`);
      assert.equal(r.headers.get('ratelimit'), `"key";r=0;t=${retryAfter}`);
    }
    for (const r of passed) assert.match(r.headers.get('ratelimit') ?? '', /^"key";r=[0-4];t=\d+$/);
  });

  it('when requests pass, then RateLimit shows the remaining quota counting down across replicas', async () => {
    const { key } = await orgWithKey(a, ['kb:read'], { rate_limit_per_key_per_min: 10 });
    const first = await search(a, key);
    const second = await search(b, key);
    assert.match(first.headers.get('ratelimit') ?? '', /^"key";r=9;t=(59|60)$/);
    assert.match(second.headers.get('ratelimit') ?? '', /^"key";r=8;t=(59|60)$/);
    assert.equal(first.headers.get('ratelimit-policy'), '"key";q=10;w=60, "org";q=3000;w=60');
  });

  it('when several keys share an organization limit, then exactly that many pass and RateLimit names "org"', async () => {
    const { orgId, key: k1 } = await orgWithKey(a, ['kb:read'], { rate_limit_per_org_per_min: 4 });
    const k2 = (await admin(a, 'POST', `/orgs/${orgId}/keys`, { scopes: ['kb:read'] })).json
      .key as string;
    const results = await Promise.all(
      [k1, k2, k1, k2, k1, k2].map((k, i) => search(i < 3 ? a : b, k)),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 4);
    for (const r of results.filter((x) => x.status === 429)) {
      assert.match(r.headers.get('ratelimit') ?? '', /^"org";r=0;t=\d+$/);
    }
  });

  it("when one key exceeds its own limit, then its rejected requests do not spend the organization's budget", async () => {
    const { orgId, key: greedy } = await orgWithKey(a, ['kb:read'], {
      rate_limit_per_key_per_min: 3,
      rate_limit_per_org_per_min: 5,
    });
    const other = (await admin(a, 'POST', `/orgs/${orgId}/keys`, { scopes: ['kb:read'] })).json
      .key as string;
    const greedyResults = await Promise.all(
      Array.from({ length: 10 }, (_, i) => search(i % 2 ? a : b, greedy)),
    );
    assert.equal(greedyResults.filter((r) => r.status === 200).length, 3);
    // The organization has spent 3 of 5, not 10: the other key still gets the remaining 2.
    assert.equal((await search(a, other)).status, 200);
    assert.equal((await search(b, other)).status, 200);
    const limited = await search(a, other);
    assert.equal(limited.status, 429);
    assert.match(limited.headers.get('ratelimit') ?? '', /^"org";r=0;t=\d+$/);
  });

  it('when requests get 401 or 403, then they do not count; requests failing validation do', async () => {
    const { orgId } = await orgWithKey(a, ['faq:read'], { rate_limit_per_key_per_min: 3 });
    const kb = (await admin(a, 'POST', `/orgs/${orgId}/keys`, { scopes: ['kb:read'] })).json
      .key as string;
    for (let i = 0; i < 4; i++)
      assert.equal((await request(`${a.base}/api/agent/faq`, { key: kb })).status, 403);
    const invalid = await request(`${a.base}/api/agent/kb/search?limit=0&query=x`, { key: kb });
    assert.equal(invalid.status, 400);
    assert.match(invalid.headers.get('ratelimit') ?? '', /^"key";r=2;/);
    assert.equal((await search(b, kb)).status, 200);
    assert.equal((await search(a, kb)).status, 200);
    assert.equal((await search(b, kb)).status, 429);
  });
});

describe('reads started while the limit is counted', () => {
  it('when a key runs out, then refused reads get no data and, after the first refusal, are not sent upstream', async () => {
    const N = 3;
    const { orgId, key } = await orgWithKey(a, ['kb:read'], { rate_limit_per_key_per_min: N });
    const upstreamSearches = () => upstreams.calls.search.filter((c) => c.orgId === orgId).length;
    for (let i = 0; i < N; i++) assert.equal((await search(a, key)).status, 200);
    assert.equal(upstreamSearches(), N);
    // Started before its refusal was known: it reaches knowledge, its result is dropped.
    const first = await search(a, key);
    assert.equal(first.status, 429);
    assert.equal(first.json.error.code, 'rate_limited');
    assert.equal(first.json.results, undefined);
    // The 429 does not wait for the read it dropped, which may reach knowledge a moment later.
    await eventually(
      async () => upstreamSearches() === N + 1 || undefined,
      5_000,
      'the read started ahead to reach knowledge',
    );
    // From now on this replica waits for the count before reading, until the window resets.
    for (let i = 0; i < 5; i++) assert.equal((await search(a, key)).status, 429);
    // Over the limit an invalid read is still a 429, not a 400 (the contract's order).
    const invalid = await request(`${a.base}/api/v1/agent/kb/search?limit=0&query=x`, { key });
    assert.equal(invalid.status, 429);
    // Another organization's search, sent on the same channel after the refused ones: once it
    // has arrived, a refused read that had gone upstream would have arrived too.
    const bystander = await orgWithKey(a, ['kb:read']);
    assert.equal((await search(a, bystander.key)).status, 200);
    assert.equal(upstreamSearches(), N + 1);
  });

  it('when a refusal is older than its Retry-After, then reads start ahead again', () => {
    let now = 1_000_000;
    const readAhead = new ReadAhead(2, () => now);
    assert.equal(readAhead.allows('k1'), true);
    readAhead.record('k1', undefined);
    assert.equal(readAhead.allows('k1'), true);
    readAhead.record('k1', new AppError('rate_limited', 'x', { retryAfter: 7 }));
    assert.equal(readAhead.allows('k1'), false);
    now += 6_999;
    assert.equal(readAhead.allows('k1'), false);
    now += 1;
    assert.equal(readAhead.allows('k1'), true);
    // Bounded: the oldest refusal is forgotten first.
    for (const k of ['a', 'b', 'c'])
      readAhead.record(k, new AppError('rate_limited', 'x', { retryAfter: 60 }));
    assert.deepEqual(
      ['a', 'b', 'c'].map((k) => readAhead.allows(k)),
      [true, false, false],
    );
  });
});

describe('changes reach every replica within 1 s', () => {
  it('when a key is revoked on one replica, then another replica rejects it within 1 s', async () => {
    const { orgId, key, keyId } = await orgWithKey(a, ['kb:read']);
    assert.equal((await search(b, key)).status, 200); // warm b's cache
    const revoked = await admin(a, 'DELETE', `/orgs/${orgId}/keys/${keyId}`);
    assert.equal(revoked.status, 204);
    const t0 = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - t0 < 3000) {
      status = (await search(b, key)).status;
      if (status === 200) await sleep(20);
    }
    const elapsed = Date.now() - t0;
    assert.equal(status, 401);
    assert.ok(elapsed <= 1000, `revocation took ${elapsed} ms`);
  });

  it('when an organization limit changes on one replica, then another replica applies it within 1 s', async () => {
    const { orgId, key } = await orgWithKey(a, ['kb:read']);
    assert.match((await search(b, key)).headers.get('ratelimit-policy') ?? '', /^"key";q=600;/);
    await admin(a, 'PATCH', `/orgs/${orgId}/settings`, { rate_limit_per_key_per_min: 250 });
    const t0 = Date.now();
    let policy = '';
    while (!policy.startsWith('"key";q=250;') && Date.now() - t0 < 3000) {
      policy = (await search(b, key)).headers.get('ratelimit-policy') ?? '';
      if (!policy.startsWith('"key";q=250;')) await sleep(20);
    }
    const elapsed = Date.now() - t0;
    assert.equal(policy, '"key";q=250;w=60, "org";q=3000;w=60');
    assert.ok(elapsed <= 1000, `settings change took ${elapsed} ms`);
  });
});

describe('failed-authentication throttling per client IP', () => {
  let c: TestGateway;
  before(async () => {
    c = await startGateway({
      MYSQL_URL: db.url,
      UPSTREAM: upstreams.address,
      // A Redis database of its own: failed admin tokens sent from 127.0.0.1 by other suites
      // within the last minute would otherwise count against this gateway's budget of 3.
      REDIS_URL: `${requireEnv('TEST_REDIS_URL')}/9`,
      AUTH_FAILURES_PER_MIN_PER_IP: '3',
      TRUST_PROXY: 'true',
    });
  });
  after(() => c?.stop());

  it('when an IP exceeds its failed authentications, then it gets 429 except with a valid key', async () => {
    const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const from = (addr: string) => ({ 'x-forwarded-for': addr });
    const { key } = await orgWithKey(c, ['kb:read']);
    for (let i = 0; i < 3; i++) assert.equal((await search(c, 'wrong', from(ip))).status, 401);

    const blocked = await search(c, 'wrong', from(ip));
    assert.equal(blocked.status, 429);
    assert.equal(blocked.json.error.code, 'rate_limited');
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    assert.equal((await search(c, undefined, from(ip))).status, 429);
    assert.equal((await search(c, generateApiKey(), from(ip))).status, 429);

    assert.equal((await search(c, key, from(ip))).status, 200, 'a valid key is never throttled');
    assert.equal(
      (await search(c, 'wrong', from('10.255.255.254'))).status,
      401,
      'other IPs are unaffected',
    );
  });
});

describe('Redis outage', () => {
  it('when Redis goes away, then requests are still served with per-replica in-memory limits', async () => {
    // A redis-server of this test's own: stopping it affects nobody else.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-redis-'));
    const redis = await startRedis(dir);
    let d: TestGateway | undefined;
    try {
      d = await startGateway({
        MYSQL_URL: db.url,
        REDIS_URL: redis.url,
        UPSTREAM: upstreams.address,
      });
      const { key } = await orgWithKey(d, ['kb:read'], { rate_limit_per_key_per_min: 3 });
      const up = await search(d, key);
      assert.equal(up.status, 200);
      assert.match(up.headers.get('ratelimit') ?? '', /^"key";r=2;/);

      redis.kill('SIGKILL'); // a crash, not a shutdown
      await redis.stop();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await search(d, key);
        statuses.push(res.status);
        assert.match(res.headers.get('ratelimit') ?? '', /^"key";r=\d+;t=\d+$/);
      }
      // The in-memory insurance limiter starts its own window: 3 pass, then 429.
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.equal((await request(`${d.base}/readyz`)).status, 503);
      const ready = await admin(d, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.match(ready.json.checks.redis, /^failed/);
    } finally {
      await d?.stop();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
