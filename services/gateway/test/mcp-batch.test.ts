// MCP JSON-RPC batches cost one request per message against every limit: counted before any
// message runs, the whole batch refused (429) when the key or the organization has fewer left.
// Protocol versions from 2025-06-18 (which removed batching) get 400 / -32600, as do batches of
// more than 100 messages. Real MariaDB and Redis, canned upstreams.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toolCall } from '../../../test/support/mcp.js';
import { stopAll } from '../../../test/support/testing.js';
import {
  admin,
  orgWithKey,
  request,
  startGateway,
  startGatewayBackends,
  type GatewayBackends,
  type TestGateway,
} from './support/gateway.js';

let backends: GatewayBackends;
let gw: TestGateway;

function rpc(key: string, body: unknown, version?: string) {
  return request(`${gw.base}/api/mcp`, {
    method: 'POST',
    key,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(version ? { 'mcp-protocol-version': version } : {}),
    },
    body: JSON.stringify(body),
  });
}

const searches = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) =>
    toolCall('search_knowledge_base', { query: 'password' }, from + i),
  );

before(async () => {
  backends = await startGatewayBackends('gwmcpbatch');
  gw = await startGateway(backends.env);
});

after(() => stopAll(gw, backends));

describe('MCP batches and the rate limits', () => {
  it('when a batch of N tool calls is sent (protocol 2025-03-26), then it costs N and runs when N are left', async () => {
    const { key } = await orgWithKey(gw, undefined, { rate_limit_per_key_per_min: 10 });
    const before = backends.upstreams.totalCalls();
    const ok = await rpc(key, searches(4), '2025-03-26');
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.length, 4);
    assert.equal(backends.upstreams.totalCalls() - before, 4);
    assert.match(ok.headers.get('ratelimit') ?? '', /^"key";r=6;/);
    // Without the header the transport assumes 2025-03-26: batches allowed, counted the same.
    const again = await rpc(key, searches(5));
    assert.equal(again.status, 200, again.text);
    assert.match(again.headers.get('ratelimit') ?? '', /^"key";r=1;/);
  });

  it('when a batch needs more than the key has left, then the whole batch is refused with 429 and nothing runs', async () => {
    const { key } = await orgWithKey(gw, undefined, { rate_limit_per_key_per_min: 3 });
    const before = backends.upstreams.totalCalls();
    // The probe's case: 3 requests a minute, batches of 100 calls.
    for (let i = 0; i < 3; i++) {
      const res = await rpc(key, searches(100), '2025-03-26');
      assert.equal(res.status, 429, res.text);
      assert.equal(res.json.error.code, 'rate_limited');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    assert.equal(backends.upstreams.totalCalls(), before, 'no call of a refused batch ran');
    // Refused requests are not counted (sliding windows): the key's 3 are still there.
    const small = await rpc(key, searches(3), '2025-03-26');
    assert.equal(small.status, 200, small.text);
    assert.equal(backends.upstreams.totalCalls() - before, 3);
    const more = await rpc(key, searches(1), '2025-03-26');
    assert.equal(more.status, 429, 'three in the last 60 s: the key is at its limit');
  });

  it("when the organization's limit is shared by two keys, then batches count against it too", async () => {
    const { orgId, key } = await orgWithKey(gw, undefined, {
      rate_limit_per_key_per_min: 100,
      rate_limit_per_org_per_min: 8,
    });
    const other = await admin(gw, 'POST', `/orgs/${orgId}/keys`, {
      scopes: ['kb:read'],
      name: 'second',
    });
    assert.equal((await rpc(key, searches(5), '2025-03-26')).status, 200);
    const res = await rpc(other.json.key as string, searches(5), '2025-03-26');
    assert.equal(res.status, 429, res.text);
    assert.match(res.headers.get('ratelimit') ?? '', /^"org";r=0;/);
  });

  it('when a batch is sent with protocol 2025-06-18 or later, or holds more than 100 messages, then 400 with -32600 and nothing runs', async () => {
    const { key } = await orgWithKey(gw, undefined, { rate_limit_per_key_per_min: 1000 });
    const before = backends.upstreams.totalCalls();
    for (const version of ['2025-06-18', '2025-11-25']) {
      const res = await rpc(key, searches(2), version);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.error.code, -32600);
      assert.match(res.json.error.message, /batches are not part of MCP protocol version/);
    }
    const big = await rpc(key, searches(101), '2025-03-26');
    assert.equal(big.status, 400, big.text);
    assert.equal(big.json.error.code, -32600);
    assert.equal(backends.upstreams.totalCalls(), before);
    // A single message under the new protocol still works.
    const single = await rpc(
      key,
      toolCall('search_knowledge_base', { query: 'x' }, 1),
      '2025-06-18',
    );
    assert.equal(single.status, 200, single.text);
  });
});
