// Wrong admin tokens are throttled per client IP like wrong API keys: over the budget the IP
// gets 429 with Retry-After (the right token included, so guessing learns nothing), while the
// right token still works from another address. Embedded store: in-memory counters of its own.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { stopAll } from '../../../test/support/testing.js';
import {
  startGateway,
  startGatewayBackends,
  type GatewayBackends,
  type TestGateway,
} from './support/gateway.js';

const BUDGET = 5;

let backends: GatewayBackends;
let gw: TestGateway;

/** GET /admin/v1/orgs with `token`, sent from the loopback address `from`. */
function adminGet(
  token: string,
  from: string,
): Promise<{ status: number; retryAfter?: string; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${gw.adminBase}/admin/v1/orgs`,
      { localAddress: from, headers: { authorization: `Bearer ${token}` }, agent: false },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ...(res.headers['retry-after'] ? { retryAfter: res.headers['retry-after'] } : {}),
            body: JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', reject);
  });
}

before(async () => {
  backends = await startGatewayBackends('gwadminthrottle', { embedded: true });
  gw = await startGateway({ ...backends.env, AUTH_FAILURES_PER_MIN_PER_IP: String(BUDGET) });
});

after(() => stopAll(gw, backends));

describe('admin token guessing', () => {
  it(`when one IP sends more than ${BUDGET} wrong admin tokens, then it gets 429 with Retry-After, and the right token still works from another IP`, async () => {
    const right = gw.handle.adminToken;
    assert.equal((await adminGet(right, '127.0.0.1')).status, 200);
    for (let i = 0; i < BUDGET; i++) {
      const res = await adminGet(`wrong-token-${i}`, '127.0.0.1');
      assert.equal(res.status, 401, JSON.stringify(res.body));
    }
    for (let i = 0; i < 20; i++) {
      const res = await adminGet(`wrong-token-again-${i}`, '127.0.0.1');
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'rate_limited');
      assert.ok(Number(res.retryAfter) >= 1 && Number(res.retryAfter) <= 60, res.retryAfter);
    }
    // From the throttled address even the right token waits: a guess cannot be confirmed.
    assert.equal((await adminGet(right, '127.0.0.1')).status, 429);
    // Another address is not affected.
    assert.equal((await adminGet(right, '127.0.0.2')).status, 200);
    assert.equal((await adminGet('wrong-from-elsewhere', '127.0.0.2')).status, 401);
  });
});
