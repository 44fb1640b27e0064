// Text that cannot be passed on unchanged is refused wherever it enters the gateway: a lone
// UTF-16 surrogate (the JSON escape "\ud800" without its pair) in a JSON body, MCP tool
// arguments, the admin API or a KB import, and an invalid percent-encoded sequence (such as an
// encoded surrogate, %ED%A0%80) in a query string or path. Each is a 400 naming the field,
// and nothing reaches the upstream services. Real MariaDB and Redis, canned upstreams.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toolCall } from '../../../test/support/mcp.js';
import { stopAll } from '../../../test/support/testing.js';
import {
  admin,
  assertError,
  orgWithKey,
  request,
  startGateway,
  startGatewayBackends,
  type GatewayBackends,
  type HttpResult,
  type TestGateway,
} from './support/gateway.js';

let backends: GatewayBackends;
let gw: TestGateway;
let key: string;
let orgId: string;

/** Runs `fn` and asserts no upstream call happened meanwhile. */
async function withoutUpstream(fn: () => Promise<HttpResult>): Promise<HttpResult> {
  const before = backends.upstreams.totalCalls();
  const result = await fn();
  assert.equal(backends.upstreams.totalCalls(), before, 'the upstream must not be called');
  return result;
}

// JSON.stringify writes a lone surrogate as the 6-character escape, so the body is plain ASCII
// (a string body with the surrogate itself would be sent as U+FFFD by fetch).
const jsonOf = (value: unknown) => JSON.stringify(value);
const agent = (path: string, opts: Parameters<typeof request>[1] = {}) =>
  request(`${gw.base}/api/v1/agent${path}`, { key, ...opts });

before(async () => {
  backends = await startGatewayBackends('gwtext');
  gw = await startGateway(backends.env);
  ({ key, orgId } = await orgWithKey(gw));
});

after(() => stopAll(gw, backends));

describe('text with lone surrogates or invalid percent-encoding', () => {
  it('when a ticket body holds an escaped lone surrogate, then 400 names the field and nothing is created', async () => {
    for (const [field, body] of [
      ['content', { content: 'export fails \ud800' }],
      ['content', { content: 'export fails \udfff here' }],
      ['idempotencyKey', { content: 'export fails', idempotencyKey: 'k-\ud800' }],
      ['metadata.note', { content: 'export fails', metadata: { note: '\udc00' } }],
    ] as const) {
      const res = await withoutUpstream(() =>
        agent('/tickets', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: jsonOf(body),
        }),
      );
      assertError(res, 400, 'invalid_request', field);
      assert.match(res.json.error.message, /lone UTF-16 surrogate/);
    }
  });

  it('when a surrogate pair (an emoji) is escaped, then it is accepted as text', async () => {
    const res = await agent('/tickets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"content":"export fails \\ud83d\\ude00"}',
    });
    assert.equal(res.status, 201, res.text);
  });

  it('when a query parameter holds an encoded lone surrogate or invalid UTF-8, then 400 names it', async () => {
    for (const q of ['%ED%A0%80', 'abc%ED%BF%BF', '%FF', '%C3']) {
      const res = await withoutUpstream(() => agent(`/kb/search?query=${q}`));
      assertError(res, 400, 'invalid_request', 'query');
    }
    // Well-formed UTF-8 (é, 😀) still passes.
    assert.equal((await agent('/kb/search?query=caf%C3%A9%20%F0%9F%98%80')).status, 200);
  });

  it('when a path holds an encoded lone surrogate, then 400 names the path', async () => {
    const res = await withoutUpstream(() =>
      request(`${gw.adminBase}/admin/v1/orgs/${orgId}%ED%A0%80/keys`, {
        headers: { authorization: `Bearer ${gw.handle.adminToken}` },
      }),
    );
    assertError(res, 400, 'invalid_request', 'path');
  });

  it('when an MCP tool argument holds a lone surrogate, then the request is refused with 400 before any call runs', async () => {
    const res = await withoutUpstream(() =>
      request(`${gw.base}/api/mcp`, {
        method: 'POST',
        key,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: jsonOf(toolCall('create_ticket', { content: 'export fails \ud800' }, 1)),
      }),
    );
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /params\.arguments\.content/);
    assert.equal(res.json.error.data.error.param, 'params.arguments.content');
  });

  it('when an admin body holds a lone surrogate, then 400 names the field and nothing changes', async () => {
    const res = await admin(gw, 'POST', '/orgs', { name: 'Org \ud800', id: 'surrogate-org' });
    assertError(res, 400, 'invalid_request', 'name');
    const orgs = (await admin(gw, 'GET', '/orgs')).json.orgs as Array<{ id: string }>;
    assert.ok(!orgs.some((o) => o.id === 'surrogate-org'));
  });

  it('when a KB import holds a lone surrogate, then the whole import is refused with 400 naming the entry and field', async () => {
    const entries = [
      { id: 'a', question: 'How?', answer: 'Like this.' },
      { id: 'b', question: 'Why \udfff?', answer: 'Because.' },
    ];
    const headers = { authorization: `Bearer ${gw.handle.adminToken}` };
    const url = `${gw.adminBase}/admin/v1/orgs/${orgId}/kb/entries`;
    const asArray = await withoutUpstream(() =>
      request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: jsonOf(entries),
      }),
    );
    assertError(asArray, 400, 'invalid_request', 'question');
    assert.match(asArray.json.error.message, /^entry 2: question/);
    const asLines = await withoutUpstream(() =>
      request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-ndjson' },
        body: entries.map(jsonOf).join('\n'),
      }),
    );
    assertError(asLines, 400, 'invalid_request', 'question');
    assert.match(asLines.json.error.message, /^line 2: question/);
  });
});
