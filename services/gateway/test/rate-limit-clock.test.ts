// In-memory rate limits (embedded mode, and the insurance while Redis is unreachable) across
// wall-clock steps: a window is 60 s of the monotonic clock whatever Date.now() says.
import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { createLogger } from '@support-agent/shared';
import { limiterFactory } from '../src/data-access/rate-limit/limiter-factory.js';
import { SlidingWindowRequestLimiter } from '../src/data-access/rate-limit/request-limiter.js';
import { FixedWindowAuthThrottle } from '../src/data-access/rate-limit/auth-throttle.js';

const silent = createLogger('test', 'silent');
const HOUR = 3_600_000;

/** Moves the wall clock (Date.now) by `ms` from now on, as an NTP step would. */
function stepClock(ms: number): void {
  const real = Date.now.bind(Date);
  mock.method(Date, 'now', () => real() + ms);
}

afterEach(() => mock.restoreAll());

async function allowed(limiter: SlidingWindowRequestLimiter, n: number, key = 'k1') {
  let count = 0;
  for (let i = 0; i < n; i++) if ((await limiter.consume(key, 5, 'org1', 1000)).allowed) count++;
  return count;
}

describe('in-memory limits across wall-clock steps', () => {
  for (const [name, step] of [
    ['+1 h', HOUR],
    ['−1 h', -HOUR],
    ['+31 days', 31 * 24 * HOUR],
  ] as const) {
    it(`when the wall clock steps ${name} in the middle of a window, then the key still gets its limit once and Retry-After stays within the window`, async () => {
      const limiter = new SlidingWindowRequestLimiter(silent);
      assert.equal(await allowed(limiter, 3), 3);
      stepClock(step);
      assert.equal(await allowed(limiter, 10), 2, 'no fresh quota after the step');
      const refused = await limiter.consume('k1', 5, 'org1', 1000);
      assert.equal(refused.allowed, false);
      assert.ok(refused.retryAfter >= 1 && refused.retryAfter <= 60, `${refused.retryAfter}`);
    });
  }

  it('when the wall clock steps forward, then failed authentications stay throttled', async () => {
    const throttle = new FixedWindowAuthThrottle(limiterFactory(undefined), 3, silent);
    for (let i = 0; i < 3; i++) await throttle.recordFailure('10.0.0.1');
    assert.ok((await throttle.blockedFor('10.0.0.1')) !== undefined);
    stepClock(HOUR);
    await throttle.recordFailure('10.0.0.1');
    const blocked = await throttle.blockedFor('10.0.0.1');
    assert.ok(blocked !== undefined && blocked <= 60, `${blocked}`);
  });
});
