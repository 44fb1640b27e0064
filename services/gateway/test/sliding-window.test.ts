// Sliding-window limits: no key gets more than its quota in ANY window, across the edge where a
// fixed window would start over. The Redis script runs against the test Redis with a short
// window; the in-memory logs (embedded mode, the insurance) on a mocked monotonic clock.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it, mock } from 'node:test';
import { Redis } from 'ioredis';
import {
  defineSlidingWindowScript,
  MemorySlidingWindow,
  type SlidingWindowRedis,
} from '../src/data-access/rate-limit/sliding-window.js';
import { requireEnv } from './support/gateway.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The most allowed times found in any `windowMs` interval. */
function busiestWindow(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j]! - times[i]! >= windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

describe('sliding window in Redis (one script for the key and the organization)', () => {
  let redis: SlidingWindowRedis;
  before(() => {
    redis = defineSlidingWindowScript(new Redis(requireEnv('TEST_REDIS_URL')));
  });
  after(() => redis?.quit());

  it('when a quota is used late in one window and again just after it, then no window of its length holds more than the quota', async () => {
    const key = `rlw:test:${randomUUID()}`;
    const allowedAt: number[] = [];
    const hit = async () => {
      const [allowed] = await redis.rlSlidingKeyAndOrg(key, `${key}:org`, 2_000, 3, 1_000, 1);
      if (allowed === 1) allowedAt.push(Date.now());
      return allowed === 1;
    };
    assert.equal(await hit(), true);
    const first = Date.now(); // Redis logged the first request before this
    await sleep(1_000);
    assert.deepEqual([await hit(), await hit()], [true, true]);
    await sleep(first + 2_300 - Date.now());
    // The first request left the window; the two at 1 s have not: one slot, not a fresh three
    // (a fixed window that began with the first request would hand out three here).
    const burst = [];
    for (let i = 0; i < 5; i++) burst.push(await hit());
    assert.deepEqual(burst, [true, false, false, false, false]);
    assert.ok(busiestWindow(allowedAt, 2_000 - 30) <= 3, `${allowedAt.map((t) => t - first)}`);
  });

  it('when a request is refused, then it is not counted and Retry-After is the time until the oldest leaves', async () => {
    const key = `rlw:test:${randomUUID()}`;
    for (let i = 0; i < 2; i++)
      assert.equal((await redis.rlSlidingKeyAndOrg(key, `${key}:org`, 5_000, 2, 1_000, 1))[0], 1);
    const [allowed, count, resetMs] = await redis.rlSlidingKeyAndOrg(
      key,
      `${key}:org`,
      5_000,
      2,
      1_000,
      1,
    );
    assert.deepEqual([allowed, count], [0, 2]);
    assert.ok(resetMs! > 4_000 && resetMs! <= 5_000, `${resetMs}`);
    assert.equal(await redis.zcard(key), 2);
    assert.equal(await redis.exists(`${key}:org`), 1, 'the organization counted the two allowed');
    assert.equal(await redis.zcard(`${key}:org`), 2, 'and not the refused one');
  });

  it('when a call costs N (an MCP batch), then N are logged if all fit and none otherwise', async () => {
    const key = `rlw:test:${randomUUID()}`;
    const call = (cost: number) =>
      redis.rlSlidingKeyAndOrg(key, `${key}:org`, 5_000, 10, 1_000, cost);
    assert.deepEqual((await call(7)).slice(0, 2), [1, 7]);
    assert.deepEqual((await call(4)).slice(0, 2), [0, 7], 'four do not fit in the three left');
    assert.deepEqual((await call(3)).slice(0, 2), [1, 10]);
    assert.equal(await redis.zcard(key), 10);
  });
});

describe('sliding window in memory (monotonic clock)', () => {
  let now = 0;
  afterEach(() => mock.restoreAll());

  it('when a quota is used across the minute where a fixed window would start over, then only the slots that aged out pass', () => {
    mock.method(performance, 'now', () => now);
    const log = new MemorySlidingWindow(60_000);
    now = 0;
    assert.equal(log.hit('k', 5).allowed, true);
    now = 59_000;
    for (let i = 0; i < 4; i++) assert.equal(log.hit('k', 5).allowed, true);
    now = 60_500; // a fixed window that began at 0 would hand out 5 more here
    const burst = Array.from({ length: 5 }, () => log.hit('k', 5).allowed);
    assert.deepEqual(burst, [true, false, false, false, false]);
    const refused = log.hit('k', 5);
    assert.equal(refused.resetMs, 58_500, 'until the requests of 59 s are 60 s old');
    now = 119_001;
    assert.equal(log.hit('k', 5).allowed, true);
    log.close();
  });
});
